package webhooks

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Subscription is a partner's request to be told about one event at one URL.
type Subscription struct {
	ID              string    `json:"id"`
	PartnerID       string    `json:"partnerId"`
	NotificationURL string    `json:"notificationUrl"`
	Event           string    `json:"event"`
	CreatedAt       time.Time `json:"createdAt"`
}

// MaxURLLength is the longest notification URL accepted.
const MaxURLLength = 2048

// SubscriptionStore keeps subscriptions in the storage backend
// (SubscriptionStorage) with an index by partner and event in memory
// (byPE), loaded at start and updated after each commit; Publish reads it
// on every call.
type SubscriptionStore struct {
	store SubscriptionStorage
	cfg   *atomic.Pointer[settings] // the service's: policy, allow_http, limit
	clock func() time.Time

	mu   sync.RWMutex
	byID map[string]Subscription
	byPE map[string][]Subscription // partner\x00event → subscriptions
	gen  uint64                    // counts this instance's creates and deletes (Refresh)
	ver  uint64                    // the storage's SubscriptionsVersion the index was loaded at
	gone map[string]struct{}       // ids of subscriptions known to be deleted (changes.go)

	// shared: other instances change the storage too (ChangeNotifier),
	// so the index is reloaded (Refresh) on their changes.
	shared    bool
	refreshMu sync.Mutex    // one reload at a time
	reloads   atomic.Uint64 // reloads begun
}

func newSubscriptionStore(store SubscriptionStorage, cfg *atomic.Pointer[settings], shared bool) (*SubscriptionStore, error) {
	s := &SubscriptionStore{store: store, cfg: cfg, clock: cfg.Load().opts.Clock, shared: shared,
		byID: map[string]Subscription{}, byPE: map[string][]Subscription{}, gone: map[string]struct{}{}}
	subs, ver, err := store.SubscriptionsAt()
	if err != nil {
		return nil, fmt.Errorf("webhooks: loading subscriptions: %w", err)
	}
	s.ver = ver
	for _, sub := range subs {
		s.add(sub)
	}
	orphans, counts, err := store.RepairSubscriptions()
	if err != nil {
		return nil, fmt.Errorf("webhooks: repairing the subscription index: %w", err)
	}
	if orphans > 0 || counts > 0 {
		cfg.Load().opts.Logger.Warn("webhooks: repaired the subscription index",
			zap.Int("orphan_keys_removed", orphans), zap.Int("counts_corrected", counts))
	}
	return s, nil
}

func peKey(partner, event string) string { return partner + "\x00" + event }

func (s *SubscriptionStore) add(sub Subscription) {
	s.byID[sub.ID] = sub
	k := peKey(sub.PartnerID, sub.Event)
	s.byPE[k] = append(s.byPE[k], sub)
}

func (s *SubscriptionStore) remove(sub Subscription) {
	delete(s.byID, sub.ID)
	k := peKey(sub.PartnerID, sub.Event)
	l := slices.DeleteFunc(slices.Clone(s.byPE[k]), func(x Subscription) bool { return x.ID == sub.ID })
	if len(l) == 0 {
		delete(s.byPE, k)
	} else {
		s.byPE[k] = l
	}
}

func validPartner(p string) bool { return p != "" && !strings.ContainsRune(p, 0) && len(p) <= 256 }

// ValidateURL checks a notification URL's form (not its addresses).
func (s *SubscriptionStore) ValidateURL(raw string) (*url.URL, error) {
	return validateURL(raw, s.cfg.Load().opts.AllowHTTP)
}

func validateURL(raw string, allowHTTP bool) (*url.URL, error) {
	bad := func(reason string) (*url.URL, error) {
		return nil, &ValidationError{Field: "notificationUrl", Reason: reason}
	}
	if raw == "" {
		return bad("required")
	}
	if len(raw) > MaxURLLength {
		return bad("longer than " + strconv.Itoa(MaxURLLength) + " characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("not a valid URL")
	}
	switch {
	case !u.IsAbs():
		return bad("must be an absolute URL")
	case u.Scheme != "https" && !(u.Scheme == "http" && allowHTTP):
		if allowHTTP {
			return bad("scheme must be https or http")
		}
		return bad("scheme must be https")
	case u.Opaque != "":
		return bad("must be a hierarchical URL (scheme://host/path)")
	case u.User != nil:
		return bad("must not contain user info")
	case u.Hostname() == "":
		return bad("must name a host")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("must not contain a fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("invalid port")
		}
	}
	return u, nil
}

// Create registers partnerID's subscription of event at rawURL. The same
// partner, url and event again returns the existing subscription with
// created false. Errors: *ValidationError (field notificationUrl or event),
// ErrLimit, or a storage error.
func (s *SubscriptionStore) Create(ctx context.Context, partnerID, rawURL, event string) (Subscription, bool, error) {
	if !validPartner(partnerID) {
		return Subscription{}, false, &ValidationError{Field: "partner", Reason: "invalid partner id"}
	}
	cfg := s.cfg.Load().opts // one snapshot for the whole create
	u, err := validateURL(rawURL, cfg.AllowHTTP)
	if err != nil {
		return Subscription{}, false, err
	}
	if event == "" {
		return Subscription{}, false, &ValidationError{Field: "event", Reason: "required"}
	}
	if !ValidEvent(event) {
		return Subscription{}, false, &ValidationError{Field: "event",
			Reason: "must be one of " + strings.Join(EventNames, ", ")}
	}
	if err := cfg.Policy.ForPartner(partnerID).CheckHost(ctx, u.Hostname(), urlPort(u)); err != nil {
		return Subscription{}, false, hostRefusal(ctx, err)
	}
	sub := Subscription{ID: newID("sub_"), PartnerID: partnerID, NotificationURL: rawURL,
		Event: event, CreatedAt: s.clock().UTC().Truncate(time.Second)}
	sub, created, err := s.store.CreateSubscription(ctx, sub, cfg.MaxSubscriptionsPerPartner)
	if err != nil {
		return Subscription{}, false, err
	}
	s.mu.Lock()
	if _, ok := s.byID[sub.ID]; !ok {
		// Created now, or by another instance sharing the storage and
		// not reloaded yet.
		s.add(sub)
		s.gen++
	}
	s.mu.Unlock()
	return sub, created, nil
}

// List returns partnerID's subscriptions, oldest first.
func (s *SubscriptionStore) List(partnerID string) ([]Subscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Subscription
	for _, ev := range EventNames {
		out = append(out, s.byPE[peKey(partnerID, ev)]...)
	}
	slices.SortFunc(out, func(a, b Subscription) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Get returns partnerID's subscription id; another partner's id is
// ErrNotFound.
func (s *SubscriptionStore) Get(partnerID, id string) (Subscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.byID[id]
	if !ok || sub.PartnerID != partnerID {
		return Subscription{}, ErrNotFound
	}
	return sub, nil
}

// lookup returns any subscription by id (dispatcher, operations).
func (s *SubscriptionStore) lookup(id string) (Subscription, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.byID[id]
	return sub, ok
}

// Delete removes partnerID's subscription id; another partner's id is
// ErrNotFound. Its queued deliveries are dropped when the dispatcher meets
// them.
func (s *SubscriptionStore) Delete(partnerID, id string) error {
	sub, err := s.store.DeleteSubscription(partnerID, id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.remove(sub)
	s.markGone(sub.ID)
	s.gen++
	s.mu.Unlock()
	return nil
}

// ForPartnerEvent returns partnerID's subscriptions of event (from memory).
func (s *SubscriptionStore) ForPartnerEvent(partnerID, event string) ([]Subscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.byPE[peKey(partnerID, event)]), nil
}

// urlPort is the port a request to u connects to (validated URLs only).
func urlPort(u *url.URL) uint16 {
	if p := u.Port(); p != "" {
		n, _ := strconv.ParseUint(p, 10, 16) // validateURL checked it
		return uint16(n)
	}
	if strings.EqualFold(u.Scheme, "http") {
		return 80
	}
	return 443
}

// hostRefusal is the partner's answer for a notification host the policy
// refused or that does not resolve: one answer for both, so registration
// does not tell which internal host names exist. It names the rule, never
// the addresses a name resolved to nor the resolver's error (which would
// show the warehouse's internal DNS); a cancelled or timed-out look-up
// stays a context error.
func hostRefusal(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &ValidationError{Field: "notificationUrl", Reason: hostNotAllowed}
}

// hostNotAllowed is the reason given for every refused notification host.
const hostNotAllowed = "host not allowed: it must resolve, and only to public addresses " +
	"(not loopback, private, link-local, multicast or unspecified, nor the gateway itself) " +
	"unless the gateway's configuration allows them"

// sameURLKey is the form of a notification URL that decides whether two
// subscriptions are the same: scheme and host are case-insensitive
// (RFC 3986 §6.2.2.1), the rest is compared in the URL's escaped form.
func sameURLKey(u *url.URL) string {
	k := *u
	k.Scheme, k.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return k.String()
}

// SubscriptionUniqueKey is what makes a subscription unique: partner, event
// and the URL's comparison form (sameURLKey; a URL that no longer parses
// counts in its raw form), joined by NUL. A storage backend's uniqueness
// index is on it.
func SubscriptionUniqueKey(sub Subscription) string {
	u, err := url.Parse(sub.NotificationURL)
	if err != nil {
		return sub.PartnerID + "\x00" + sub.Event + "\x00" + sub.NotificationURL
	}
	return sub.PartnerID + "\x00" + sub.Event + "\x00" + sameURLKey(u)
}
