package wmserrors

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// problemResponseWriter turns an upstream error answer into a problem.
type problemResponseWriter struct {
	caddyhttp.ResponseWriterWrapper
	ctx         context.Context // the request's: done once the partner went away
	wroteHeader bool
	replaced    bool // the upstream's error body is discarded
	failed      bool // the upstream answered 5xx
	// ours are the headers the gateway had set before proxying, with the
	// gateway's values (the proxy may overwrite them with the WMS's, e.g.
	// Server). Usually two (Server and the request id): room for them is
	// inline, so the writer stays small; more go to the heap.
	ours   []preset
	inline [2]preset
}

type preset struct {
	name   string
	values []string
}

// writers holds the writers of finished requests for the next ones: every
// request the gateway forwards needs one, only for as long as its proxy
// runs, and allocating it made garbage on every forwarded request.
var writers = sync.Pool{New: func() any { return new(problemResponseWriter) }}

// newProblemResponseWriter wraps w, the answer to r, until release.
func newProblemResponseWriter(w http.ResponseWriter, r *http.Request) *problemResponseWriter {
	pw := writers.Get().(*problemResponseWriter)
	pw.ResponseWriter, pw.ctx = w, r.Context()
	pw.ours = pw.inline[:0]
	for name, values := range w.Header() {
		pw.ours = append(pw.ours, preset{name, values})
	}
	return pw
}

// release clears pw and returns it to the pool. The handler that made pw
// calls it once next has returned: nothing writes to a response after its
// handler returned (reverse_proxy copies the body and answers a 1xx only
// while it runs, and a protocol upgrade never reaches it: the gateway
// removes Upgrade), so no one holds pw then.
func (pw *problemResponseWriter) release() {
	*pw = problemResponseWriter{}
	writers.Put(pw)
}

func (pw *problemResponseWriter) WriteHeader(status int) {
	if pw.wroteHeader {
		return
	}
	if status < 200 && status != http.StatusSwitchingProtocols {
		// The upstream's informational answers (100 Continue, 103 Early
		// Hints) are held back: the interface has none, and net/http
		// answers a partner's Expect: 100-continue itself. Passed on, an
		// HTTP/2 connection the partner reset encodes the answer's
		// headers after WriteHeader returned, while the proxy already
		// puts the map back (golang/go#67940): a data race.
		return
	}
	if status == statusClientClosed && partnerGone(pw.ctx) {
		// Caddy's proxy records a partner that went away as 499 for the
		// access log. No one reads an answer, and the status is not the
		// WMS's: a problem saying the WMS rejected the request would be
		// written to a closed connection. The gateway's headers only, as
		// for a problem (none of the WMS's, had it answered 499 itself).
		pw.wroteHeader, pw.replaced = true, true
		pw.keepOurs()
		pw.ResponseWriter.WriteHeader(status)
		return
	}
	if status < 400 {
		// 101 is final: the connection then speaks another protocol.
		pw.wroteHeader = true
		pw.ResponseWriter.WriteHeader(status)
		return
	}
	pw.wroteHeader, pw.replaced, pw.failed = true, true, status >= 500
	pw.keepOurs()
	status, kind, detail := upstreamProblem(status)
	fulfilhttp.WriteProblem(pw.ResponseWriter, status, kind, detail)
}

// keepOurs drops the headers the WMS's answer brought, but for those that
// still mean something to a partner (keptUpstreamHeaders), and puts back
// the gateway's own, with the gateway's values.
func (pw *problemResponseWriter) keepOurs() {
	h := pw.Header()
	kept := make(http.Header, len(keptUpstreamHeaders)+len(pw.ours))
	for _, name := range keptUpstreamHeaders {
		if v := h.Values(name); len(v) > 0 {
			kept[name] = v
		}
	}
	for _, p := range pw.ours {
		kept[p.name] = p.values
	}
	clear(h)
	for name, v := range kept {
		h[name] = v
	}
}

// partnerGone reports whether the request's context ended because the
// partner went away (cancelled), the one case Caddy's proxy records as
// 499; a deadline some handler set is not that.
func partnerGone(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

func (pw *problemResponseWriter) Write(b []byte) (int, error) {
	if !pw.wroteHeader {
		pw.WriteHeader(http.StatusOK)
	}
	if pw.replaced {
		return len(b), nil
	}
	return pw.ResponseWriter.Write(b)
}

// ReadFrom must not let io.Copy bypass Write (the wrapped ResponseWriter
// may implement io.ReaderFrom).
func (pw *problemResponseWriter) ReadFrom(r io.Reader) (int64, error) {
	if !pw.wroteHeader {
		pw.WriteHeader(http.StatusOK)
	}
	if pw.replaced {
		return io.Copy(io.Discard, r)
	}
	return pw.ResponseWriterWrapper.ReadFrom(r)
}
