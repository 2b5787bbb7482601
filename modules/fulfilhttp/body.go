package fulfilhttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
)

// DefaultBodyReadTimeout is how long the token and subscriptions handlers
// wait for a whole request body (a few hundred bytes, at most 64 KiB).
const DefaultBodyReadTimeout = 10 * time.Second

// maxBodyReadTimeout bounds the read_timeout option.
const maxBodyReadTimeout = 10 * time.Minute

// Errors of readBody besides the transport's own.
var (
	ErrBodyTooLarge = errors.New("request body too large")
	ErrBodyTimeout  = errors.New("request body not received in time")
)

// readBody reads r's whole body: at most limit bytes (ErrBodyTooLarge
// beyond, also when Content-Length announces more), within timeout from
// now (ErrBodyTimeout after it). The deadline is a read deadline on the
// connection (HTTP/1) or the stream (HTTP/2), set through
// http.ResponseController, so a client that trickles its body cannot hold
// the handler: the blocked read fails when the deadline passes. It is
// cleared once the body is in, so the rest of the request is not bound
// by it. Where the connection has no read deadline (HTTP/3), the server's
// own timeouts (`servers { timeouts { read_body } }`) are what bounds the
// read; logger notes that at debug level.
//
// After ErrBodyTimeout the connection is unusable: the caller answers 408
// and the server closes it (readBody sets Connection: close).
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, logger *zap.Logger) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, ErrBodyTooLarge
	}
	if timeout <= 0 {
		timeout = DefaultBodyReadTimeout
	}
	rc := http.NewResponseController(w)
	deadline := true
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		deadline = false
		if ce := logger.Check(zapcore.DebugLevel, "no read deadline for the request body"); ce != nil {
			ce.Write(zap.Error(err))
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, ErrBodyTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, ErrBodyTimeout
	case err != nil:
		return nil, err
	}
	if deadline {
		if err := rc.SetReadDeadline(time.Time{}); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// BodyProblem is the answer to an error of ReadBody: 413 payload-too-large
// (with detail tooLarge, which names the limit), 408 request-timeout, or
// 400 invalid-request.
func BodyProblem(err error, tooLarge string) Problem {
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return NewProblem(http.StatusRequestEntityTooLarge, "payload-too-large", tooLarge)
	case errors.Is(err, ErrBodyTimeout):
		return NewProblem(http.StatusRequestTimeout, "request-timeout", "the request body did not arrive in time")
	default:
		return NewProblem(http.StatusBadRequest, "invalid-request", "reading the request body: "+err.Error())
	}
}

// CheckReadTimeout checks a read_timeout given in JSON (the Caddyfile
// parser already refuses what it refuses): negative or over 10m.
func CheckReadTimeout(d caddy.Duration) error {
	if d < 0 || time.Duration(d) > maxBodyReadTimeout {
		return fmt.Errorf("read_timeout %v is out of range: it must be between 0 (the default) and %v", time.Duration(d), maxBodyReadTimeout)
	}
	return nil
}

// BodyReadTimeout is the effective timeout of a read_timeout setting.
func BodyReadTimeout(d caddy.Duration, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return time.Duration(d)
}

// ParseReadTimeout parses a handler's read_timeout option (d is on its
// name): one positive duration up to 10m, given once (set is the value
// parsed so far).
func ParseReadTimeout(d *caddyfile.Dispenser, set caddy.Duration) (caddy.Duration, error) {
	if err := caddyfileargs.Once(d, set != 0); err != nil {
		return 0, err
	}
	v, err := caddyfileargs.One(d)
	if err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur <= 0 || dur > maxBodyReadTimeout {
		return 0, d.Errf("read_timeout: want a duration between 1ms and 10m, got %q", v)
	}
	return caddy.Duration(dur), nil
}

// UnmarshalReadTimeoutOnly parses a handler directive whose only option is
// read_timeout (d is on the directive's name):
//
//	<directive> {
//		read_timeout <duration>
//	}
//
// hint is added to the error for any other option.
func UnmarshalReadTimeoutOnly(d *caddyfile.Dispenser, into *caddy.Duration, hint string) error {
	d.Next() // the directive's name
	directive := d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		if d.Val() != "read_timeout" {
			return d.Errf("unknown %s option %q%s", directive, d.Val(), hint)
		}
		var err error
		if *into, err = ParseReadTimeout(d, *into); err != nil {
			return err
		}
	}
	return nil
}
