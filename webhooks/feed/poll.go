package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// PollConfig is how a feed is polled: GET {URL}?after={cursor}&limit={n}.
type PollConfig struct {
	// URL of the feed; empty means the feed is not polled (push only).
	URL string
	// Interval between polls once the reader has caught up. Default 500ms.
	// While pages come back full the reader follows "next" at once.
	Interval time.Duration
	// PageSize is the limit asked for. Default 100.
	PageSize int
	// Timeout of one request, answer body included. Default 10s.
	Timeout time.Duration
	// BackoffMax caps the back-off after upstream errors and malformed
	// pages; the back-off starts at Interval and doubles, with jitter.
	// Default 30s.
	BackoffMax time.Duration
	// MaxPageBytes is the largest answer accepted. A larger page is an
	// error; the next request asks for half as many changes. Default 8 MiB.
	MaxPageBytes int64
	// Header is sent with every request (for example an API key).
	Header http.Header
}

// Defaults of PollConfig.
const (
	DefaultInterval     = 500 * time.Millisecond
	DefaultPageSize     = 100
	DefaultTimeout      = 10 * time.Second
	DefaultBackoffMax   = 30 * time.Second
	DefaultMaxPageBytes = 8 << 20
)

// maxDuplicatePages is how many full pages of only already-done changes are
// followed at once before waiting an interval (a feed going in circles must
// not make the reader spin).
const maxDuplicatePages = 10

// Validate checks the settings (an absolute http(s) URL or none, no
// negative values).
func (p PollConfig) Validate() error {
	_, err := p.withDefaults()
	return err
}

func (p PollConfig) withDefaults() (PollConfig, error) {
	if p.URL != "" {
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return p, fmt.Errorf("feed url %q: want an absolute http or https URL", p.URL)
		}
	}
	if p.Interval < 0 || p.PageSize < 0 || p.Timeout < 0 || p.BackoffMax < 0 || p.MaxPageBytes < 0 {
		return p, errors.New("negative poll setting")
	}
	if p.Interval == 0 {
		p.Interval = DefaultInterval
	}
	if p.PageSize == 0 {
		p.PageSize = DefaultPageSize
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
	}
	if p.BackoffMax == 0 {
		p.BackoffMax = DefaultBackoffMax
	}
	if p.BackoffMax < p.Interval {
		p.BackoffMax = p.Interval
	}
	if p.MaxPageBytes == 0 {
		p.MaxPageBytes = DefaultMaxPageBytes
	}
	return p, nil
}

// pollState is guarded by Feed.smu.
type pollState struct {
	cursor     string
	limit      int
	failures   int
	dupPages   int
	startedAt  time.Time
	caughtUpAt time.Time
	lastOKAt   time.Time
	lastErr    string
	lastErrAt  time.Time
	warning    string
	newestAt   time.Time
	retryAfter time.Duration
	gen        int  // incremented by Reset
	everOK     bool // a poll succeeded since start-up
	waits      int  // start-up polls that found no one listening
}

// StartupWait is how long after start-up a feed that refuses connections is
// waited for quietly (it is often started at the same time as the
// gateway): polls are retried with the usual back-off, logged at info level
// once, shown as a warning, and not counted as errors. After it, or after
// the first success, every failure is an error.
const StartupWait = 30 * time.Second

// errPageTooLarge is returned for an answer over MaxPageBytes.
var errPageTooLarge = errors.New("feed page too large")

func (f *Feed) loop() {
	defer close(f.done)
	f.smu.Lock()
	f.poll.startedAt = f.clock()
	f.smu.Unlock()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		case <-timer.C:
		}
		wait := f.Poll(f.ctx)
		if f.ctx.Err() != nil {
			return
		}
		timer.Stop()
		select { // drain a fired timer
		case <-timer.C:
		default:
		}
		if wait >= 0 {
			timer.Reset(wait)
		}
	}
}

// Poll reads one page, processes it and returns how long to wait before the
// next poll: 0 when the page was full (follow next at once), the interval
// once caught up, a back-off after an error, -1 when the feed is not polled.
// The poll loop calls it; tests call it directly.
func (f *Feed) Poll(ctx context.Context) time.Duration {
	s := f.settings.Load()
	pc := s.Poll
	if pc.URL == "" {
		return -1
	}
	fence, err := f.holdLease() // taking the lease may reload the cursor
	if errors.Is(err, errStandby) {
		return LeaseRenew
	}
	f.smu.Lock()
	cursor, limit, gen := f.poll.cursor, f.poll.limit, f.poll.gen
	f.smu.Unlock()
	if limit <= 0 || limit > pc.PageSize {
		limit = pc.PageSize
	}
	if err != nil {
		return f.failed(pc, limit, err)
	}
	start := f.clock()
	body, err := f.fetch(ctx, pc, cursor, limit)
	if ctx.Err() != nil {
		return 0
	}
	var page Page
	if err == nil {
		page, err = DecodePage(body, s.Mapping)
	}
	if err != nil {
		return f.failed(pc, limit, err)
	}
	next := page.Next
	if !page.HasNext {
		next = cursor
	}
	var res Result
	if len(page.Changes) > 0 || next != cursor {
		res, err = f.process(page.Changes, &next, "poll", gen, fence)
		if errors.Is(err, errReset) {
			return 0
		}
		if errors.Is(err, ErrLeaseLost) {
			return f.leaseLost(fence)
		}
		if err != nil {
			return f.failed(pc, limit, err)
		}
	}
	f.counters.pages.Add(1)
	now := f.clock()
	f.smu.Lock()
	defer f.smu.Unlock()
	if !f.poll.everOK {
		f.poll.everOK, f.poll.waits, f.poll.warning = true, 0, ""
	}
	f.poll.failures, f.poll.lastOKAt = 0, now
	f.poll.lastErr, f.poll.lastErrAt = "", time.Time{}
	if limit < pc.PageSize { // recover from a halved limit
		f.poll.limit = min(limit*2, pc.PageSize)
	}
	if res.NewestAt.After(f.poll.newestAt) {
		f.poll.newestAt = res.NewestAt
	}
	if backwards(cursor, next) {
		f.poll.warning = fmt.Sprintf("cursor went backwards from %q to %q at %s; changes already done are skipped by id",
			cursor, next, now.UTC().Format(time.RFC3339))
		f.logger.Warn("feed cursor went backwards", zap.String("feed", f.name),
			zap.String("from", cursor), zap.String("to", next))
	}
	full := len(page.Changes) >= limit && next != cursor
	if full && res.Read > 0 && res.Duplicates == res.Read {
		f.poll.dupPages++
		full = f.poll.dupPages < maxDuplicatePages
	} else {
		f.poll.dupPages = 0
	}
	if full {
		return 0
	}
	f.poll.caughtUpAt = start
	return pc.Interval
}

// failed records an error and returns the back-off: Interval doubled per
// consecutive failure, capped at BackoffMax, with jitter (between half and
// all of it), and at least what a Retry-After asked for (within the cap).
func (f *Feed) failed(pc PollConfig, limit int, err error) time.Duration {
	now := f.clock()
	f.smu.Lock()
	defer f.smu.Unlock()
	waiting := !f.poll.everOK && errors.Is(err, errNoListener) && now.Sub(f.poll.startedAt) < StartupWait
	if waiting {
		f.poll.waits++
		f.poll.warning = fmt.Sprintf("waiting for the feed to answer since start-up at %s: %v",
			f.poll.startedAt.UTC().Format(time.RFC3339), err)
	} else {
		f.poll.failures++
		f.counters.pollErrors.Add(1)
		if errors.Is(err, errPageTooLarge) {
			f.poll.limit = max(limit/2, 1)
			err = fmt.Errorf("%w (limit %d); asking for %d next", err, limit, f.poll.limit)
		}
		f.poll.lastErr, f.poll.lastErrAt = err.Error(), now
	}
	n := f.poll.waits + f.poll.failures
	d := float64(pc.Interval) * math.Pow(2, float64(min(n-1, 30)))
	d = math.Min(d, float64(pc.BackoffMax))
	wait := time.Duration(d/2 + f.rand()*d/2)
	if ra := f.poll.retryAfter; ra > wait {
		wait = min(ra, pc.BackoffMax)
	}
	f.poll.retryAfter = 0
	switch {
	case waiting && f.poll.waits == 1:
		f.logger.Info("feed not answering yet; waiting for it (start-up)", zap.String("feed", f.name),
			zap.Error(err), zap.Duration("retry_in", wait))
	case waiting:
		f.logger.Debug("feed still not answering (start-up)", zap.String("feed", f.name),
			zap.Error(err), zap.Duration("retry_in", wait))
	default:
		f.logger.Warn("feed poll failed", zap.String("feed", f.name), zap.Error(err),
			zap.Int("consecutive_failures", f.poll.failures), zap.Duration("retry_in", wait))
	}
	return wait
}

// errNoListener marks a poll whose connection was refused or could not be
// made: no one (yet) listens at the feed's address.
var errNoListener = errors.New("no answer")

// noListener wraps a transport error with errNoListener when it happened
// while dialling.
func noListener(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return fmt.Errorf("%w: %w", errNoListener, err)
	}
	return err
}

// fetch GETs one page and returns its body.
func (f *Feed) fetch(ctx context.Context, pc PollConfig, cursor string, limit int) ([]byte, error) {
	u, err := url.Parse(pc.URL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("after", cursor)
	q.Set("limit", strconv.Itoa(limit))
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, pc.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range pc.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading feed: %w", noListener(redactURLError(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return nil, fmt.Errorf("feed answered %d, a redirect%s: redirects are not followed (set the feed url to the final address)",
			resp.StatusCode, redirectTarget(resp))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			f.smu.Lock()
			f.poll.retryAfter = time.Duration(secs) * time.Second
			f.smu.Unlock()
		}
		return nil, fmt.Errorf("feed answered %d: %s%s", resp.StatusCode, strings.TrimSpace(strings.ToValidUTF8(string(snippet), "?")),
			statusHint(resp.StatusCode))
	}
	if err := checkContentType(resp.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, pc.MaxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading feed page: %w", err)
	}
	if int64(len(body)) > pc.MaxPageBytes {
		return nil, fmt.Errorf("%w: over %d bytes", errPageTooLarge, pc.MaxPageBytes)
	}
	return body, nil
}

// httpClient reads feeds; per-request time-outs come from the context. Its
// transport is its own and uses no proxy (a proxy named by the environment
// would see the feed's headers, secrets included, and could answer
// anything), and it follows no redirects: the configured headers and a
// Referer would go wherever the feed points.
var httpClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// redirectTarget names where a redirect points, without its query (which
// may carry credentials), for the poll error: " to <scheme://host/path>".
func redirectTarget(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return ""
	}
	return " to " + (&url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: loc.Path}).String()
}

// redactURLError drops the URL (it may carry credentials) from a client error.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// backwards reports whether two numeric cursors went down.
func backwards(from, to string) bool {
	a, err1 := strconv.ParseInt(from, 10, 64)
	b, err2 := strconv.ParseInt(to, 10, 64)
	return err1 == nil && err2 == nil && b < a
}

// Reset sets the stored cursor (for example "" to read the feed from the
// beginning after the WMS's feed was rebuilt) and, with forgetSeen, forgets
// which change ids were already turned into events (needed when the WMS
// reuses ids; otherwise a replayed change is skipped as a duplicate). A page
// being read meanwhile is dropped.
//
// With a store several instances share (a Leaser), the reset also ends the
// feed's lease, whichever instance holds it: the holder's page in flight is
// not stored, and the next holder reads on from the reset cursor.
func (f *Feed) Reset(cursor string, forgetSeen bool) error {
	if err := f.reset(cursor, forgetSeen); err != nil {
		return err
	}
	if f.leaser != nil {
		f.lmu.Lock()
		f.lease.held = false
		f.noteLease()
		f.lmu.Unlock()
	}
	f.logger.Warn("feed reset", zap.String("feed", f.name), zap.String("cursor", cursor), zap.Bool("forget_seen", forgetSeen))
	f.wakeUp()
	return nil
}

func (f *Feed) reset(cursor string, forgetSeen bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if forgetSeen {
		if err := f.st.ForgetSeen(); err != nil {
			return fmt.Errorf("forgetting seen changes: %w", err)
		}
	}
	if err := f.st.Commit(f.st.PageWrites(PageWrites{Cursor: &cursor, EndLease: f.leaser != nil})); err != nil {
		return fmt.Errorf("storing cursor: %w", err)
	}
	f.smu.Lock()
	f.poll.cursor, f.poll.gen, f.poll.failures, f.poll.limit, f.poll.warning = cursor, f.poll.gen+1, 0, 0, ""
	f.smu.Unlock()
	return nil
}

// statusHint is the hint added to an error status that says the URL names
// no feed.
func statusHint(status int) string {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone:
		return "; " + WrongURLHint
	}
	return ""
}

// checkContentType refuses an answer declared as HTML or XML (a web page, a
// login form, an index): whatever the URL names, it is not the feed. Any
// other type, or none, is read as JSON (servers often label JSON
// text/plain).
func checkContentType(ct string) error {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil
	}
	if mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/xml" || strings.HasSuffix(mt, "/xml") || strings.HasSuffix(mt, "+xml") {
		return fmt.Errorf("%w: the feed answered %s, not JSON; %s", ErrMalformedPage, mt, WrongURLHint)
	}
	return nil
}
