package caddymodule

import (
	"errors"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The resource interface answers errors as problem+json (decisions §2),
// whoever caused them. The version handler wraps the response so that an
// error answer of the warehouse system (status 400 and up), or a failed
// proxy attempt, reaches the partner as a problem, never in the WMS's own
// error format with its internal codes and messages. Successful answers
// pass through untouched.

// keptUpstreamHeaders are the headers of an upstream error answer that
// still mean something to a partner; every other header the WMS sent (its
// Server, Content-Type, Content-Length, ETag, ...) is dropped. Headers the
// gateway set before proxying (the request id under its configured name,
// the deprecation headers) are kept too.
var keptUpstreamHeaders = []string{"Allow", "Retry-After"}

// upstreamProblem is the problem a partner gets for an upstream status.
// An upstream 401 or 403 concerns the gateway's own access to the WMS, not
// the partner's token, so it becomes 502.
func upstreamProblem(status int) (int, string, string) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return http.StatusBadGateway, "upstream-error", "the warehouse system refused the gateway"
	case status == http.StatusNotFound:
		return status, "not-found", "no such resource"
	case status == http.StatusMethodNotAllowed:
		return status, "method-not-allowed", "this method is not allowed on this resource"
	case status == http.StatusTooManyRequests:
		return status, "rate-limited", "the warehouse system is busy; retry later"
	case status < 500:
		return status, "rejected", "the warehouse system rejected the request"
	case status == http.StatusServiceUnavailable || status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return status, "upstream-unavailable", "the warehouse system is unavailable; retry later"
	default:
		return status, "upstream-error", "the warehouse system failed to answer the request"
	}
}

// problemResponseWriter turns an upstream error answer into a problem.
type problemResponseWriter struct {
	caddyhttp.ResponseWriterWrapper
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

func newProblemResponseWriter(w http.ResponseWriter) *problemResponseWriter {
	pw := &problemResponseWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	pw.ours = pw.inline[:0]
	for name, values := range w.Header() {
		pw.ours = append(pw.ours, preset{name, values})
	}
	return pw
}

func (pw *problemResponseWriter) WriteHeader(status int) {
	if pw.wroteHeader {
		return
	}
	if status < 400 {
		if status >= 200 { // 1xx informational answers may precede the final one
			pw.wroteHeader = true
		}
		pw.ResponseWriter.WriteHeader(status)
		return
	}
	pw.wroteHeader, pw.replaced, pw.failed = true, true, status >= 500
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
	status, kind, detail := upstreamProblem(status)
	writeProblem(pw.ResponseWriter, status, kind, detail)
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

// serveAsProblems runs next with upstream errors turned into problems. A
// handler error (the proxy could not reach the WMS) that nothing has
// answered yet is answered here with its status; it is logged, since Caddy
// will not see it.
func serveAsProblems(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, logger *zap.Logger) error {
	pw := newProblemResponseWriter(w)
	err := next.ServeHTTP(pw, r)
	if err == nil || pw.wroteHeader {
		if pw.failed {
			gwMetrics().wmsError(true)
		}
		return err
	}
	gwMetrics().wmsError(false)
	status := http.StatusBadGateway
	var he caddyhttp.HandlerError
	if errors.As(err, &he) && he.StatusCode >= 400 {
		status = he.StatusCode
	}
	if ce := logger.Check(zapcore.ErrorLevel, "upstream request failed"); ce != nil {
		ce.Write(zap.Int("status", status), zap.Error(err), requestIDField(r))
	}
	pw.WriteHeader(status)
	return nil
}
