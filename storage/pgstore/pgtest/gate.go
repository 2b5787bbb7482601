package pgtest

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
)

// Gate is a TCP front of the pgtest server (which listens on a unix socket
// only) on 127.0.0.1: while open it relays each connection it accepts to
// the server; once silenced it accepts connections and never answers, as
// a database that stopped answering does; once hung up it closes each
// connection as soon as it accepts it.
type Gate struct {
	ln     net.Listener
	socket string // the server's unix socket

	mu   sync.Mutex
	mode GateMode
	held []net.Conn // every connection accepted, closed by release
	// Accepted is told (not blocking) of each silenced connection.
	Accepted chan struct{}
}

// GateMode is how a Gate serves the connections it accepts.
type GateMode int

const (
	GateOpen   GateMode = iota // relayed to the server
	GateSilent                 // accepted, never answered
	GateHangUp                 // closed at once
)

// NewGate starts a gate in front of the pgtest database at dsn and returns
// it with dsn rewritten to reach the database through it (same user,
// password and database). Its connections are closed when t ends.
func NewGate(t testing.TB, dsn string) (*Gate, string) {
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
	g := &Gate{ln: ln, socket: socket, Accepted: make(chan struct{}, 1)}
	go g.serve()
	t.Cleanup(func() {
		ln.Close()
		g.Release()
	})
	q.Del("host")
	q.Del("port")
	u.Host, u.RawQuery = ln.Addr().String(), q.Encode()
	return g, u.String()
}

// Set switches how the connections accepted from now on are served.
func (g *Gate) Set(m GateMode) {
	g.mu.Lock()
	g.mode = m
	g.mu.Unlock()
}

// Release closes every connection the gate has accepted: a silenced
// client's connect then fails at once instead of waiting.
func (g *Gate) Release() {
	g.mu.Lock()
	held := g.held
	g.held = nil
	g.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
}

func (g *Gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return // closed when the test ends
		}
		g.mu.Lock()
		mode := g.mode
		if mode != GateHangUp {
			g.held = append(g.held, c)
		}
		g.mu.Unlock()
		switch mode {
		case GateOpen:
			go g.relay(c)
		case GateSilent:
			select {
			case g.Accepted <- struct{}{}:
			default:
			}
		case GateHangUp:
			c.Close()
		}
	}
}

// relay copies between c and a new connection to the server until either
// side closes: a copy's end, by EOF or error alike, ends the relay.
func (g *Gate) relay(c net.Conn) {
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
