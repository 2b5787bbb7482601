package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitReloaded is the end of a reload. Caddy (on Linux) gives each loaded
// config listening sockets of its own, bound with SO_REUSEPORT to the same
// addresses, and stops the previous config's servers in goroutines it does
// not wait for: when `caddy reload` returns, the old sockets may still be
// open. The kernel spreads new connections over every socket bound to an
// address and resets those still queued on a socket when it closes (unless
// net.ipv4.tcp_migrate_req is set), so a connection opened right after a
// reload can be reset. waitReloaded waits until the previous config's sockets are closed: until
// no address the gateway listens on has more than one of its listening
// sockets. Without /proc (not Linux) it returns at once.
func (g *gateway) waitReloaded() {
	g.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		dup, err := sharedListeners(g.cmd.Process.Pid)
		if err != nil {
			if os.IsNotExist(err) {
				return
			}
			g.t.Fatalf("reading the gateway's listening sockets: %v", err)
		}
		if len(dup) == 0 {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("30s after a reload the previous config still listens beside the new one on %v\n%s", dup, g.Logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sharedListeners returns the addresses (as /proc/net/tcp writes them) on
// which process pid has more than one listening TCP socket.
func sharedListeners(pid int) ([]string, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningSockets(table, inodes, count); err != nil {
			return nil, err
		}
	}
	var dup []string
	for addr, n := range count {
		if n > 1 {
			dup = append(dup, fmt.Sprintf("%s (%d sockets)", addr, n))
		}
	}
	sort.Strings(dup)
	return dup, nil
}

// socketInodes returns the inodes of the sockets process pid has open.
func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed since it was listed
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}

// listeningSockets counts, per local address, the sockets of table (in
// /proc/net/tcp's format) in state LISTEN whose inode is in inodes.
func listeningSockets(table string, inodes map[string]bool, count map[string]int) error {
	f, err := os.Open(table)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if fields[3] == "0A" && inodes[fields[9]] {
			count[fields[1]]++
		}
	}
	return sc.Err()
}

// waitReloaded's check sees two listening sockets of a process bound to one
// address with SO_REUSEPORT (as Caddy's configs are during a reload), and
// no longer once one is closed.
func TestSharedListenersSeesTwoSocketsOnOneAddress(t *testing.T) {
	const soReusePort = 0xf // SO_REUSEPORT on Linux (package syscall does not name it)
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: waitReloaded returns at once here")
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soReusePort, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	first, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := lc.Listen(context.Background(), "tcp", first.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("0100007F:%04X", first.Addr().(*net.TCPAddr).Port) // as /proc/net/tcp writes it
	dup, err := sharedListeners(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dup, addr+" (2 sockets)") {
		t.Fatalf("two listeners on %s, shared listeners reported: %v", first.Addr(), dup)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	dup, err = sharedListeners(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(dup, func(d string) bool { return strings.HasPrefix(d, addr+" ") }) {
		t.Fatalf("one listener left on %s, shared listeners reported: %v", first.Addr(), dup)
	}
}
