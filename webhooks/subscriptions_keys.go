package webhooks

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
)

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

// uniqueKey is the Badger key that makes partnerID's subscription of event
// at u unique. Create writes it and Delete removes it, both through this
// function, so the two always agree.
func uniqueKey(partnerID, event string, u *url.URL) []byte {
	return []byte(subUniquePref + partnerID + "\x00" + event + "\x00" + sameURLKey(u))
}

// uniqueKey is sub's uniqueness key, from its stored notification URL (as
// validated at creation; one that no longer parses keys on its raw form).
func (sub Subscription) uniqueKey() []byte {
	u, err := url.Parse(sub.NotificationURL)
	if err != nil {
		return []byte(subUniquePref + sub.PartnerID + "\x00" + sub.Event + "\x00" + sub.NotificationURL)
	}
	return uniqueKey(sub.PartnerID, sub.Event, u)
}

// repair runs once when the store opens, after the subscriptions are
// loaded: it removes every uniqueness key that is not the key of the
// subscription it names (that subscription was deleted, and an earlier
// version's Delete left the key behind), and sets every partner's count to
// the number of subscriptions it has. An orphan key would otherwise make a
// create of the same URL answer "not found" and never be removed.
func (s *SubscriptionStore) repair() error {
	var orphans [][]byte
	stored := map[string]int{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(subUniquePref), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			id, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			sub, ok := s.byID[string(id)]
			if !ok || !bytes.Equal(sub.uniqueKey(), k) {
				orphans = append(orphans, k)
			}
		}
		ct := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(subCountPref), PrefetchValues: true})
		defer ct.Close()
		for ct.Rewind(); ct.Valid(); ct.Next() {
			v, err := ct.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(v)) // unreadable: wrong, set again below
			stored[string(ct.Item().Key()[len(subCountPref):])] = n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhooks: checking subscription keys: %w", err)
	}
	actual := map[string]int{}
	for _, sub := range s.byID {
		actual[sub.PartnerID]++
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	fixed := 0
	for _, k := range orphans {
		if err := wb.Delete(k); err != nil {
			return fmt.Errorf("webhooks: removing an orphan subscription key: %w", err)
		}
	}
	for p, n := range stored {
		if actual[p] != n {
			fixed++
			if err := wb.Set([]byte(subCountPref+p), []byte(strconv.Itoa(actual[p]))); err != nil {
				return fmt.Errorf("webhooks: correcting a subscription count: %w", err)
			}
		}
	}
	for p, n := range actual {
		if _, ok := stored[p]; !ok {
			fixed++
			if err := wb.Set([]byte(subCountPref+p), []byte(strconv.Itoa(n))); err != nil {
				return fmt.Errorf("webhooks: correcting a subscription count: %w", err)
			}
		}
	}
	if len(orphans) == 0 && fixed == 0 {
		return nil
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("webhooks: repairing subscription keys: %w", err)
	}
	s.cfg.Load().opts.Logger.Warn("webhooks: repaired the subscription index",
		zap.Int("orphan_keys_removed", len(orphans)), zap.Int("counts_corrected", fixed))
	return nil
}
