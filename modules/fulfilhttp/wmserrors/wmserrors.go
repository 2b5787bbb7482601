// Package wmserrors answers the warehouse system's errors as problems
// (RFC 9457). Its Rewriter is a Caddy middleware handler that runs the
// handlers after it (normally reverse_proxy) and
//
//   - turns an error answer of the WMS (status 400 and up) into a problem,
//     never letting the WMS's own error format, codes and messages reach a
//     partner; successful answers pass untouched;
//   - leaves a failed proxy attempt (no answer at all) to the server's
//     handle_errors routes where the server has them, as Caddy's own
//     handlers do, and answers it as a problem itself where it has none.
//
// fulfilment_version runs one before the proxy for every request it
// forwards; the version handler's configuration has no setting for it.
package wmserrors

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// Rewriter turns the WMS's error answers into problems (see the package
// comment). The zero value logs nothing; New gives it a logger.
type Rewriter struct {
	logger *zap.Logger
}

// New returns a Rewriter that logs failed proxy attempts to logger.
func New(logger *zap.Logger) Rewriter {
	return Rewriter{logger: logger}
}

// ServeHTTP runs next with the WMS's error answers turned into problems.
// A handler error (the proxy could not reach the WMS) that nothing has
// answered yet, or a proxy that returned without an answer, is returned
// to Caddy for the server's handle_errors routes where it has them, as a
// caddyhttp.HandlerError (502 unless the error carries a status of 400
// and up); otherwise it is answered here as a problem with that status.
// Either way it is logged at error level, since Caddy logs an error its
// error routes answered only at debug level. The exception is a partner
// that went away (499, its request cancelled): logged at debug level, not
// counted as a WMS failure, and answered with the status alone, which
// only the access log sees.
func (rw Rewriter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	pw := newProblemResponseWriter(w, r)
	defer pw.release()
	err := next.ServeHTTP(pw, r)
	if err == nil && !pw.wroteHeader {
		// reverse_proxy returns without an answer when the WMS switched
		// protocols (101) on a request that asked for no upgrade (the
		// gateway removes Upgrade): net/http would send an empty 200.
		err = errNoAnswer
	}
	if err == nil || pw.wroteHeader {
		if pw.failed {
			fulfilhttp.Metrics().WMSError(true)
		}
		return err
	}
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) || he.StatusCode < 400 {
		he = caddyhttp.Error(http.StatusBadGateway, err)
	}
	gone := he.StatusCode == statusClientClosed && partnerGone(r.Context())
	level := zapcore.ErrorLevel
	if gone {
		// The partner went away before the WMS answered: not a failure of
		// the WMS, and no one reads the answer (the writer sends only the
		// status, for the access log; handle_errors would write a body).
		level = zapcore.DebugLevel
	} else {
		fulfilhttp.Metrics().WMSError(false)
	}
	if rw.logger != nil {
		if ce := rw.logger.Check(level, "upstream request failed"); ce != nil {
			ce.Write(zap.Int("status", he.StatusCode), zap.Error(err), fulfilhttp.RequestIDField(r))
		}
	}
	if !gone && errorRoutesAnswer(r) {
		return he
	}
	pw.WriteHeader(he.StatusCode)
	return nil
}

// statusClientClosed is the status Caddy's reverse_proxy records for a
// request whose client went away before the answer (499, "client closed
// request", after nginx).
const statusClientClosed = 499

// errNoAnswer is the failure of a proxy that returned without an answer.
var errNoAnswer = errors.New("the proxy returned without an answer: the upstream's answer could not be forwarded")

// errorRoutesAnswer reports whether Caddy answers an error r's handlers
// return with the server's handle_errors routes: the server has such
// routes, and r is not already being answered by them (an error returned
// there gets only a status line).
func errorRoutesAnswer(r *http.Request) bool {
	srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || srv.Errors == nil || len(srv.Errors.Routes) == 0 {
		return false
	}
	return r.Context().Value(caddyhttp.ErrorCtxKey) == nil
}

// Interface guard
var _ caddyhttp.MiddlewareHandler = Rewriter{}
