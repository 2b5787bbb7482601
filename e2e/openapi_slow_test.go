package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// The answers the gateway gives to a body that does not arrive in time
// (408) and to two Authorization headers at the token endpoint (400) follow
// the OpenAPI document too. They cannot be sent with net/http's client, so
// they go over a raw connection.

// slowBody sends method path with the given headers and a Content-Length of
// 100, writes only two bytes of the body, and returns the gateway's answer
// (which comes after the handler's read deadline), checked against the
// document.
func (s *spec) slowBody(base, method, path string, header ...string) exchange {
	s.t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	var raw strings.Builder
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n", method, path, req.URL.Host)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
		fmt.Fprintf(&raw, "%s: %s\r\n", header[i], header[i+1])
	}
	raw.WriteString("\r\nab")
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		s.t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw.String()); err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		s.t.Fatalf("%s %s with a slow body: no answer: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	s.check(req, resp, body)
	return exchange{resp.StatusCode, resp.Header, body}
}

// check validates an answer to req against the document.
func (s *spec) check(req *http.Request, resp *http.Response, body []byte) {
	s.t.Helper()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		s.t.Fatalf("%s %s: the document has no such operation: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: authenticate}}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		s.t.Errorf("%s %s: the gateway's answer %d %s does not follow the document: %v",
			req.Method, req.URL.Path, resp.StatusCode, body, err)
	}
}

// A body that does not arrive within read_timeout answers 408 at the token
// endpoint (OAuth JSON) and at the subscriptions API (request-timeout), as
// the document says.
func TestOpenAPISlowBodiesConform(t *testing.T) {
	t.Parallel()
	cf := keyedCaddyfile(t)
	for old, repl := range map[string]string{
		"\t\ttoken\n":         "\t\ttoken {\n\t\t\tread_timeout 1s\n\t\t}\n",
		"\t\tsubscriptions\n": "\t\tsubscriptions {\n\t\t\tread_timeout 1s\n\t\t}\n",
	} {
		if !strings.Contains(cf, old) {
			t.Fatalf("demo Caddyfile lacks %q", old)
		}
		cf = strings.Replace(cf, old, repl, 1)
	}
	g := newRepoGateway(t, cf)
	g.Env = append(g.Env, "FULFILGATE_SIGNING_KEY="+e2eSeed)
	g.run(t)
	s := newSpec(t)
	form := "application/x-www-form-urlencoded"

	e := s.slowBody(g.Base, http.MethodPost, "/api/auth/token", "Content-Type", form)
	if e.status != http.StatusRequestTimeout || !strings.Contains(string(e.body), `"invalid_request"`) {
		t.Errorf("token endpoint, slow body: %d %s, want 408 invalid_request", e.status, e.body)
	}
	bearer := tokensDemoBearer(t, g.Base)
	e = s.slowBody(g.Base, http.MethodPost, "/api/fulfilment/v4/subscriptions",
		"Content-Type", "application/json", bearer[0], bearer[1])
	if e.status != http.StatusRequestTimeout || problemType(t, e) != "request-timeout" {
		t.Errorf("subscriptions, slow body: %d %s, want 408 request-timeout", e.status, e.body)
	}

	// Two Authorization headers at the token endpoint: 400 invalid_request.
	req, err := http.NewRequest(http.MethodPost, g.Base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", form)
	req.Header.Add("Authorization", basicAuth(demoAcmeID, demoAcmeSecret))
	req.Header.Add("Authorization", basicAuth(demoAcmeID, demoAcmeSecret))
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s.check(req, resp, body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_request"`) {
		t.Errorf("two Authorization headers: %d %s, want 400 invalid_request", resp.StatusCode, body)
	}
}
