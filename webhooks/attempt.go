package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// maxResponseRead is how much of a receiver's response body is read (and
// discarded) so the connection can be reused; the rest is not read.
const maxResponseRead = 64 << 10

// maxResponseHeaders is how many bytes of a receiver's response headers are
// read; an answer with more is a failed attempt. (net/http's default, 10
// MiB, would let each receiver make every worker hold that much.)
const maxResponseHeaders = 64 << 10

// newHTTPClient is the default delivery client: it dials through the SSRF
// policy (the address actually dialled is checked), uses no proxy (a proxy
// would hide the real destination from the check), and follows no redirects
// (a 3xx is a failed attempt).
func newHTTPClient(p *netpolicy.Policy, perHost int) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    max(perHost, 2),
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeaders,
		DisableCompression:     true,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// StandardSignature returns the Standard Webhooks signature header value
// "v1,<base64 HMAC-SHA256(id.timestamp.body)>".
func StandardSignature(key []byte, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// send makes one HTTP attempt of d (attempt number n) and returns its log
// record; ok reports a 2xx answer within the timeout.
func (s *Service) send(ctx context.Context, cfg *settings, d *delivery, n int) (rec AttemptRecord, ok bool) {
	now := s.clock()
	rec = AttemptRecord{At: now.UTC(), Attempt: n}
	start := time.Now()
	defer func() { rec.Latency = time.Since(start) }()

	// The URL is checked again under the settings in force: a scheme
	// allowed at registration may not be any more (the addresses are
	// checked on every dial, by the client's dialer).
	if reason := refusedURL(d.URL, cfg.opts.AllowHTTP); reason != "" {
		rec.Error = reason
		return rec, false
	}
	key, err := cfg.opts.WebhookKey(d.PartnerID)
	if err != nil {
		rec.Error = "webhook key: " + err.Error()
		return rec, false
	}
	body := d.Event.Payload().Body()
	ctx, cancel := context.WithTimeout(ctx, cfg.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		rec.Error = "request: " + err.Error()
		return rec, false
	}
	ts := now.Unix()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", cfg.opts.UserAgent)
	h["x-hook-signature"] = []string{Sign(key, body)}
	h["x-hook-id"] = []string{d.ID}
	h["x-hook-attempt"] = []string{strconv.Itoa(n)}
	h["x-hook-timestamp"] = []string{strconv.FormatInt(ts, 10)}
	if d.Test {
		h["x-hook-test"] = []string{"true"}
	}
	if cfg.opts.StandardWebhooks {
		h["webhook-id"] = []string{d.ID}
		h["webhook-timestamp"] = []string{strconv.FormatInt(ts, 10)}
		h["webhook-signature"] = []string{StandardSignature(key, d.ID, ts, body)}
	}
	resp, err := cfg.clientFor(d.PartnerID).Do(req)
	if err != nil {
		rec.Error = attemptError(ctx, err, cfg.opts.Timeout)
		return rec, false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	resp.Body.Close()
	rec.Status = resp.StatusCode
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return rec, true
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		rec.Error = "redirect not followed"
	}
	return rec, false
}

// refusedURL returns why rawURL may not be called under the current
// settings ("" if it may): a refused attempt is a failed one, recorded with
// this reason and retried, so the delivery goes through if the settings
// change back within the retry period.
func refusedURL(rawURL string, allowHTTP bool) string {
	_, err := validateURL(rawURL, allowHTTP)
	switch {
	case err == nil:
		return ""
	case !allowHTTP && strings.HasPrefix(strings.ToLower(rawURL), "http:"):
		return "refused: plain http notification URLs are not allowed (https only)"
	}
	return "refused: " + err.Error()
}

// attemptError describes a transport failure without the URL (which may
// carry a partner's secret query parameters).
func attemptError(ctx context.Context, err error, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "timeout after " + timeout.String()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// run is one dispatched delivery: check the subscription still exists, make
// the attempt, decide what follows, and hand the result to the committer.
func (s *Service) run(d *delivery, oldKey []byte, tgt string) {
	defer s.workers.Done()
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		if s.testBeforeRelease != nil {
			s.testBeforeRelease()
		}
		s.releaseSlot(d, tgt)
	}
	defer release()

	cfg := s.cur() // the whole attempt, and its outcome, use these settings
	r := ackResult{d: d, oldKey: oldKey, retention: cfg.opts.DeadRetention, keep: max(cfg.opts.DeliveryLogSize, 0)}
	known, lookupErr := s.subs.known(d.SubscriptionID, d.PartnerID)
	if lookupErr == nil && !known {
		r.outcome = OutcomeDropped
	} else {
		n := d.Attempts + 1
		var rec AttemptRecord
		ok := false
		if lookupErr != nil {
			// Whether the subscription exists is unknown: a failed
			// attempt, retried, rather than a drop.
			rec = AttemptRecord{At: s.clock().UTC(), Attempt: n, Error: "subscription: " + lookupErr.Error()}
		} else {
			rec, ok = s.send(s.ctx, cfg, d, n)
		}
		if s.ctx.Err() != nil {
			// Closing: the attempt was cancelled and the delivery stays
			// queued as it was (at least once).
			s.forget(d.ID)
			return
		}
		cfg.opts.Observer.Attempt(rec.Latency, rec.Status)
		d.Attempts, d.TotalAttempts = n, d.TotalAttempts+1
		if d.First.IsZero() {
			d.First = rec.At
		}
		d.logAttempt(rec)
		switch {
		case ok:
			r.outcome, d.Due = OutcomeSuccess, rec.At
		default:
			next, retry := cfg.retry.Next(n, d.First, s.clock(), s.rand())
			if retry {
				r.outcome, d.Due = OutcomeFailure, next
			} else {
				r.outcome, d.Due = OutcomeDead, s.clock().UTC()
			}
		}
	}
	// The slot is released only once the outcome is handed to the
	// committer (deferred above): a finished attempt keeps its slot while
	// the committer is behind, so attempts cannot run ahead of the writes
	// that acknowledge them (without this, a fast receiver and a slow disk
	// piled up one goroutine and one decoded delivery per finished attempt).
	select {
	case s.acks <- r:
	case <-s.committerDone:
		s.forget(d.ID)
	}
}

// releaseSlot frees the attempt slot of d's partner and target tgt, starts
// what the freed slot allows (partners in turn) and wakes the dispatcher.
func (s *Service) releaseSlot(d *delivery, tgt string) {
	sc := &s.sched
	sc.mu.Lock()
	sc.active--
	if sc.targets[tgt]--; sc.targets[tgt] <= 0 {
		delete(sc.targets, tgt)
	}
	if sc.partners[d.PartnerID]--; sc.partners[d.PartnerID] <= 0 {
		delete(sc.partners, d.PartnerID)
	}
	s.dispatch(s.cur())
	sc.idle.Broadcast() // waitIdle also waits for free slots
	sc.mu.Unlock()
	sc.poke()
}

// forget ends a dispatch that will not be acknowledged.
func (s *Service) forget(id string) {
	sc := &s.sched
	sc.mu.Lock()
	delete(sc.inflight, id)
	sc.pending--
	sc.idle.Broadcast()
	sc.mu.Unlock()
}
