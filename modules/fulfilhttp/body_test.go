package fulfilhttp

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// bodyServer serves readBody with limit and timeout on a real loopback
// server and reports each call's error on the returned channel.
func bodyServer(t *testing.T, limit int64, timeout time.Duration) (*httptest.Server, <-chan error) {
	t.Helper()
	done := make(chan error, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := ReadBody(w, r, limit, timeout, zap.NewNop())
		done <- err
		switch {
		case errors.Is(err, ErrBodyTimeout):
			w.WriteHeader(http.StatusRequestTimeout)
		case errors.Is(err, ErrBodyTooLarge):
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		default:
			fmt.Fprintf(w, "%d", len(body))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, done
}

// A client that sends its headers and then only part of its body cannot
// hold the handler: the read fails at the deadline, the answer is 408 and
// the connection is closed.
func TestReadBodyCutsOffASlowBody(t *testing.T) {
	srv, done := bodyServer(t, 1024, 200*time.Millisecond)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly-ten-b")
	select {
	case err := <-done:
		if !errors.Is(err, ErrBodyTimeout) {
			t.Fatalf("readBody returned %v, want ErrBodyTimeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler is still waiting for the body 20 s later: no read deadline")
	}
	if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the slow request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Fatalf("answer %d (close %v), want 408 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// The deadline covers the body only: a body that arrived in time is read,
// and the same keep-alive connection serves the next request after the
// deadline has passed.
func TestReadBodyClearsTheDeadlineAfterTheBody(t *testing.T) {
	srv, done := bodyServer(t, 1024, 100*time.Millisecond)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := range 2 {
		if i == 1 {
			time.Sleep(300 * time.Millisecond) // past the first request's deadline
		}
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
		if err := <-done; err != nil {
			t.Fatalf("request %d: readBody returned %v", i+1, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on the kept-alive connection: %v", i+1, err)
		}
		b := make([]byte, 8)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b[:n]) != "5" {
			t.Fatalf("request %d: %d %q, want 200 and the 5 bytes read", i+1, resp.StatusCode, b[:n])
		}
	}
}

func TestReadBodyRefusesTooLargeBodies(t *testing.T) {
	srv, done := bodyServer(t, 16, time.Second)
	for name, req := range map[string]func() (*http.Response, error){
		"announced": func() (*http.Response, error) {
			return http.Post(srv.URL, "text/plain", strings.NewReader(strings.Repeat("a", 17)))
		},
		"chunked": func() (*http.Response, error) {
			r, _ := http.NewRequest("POST", srv.URL, strings.NewReader(strings.Repeat("a", 17)))
			r.ContentLength = -1
			return http.DefaultClient.Do(r)
		},
	} {
		resp, err := req()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if err := <-done; !errors.Is(err, ErrBodyTooLarge) || resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: readBody %v, answer %d; want ErrBodyTooLarge and 413", name, err, resp.StatusCode)
		}
	}
}
