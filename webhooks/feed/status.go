package feed

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Status is a feed's state for operators (admin API, CLI, metrics).
type Status struct {
	Name string `json:"name"`
	// Mode is "poll" when the feed is read from URL, else "push".
	Mode string `json:"mode"`
	// URL of the feed without user info or query.
	URL    string `json:"url,omitempty"`
	Cursor string `json:"cursor"`
	// ReaderStatus tells which gateway instance reads the feed, when
	// several share its state (its fields are omitted when only this
	// process can read it). An instance that does not hold the lease shows
	// the cursor as it last read it and no lag.
	*ReaderStatus
	// LagSeconds is how far behind the feed the reader may be: the time
	// since the start of the last poll that reached the end of the feed
	// (since start-up before the first). About the poll interval when
	// healthy; it grows during an outage and while catching up.
	LagSeconds        float64    `json:"lag_seconds"`
	CaughtUpAt        *time.Time `json:"caught_up_at,omitempty"`
	LastSuccessAt     *time.Time `json:"last_success_at,omitempty"`
	LastError         string     `json:"last_error,omitempty"`
	LastErrorAt       *time.Time `json:"last_error_at,omitempty"`
	ConsecutiveErrors int        `json:"consecutive_errors"`
	// PollErrors counts failed polls since start-up (a feed still starting
	// up is waited for, not counted: see StartupWait).
	PollErrors     uint64     `json:"poll_errors"`
	Warning        string     `json:"warning,omitempty"`
	PageLimit      int        `json:"page_limit,omitempty"`
	NewestChangeAt *time.Time `json:"newest_change_at,omitempty"`

	// Counters since start-up (RejectedTotal: ever, kept on disk).
	Pages            uint64 `json:"pages"`
	ChangesRead      uint64 `json:"changes_read"`
	Duplicates       uint64 `json:"duplicates"`
	EventsProduced   uint64 `json:"events_produced"`
	DeliveriesQueued uint64 `json:"deliveries_queued"`
	RejectedChanges  uint64 `json:"rejected_changes"`
	RejectedTotal    uint64 `json:"rejected_total"`
	// Rejected are the last MaxRejected rejected changes, newest last.
	Rejected []Rejected `json:"rejected"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Status returns a snapshot of the feed's state.
func (f *Feed) Status() Status {
	s := f.settings.Load()
	now := f.clock()
	f.smu.Lock()
	p := f.poll
	st := Status{
		Name: f.name, Mode: "push", Cursor: p.cursor,
		CaughtUpAt: timePtr(p.caughtUpAt), LastSuccessAt: timePtr(p.lastOKAt),
		LastError: p.lastErr, LastErrorAt: timePtr(p.lastErrAt), ConsecutiveErrors: p.failures,
		Warning: p.warning, NewestChangeAt: timePtr(p.newestAt),
		RejectedTotal: f.rejTot,
		Rejected:      slices.Clone(f.rej),
	}
	f.smu.Unlock()
	st.ReaderStatus = f.readerStatus()
	if st.Rejected == nil {
		st.Rejected = []Rejected{}
	}
	if s.Poll.URL != "" {
		st.Mode = "poll"
		st.URL = safeURL(s.Poll.URL)
		st.PageLimit = s.Poll.PageSize
		if p.limit > 0 && p.limit < s.Poll.PageSize {
			st.PageLimit = p.limit
		}
		since := p.caughtUpAt
		if since.IsZero() {
			since = p.startedAt
		}
		if !since.IsZero() && now.After(since) && (st.ReaderStatus == nil || st.ReaderHere) {
			st.LagSeconds = now.Sub(since).Seconds()
		}
	}
	st.Pages = f.counters.pages.Load()
	st.ChangesRead = f.counters.read.Load()
	st.Duplicates = f.counters.duplicates.Load()
	st.EventsProduced = f.counters.events.Load()
	st.DeliveriesQueued = f.counters.deliveries.Load()
	st.RejectedChanges = f.counters.rejected.Load()
	st.PollErrors = f.counters.pollErrors.Load()
	return st
}

func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// Ingest processes pushed changes (the push alternative to polling):
// idempotent by change id, like polled ones.
func (f *Feed) Ingest(changes []Change) (Result, error) {
	return f.Process(changes, nil, "push")
}

// IngestBody decodes a pushed body {"changes":[...]} (the page format
// without "next") with the feed's mapping and processes it like Ingest. A
// body that is not such an object is an error wrapping ErrMalformedPage; a
// change inside it that cannot be used is rejected, not an error.
func (f *Feed) IngestBody(body []byte) (Result, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return Result{}, fmt.Errorf("%w: want a JSON object {\"changes\":[...]}", ErrMalformedPage)
	}
	raw, ok := top["changes"]
	var items []json.RawMessage
	if !ok || json.Unmarshal(raw, &items) != nil {
		return Result{}, fmt.Errorf("%w: \"changes\" must be an array", ErrMalformedPage)
	}
	m := f.settings.Load().Mapping
	changes := make([]Change, len(items))
	for i, it := range items {
		changes[i] = DecodeChange(it, m)
	}
	return f.Ingest(changes)
}
