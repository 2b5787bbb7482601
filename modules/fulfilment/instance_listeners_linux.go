package fulfilment

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// otherListeners returns the processes other than this one that listen on
// addr over TCP (an unspecified address on either side overlaps every
// address), each described as "pid N", or by its socket when this user
// cannot see its owner. It reads the kernel's socket tables in /proc/net
// and the open sockets in /proc/<pid>/fd.
func otherListeners(addr listenAddress) ([]string, error) {
	var want net.IP
	if addr.Host != "" {
		if want = net.ParseIP(addr.Host); want == nil {
			ips, err := net.LookupIP(addr.Host)
			if err != nil {
				return nil, fmt.Errorf("resolving %s: %w", addr.Host, err)
			}
			if len(ips) == 0 {
				return nil, fmt.Errorf("%s resolves to no address", addr.Host)
			}
			want = ips[0]
		}
	}
	var inodes []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		found, err := listeningInodes(table, want, addr.Port)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		inodes = append(inodes, found...)
	}
	if len(inodes) == 0 {
		return nil, nil
	}
	own, err := socketInodes("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("reading this process's sockets: %w", err)
	}
	var foreign []string
	for _, ino := range inodes {
		if !own[ino] {
			foreign = append(foreign, ino)
		}
	}
	if len(foreign) == 0 {
		return nil, nil
	}
	owners := socketOwners(foreign)
	var out []string
	for _, ino := range foreign {
		if pid, ok := owners[ino]; ok {
			out = append(out, "pid "+pid)
		} else {
			out = append(out, "socket inode "+ino+", owner not visible to this user")
		}
	}
	return out, nil
}

// listeningInodes returns the inodes of the sockets in LISTEN state on port
// whose address overlaps want (nil: any) in a /proc/net/tcp{,6} table.
func listeningInodes(table string, want net.IP, port uint) ([]string, error) {
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		ip, p, err := parseProcAddr(fields[1])
		if err != nil || p != port {
			continue
		}
		if want == nil || ip.IsUnspecified() || want.IsUnspecified() || ip.Equal(want) {
			out = append(out, fields[9])
		}
	}
	return out, sc.Err()
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): the address is in the kernel's byte order, 32-bit words in host
// order (little-endian on the platforms Caddy runs on).
func parseProcAddr(s string) (net.IP, uint, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("no port in %q", s)
	}
	b, err := hex.DecodeString(hexIP)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, 0, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	p, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("bad port in %q", s)
	}
	return net.IP(b), uint(p), nil
}

// socketInodes returns the inodes of the sockets open in an fd directory.
func socketInodes(fdDir string) (map[string]bool, error) {
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if ino, ok := strings.CutPrefix(target, "socket:["); ok {
			out[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return out, nil
}

// socketOwners finds which process (as far as this user may see) has each
// socket inode open.
func socketOwners(inodes []string) map[string]string {
	out := map[string]string{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil || p.Name() == self {
			continue
		}
		socks, err := socketInodes(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // another user's process, or gone
		}
		for _, ino := range inodes {
			if socks[ino] {
				out[ino] = p.Name()
			}
		}
		if len(out) == len(inodes) {
			break
		}
	}
	return out
}
