package fulfilment

import (
	"net"
	"testing"
)

func TestParseProcAddrReadsTheKernelsByteOrder(t *testing.T) {
	for _, c := range []struct {
		in   string
		ip   string
		port uint
	}{
		{"0100007F:1F90", "127.0.0.1", 8080},
		{"00000000:0050", "0.0.0.0", 80},
		{"00000000000000000000000001000000:1F91", "::1", 8081},
		{"00000000000000000000000000000000:01BB", "::", 443},
	} {
		ip, port, err := parseProcAddr(c.in)
		if err != nil || !ip.Equal(net.ParseIP(c.ip)) || port != c.port {
			t.Errorf("parseProcAddr(%q) = %v, %d, %v; want %s, %d", c.in, ip, port, err, c.ip, c.port)
		}
	}
}

// A listener of this process is not "another process".
func TestOtherListenersIgnoresThisProcess(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := uint(l.Addr().(*net.TCPAddr).Port)
	others, err := otherListeners(listenAddress{Host: "127.0.0.1", Port: port})
	if err != nil || len(others) != 0 {
		t.Fatalf("otherListeners on this process's own port: %v, %v; want none", others, err)
	}
	others, err = otherListeners(listenAddress{Port: port})
	if err != nil || len(others) != 0 {
		t.Fatalf("otherListeners on every address of this process's own port: %v, %v; want none", others, err)
	}
}
