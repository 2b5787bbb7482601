package webhooks

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"net/url"
	"strings"
	"time"
)

// MaxAttemptLog is how many attempts a delivery remembers (the latest).
const MaxAttemptLog = 20

// AttemptRecord is one entry of a delivery's attempt log.
type AttemptRecord struct {
	At      time.Time     `json:"at"`
	Attempt int           `json:"attempt"`
	Status  int           `json:"status,omitempty"` // HTTP status; 0 when Error is set
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latencyNs"`
}

// delivery is the stored state of one event for one subscription (stored
// as in record.go; the JSON names are those of records written before).
type delivery struct {
	ID             string          `json:"id"`
	SubscriptionID string          `json:"sub"`
	PartnerID      string          `json:"partner"`
	Event          Event           `json:"ev"`
	URL            string          `json:"url"`
	Test           bool            `json:"test,omitempty"`
	Attempts       int             `json:"n"`               // attempts made in the current window
	TotalAttempts  int             `json:"total,omitempty"` // attempts made ever (replays included)
	Created        time.Time       `json:"created"`
	First          time.Time       `json:"first,omitzero"` // first attempt of the current window
	Due            time.Time       `json:"due"`            // next attempt (queued), when it died (dead) or was delivered (delivered)
	Expires        time.Time       `json:"exp,omitzero"`   // dead only: when the dead letter is purged
	Log            []AttemptRecord `json:"log,omitempty"`
}

// Delivery states, as the delivery log shows them.
const (
	StateQueued    = "queued"    // waiting for its first attempt
	StateRetrying  = "retrying"  // an attempt failed; the next is scheduled
	StateDelivered = "delivered" // a 2xx answer arrived
	StateDead      = "dead"      // out of attempts; kept for replay until it expires
)

// DeliveryInfo is the operations view of a queued, dead or delivered
// delivery.
type DeliveryInfo struct {
	ID             string          `json:"id"` // the x-hook-id
	State          string          `json:"state"`
	SubscriptionID string          `json:"subscriptionId"`
	PartnerID      string          `json:"partnerId"`
	Event          string          `json:"event"`
	Identifier     string          `json:"identifier"`
	URL            string          `json:"notificationUrl"`
	Test           bool            `json:"test,omitempty"`
	Attempts       int             `json:"attempts"`
	Created        time.Time       `json:"createdAt"`
	FirstAttempt   time.Time       `json:"firstAttemptAt,omitzero"`
	NextAttempt    time.Time       `json:"nextAttemptAt,omitzero"` // queued only
	DeadAt         time.Time       `json:"deadAt,omitzero"`        // dead only
	DeliveredAt    time.Time       `json:"deliveredAt,omitzero"`   // delivered only
	Log            []AttemptRecord `json:"log"`
}

// ListFilter narrows Queued and Dead. Zero fields match everything; Limit 0
// means 100, at most 10000.
type ListFilter struct {
	SubscriptionID string
	PartnerID      string
	Limit          int
	// DiedSince, for Dead, keeps the deliveries that died at or after it.
	DiedSince time.Time
}

func (f ListFilter) limit() int {
	switch {
	case f.Limit <= 0:
		return 100
	case f.Limit > 10000:
		return 10000
	}
	return f.Limit
}

func (f ListFilter) match(d *delivery) bool {
	return (f.SubscriptionID == "" || f.SubscriptionID == d.SubscriptionID) &&
		(f.PartnerID == "" || f.PartnerID == d.PartnerID)
}

func (d *delivery) info(state string) DeliveryInfo {
	in := DeliveryInfo{ID: d.ID, SubscriptionID: d.SubscriptionID, PartnerID: d.PartnerID,
		Event: d.Event.Name, Identifier: d.Event.Identifier, URL: d.URL, Test: d.Test,
		Attempts: d.Attempts, Created: d.Created, FirstAttempt: d.First, Log: d.Log}
	if in.Log == nil {
		in.Log = []AttemptRecord{}
	}
	in.State = state
	switch state {
	case StateDead:
		in.DeadAt = d.Due
	case StateDelivered:
		in.DeliveredAt = d.Due
	default:
		in.NextAttempt = d.Due
		if d.Attempts > 0 {
			in.State = StateRetrying
		}
	}
	return in
}

func (d *delivery) logAttempt(r AttemptRecord) {
	d.Log = append(d.Log, r)
	if n := len(d.Log); n > MaxAttemptLog {
		d.Log = append(d.Log[:0:0], d.Log[n-MaxAttemptLog:]...)
	}
}

// target is the per-target concurrency key: the notification URL's host
// (with port), lower-cased.
func target(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return strings.ToLower(u.Host)
}

// entry is d's queue entry: at its next attempt, with its record.
func (d *delivery) entry() QueueEntry {
	return QueueEntry{Pos: SchedulePos(d.Due, d.ID), ID: d.ID, PartnerID: d.PartnerID,
		SubscriptionID: d.SubscriptionID, Record: d.marshal()}
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// deliveryID is the id of a delivery to subscription sub of an event named
// by key: stable when key is not empty (the same key and subscription always
// give the same id), random otherwise.
func deliveryID(key, sub string) string {
	if key == "" {
		return newID("whd_")
	}
	h := sha256.New()
	h.Write([]byte("fulfilgate delivery id\x00"))
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(sub))
	return "whd_" + idEncoding.EncodeToString(h.Sum(nil)[:16])
}

// newID returns prefix + 16 random bytes in lower-case base32 (26 chars).
func newID(prefix string) string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return prefix + idEncoding.EncodeToString(b[:])
}
