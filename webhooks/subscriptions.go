package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
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

// Badger keys of subscriptions ("\x00" separates parts; partner ids and
// events never contain it):
//
//	wh/sub/<id>                          → Subscription JSON
//	wh/sp/<partner>\x00<id>              → "" (index by partner)
//	wh/su/<partner>\x00<event>\x00<url>  → id (uniqueness, idempotent create)
//	wh/sc/<partner>                      → count (decimal; serialises creates)
//
// The index by partner and event is kept in memory (byPE), loaded at start
// and updated after each commit; Publish reads it on every call.
const (
	subPrefix      = "wh/sub/"
	subPartnerPref = "wh/sp/"
	subUniquePref  = "wh/su/"
	subCountPref   = "wh/sc/"
)

// SubscriptionStore keeps subscriptions in Badger with an in-memory index.
type SubscriptionStore struct {
	db    *badger.DB
	cfg   *atomic.Pointer[settings] // the service's: policy, allow_http, limit
	clock func() time.Time

	mu   sync.RWMutex
	byID map[string]Subscription
	byPE map[string][]Subscription // partner\x00event → subscriptions
}

func newSubscriptionStore(db *badger.DB, cfg *atomic.Pointer[settings]) (*SubscriptionStore, error) {
	s := &SubscriptionStore{db: db, cfg: cfg, clock: cfg.Load().opts.Clock,
		byID: map[string]Subscription{}, byPE: map[string][]Subscription{}}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(subPrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var sub Subscription
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &sub) }); err != nil {
				return err
			}
			s.add(sub)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.repair(); err != nil {
		return nil, err
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
	uniq := uniqueKey(partnerID, event, u)
	countKey := []byte(subCountPref + partnerID)
	for {
		var sub Subscription
		created := false
		err := s.db.Update(func(txn *badger.Txn) error {
			if it, err := txn.Get(uniq); err == nil {
				id, err := it.ValueCopy(nil)
				if err != nil {
					return err
				}
				sub, err = getSub(txn, string(id))
				if !errors.Is(err, ErrNotFound) {
					return err
				}
				// An orphan key (its subscription is gone): replaced below.
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			n := 0
			if it, err := txn.Get(countKey); err == nil {
				v, _ := it.ValueCopy(nil)
				n, _ = strconv.Atoi(string(v))
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			if n >= cfg.MaxSubscriptionsPerPartner {
				return ErrLimit
			}
			sub = Subscription{ID: newID("sub_"), PartnerID: partnerID, NotificationURL: rawURL,
				Event: event, CreatedAt: s.clock().UTC().Truncate(time.Second)}
			v, _ := json.Marshal(sub)
			created = true
			return errors.Join(
				txn.Set([]byte(subPrefix+sub.ID), v),
				txn.Set([]byte(subPartnerPref+partnerID+"\x00"+sub.ID), nil),
				txn.Set(uniq, []byte(sub.ID)),
				txn.Set(countKey, []byte(strconv.Itoa(n+1))),
			)
		})
		if errors.Is(err, badger.ErrConflict) {
			if ctx.Err() != nil {
				return Subscription{}, false, ctx.Err()
			}
			continue
		}
		if err != nil {
			return Subscription{}, false, err
		}
		if created {
			s.mu.Lock()
			s.add(sub)
			s.mu.Unlock()
		}
		return sub, created, nil
	}
}

func getSub(txn *badger.Txn, id string) (Subscription, error) {
	var sub Subscription
	it, err := txn.Get([]byte(subPrefix + id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return sub, ErrNotFound
	} else if err != nil {
		return sub, err
	}
	err = it.Value(func(v []byte) error { return json.Unmarshal(v, &sub) })
	return sub, err
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
	countKey := []byte(subCountPref + partnerID)
	for {
		var sub Subscription
		err := s.db.Update(func(txn *badger.Txn) error {
			var err error
			sub, err = getSub(txn, id)
			if err != nil {
				return err
			}
			if sub.PartnerID != partnerID {
				return ErrNotFound
			}
			n := 0
			if it, err := txn.Get(countKey); err == nil {
				v, _ := it.ValueCopy(nil)
				n, _ = strconv.Atoi(string(v))
			}
			return errors.Join(
				txn.Delete([]byte(subPrefix+id)),
				txn.Delete([]byte(subPartnerPref+partnerID+"\x00"+id)),
				txn.Delete(sub.uniqueKey()),
				txn.Set(countKey, []byte(strconv.Itoa(max(n-1, 0)))),
			)
		})
		if errors.Is(err, badger.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.remove(sub)
		s.mu.Unlock()
		return nil
	}
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
