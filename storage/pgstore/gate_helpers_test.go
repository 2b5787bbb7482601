package pgstore

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
)

// gate is a TCP front of the pgtest server (which listens on a unix socket
// only) on 127.0.0.1: while open it relays each connection it accepts to
// the server; once silenced it accepts connections and never answers, as
// a database that stopped answering does; once hung up it closes each
// connection as soon as it accepts it.
type gate struct {
	ln     net.Listener
	socket string // the server's unix socket

	mu       sync.Mutex
	mode     gateMode
	held     []net.Conn    // every connection accepted, closed by release
	accepted chan struct{} // told (not blocking) of each silenced connection
}

type gateMode int

const (
	gateOpen gateMode = iota
	gateSilent
	gateHangUp
)

// newGate starts a gate in front of the pgtest database at dsn and returns
// it with dsn rewritten to reach the database through it (same user,
// password and database). Its connections are closed when t ends.
func newGate(t *testing.T, dsn string) (*gate, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parsing the harness's database URL: %v", err)
	}
	q := u.Query()
	socket := filepath.Join(q.Get("host"), ".s.PGSQL."+q.Get("port"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, socket: socket, accepted: make(chan struct{}, 1)}
	go g.serve()
	t.Cleanup(func() {
		ln.Close()
		g.release()
	})
	q.Del("host")
	q.Del("port")
	u.Host, u.RawQuery = ln.Addr().String(), q.Encode()
	return g, u.String()
}

// set switches how the connections accepted from now on are served.
func (g *gate) set(m gateMode) {
	g.mu.Lock()
	g.mode = m
	g.mu.Unlock()
}

// release closes every connection the gate has accepted: a silenced
// client's connect then fails at once instead of waiting.
func (g *gate) release() {
	g.mu.Lock()
	held := g.held
	g.held = nil
	g.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
}

func (g *gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return // closed when the test ends
		}
		g.mu.Lock()
		mode := g.mode
		if mode != gateHangUp {
			g.held = append(g.held, c)
		}
		g.mu.Unlock()
		switch mode {
		case gateOpen:
			go g.relay(c)
		case gateSilent:
			select {
			case g.accepted <- struct{}{}:
			default:
			}
		case gateHangUp:
			c.Close()
		}
	}
}

// relay copies between c and a new connection to the server until either
// side closes: a copy's end, by EOF or error alike, ends the relay.
func (g *gate) relay(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("unix", g.socket)
	if err != nil {
		return // the client sees its connection closed
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
}
