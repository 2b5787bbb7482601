package badgerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Keys of subscriptions ("\x00" separates parts; partner ids and events
// never contain it):
//
//	wh/sub/<id>                     → Subscription JSON
//	wh/sp/<partner>\x00<id>         → "" (index by partner)
//	wh/su/<unique key>              → id (webhooks.SubscriptionUniqueKey: idempotent create)
//	wh/sc/<partner>                 → count (decimal; serialises creates)
const (
	subPrefix      = "wh/sub/"
	subPartnerPref = "wh/sp/"
	subUniquePref  = "wh/su/"
	subCountPref   = "wh/sc/"
)

// webhookStore is webhooks.Storage.
type webhookStore struct {
	db    *badger.DB
	rings rings // the delivered records' slots (delivered.go)
}

func uniqueKey(sub webhooks.Subscription) []byte {
	return []byte(subUniquePref + webhooks.SubscriptionUniqueKey(sub))
}

func (s *webhookStore) Subscriptions() ([]webhooks.Subscription, error) {
	return listJSON[webhooks.Subscription](s.db, subPrefix)
}

// SubscriptionsAt returns the subscriptions at version 0: only this
// process opens the database, and its index is told of each of its writes.
func (s *webhookStore) SubscriptionsAt() ([]webhooks.Subscription, uint64, error) {
	subs, err := s.Subscriptions()
	return subs, 0, err
}

// SubscriptionsVersion is always 0 (SubscriptionsAt).
func (s *webhookStore) SubscriptionsVersion() (uint64, error) { return 0, nil }

// count reads a partner's subscription count (0 when unset or unreadable).
func count(txn *badger.Txn, key []byte) (int, error) {
	it, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	v, err := it.ValueCopy(nil)
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(string(v)) // unreadable: RepairSubscriptions corrects it
	return n, nil
}

// CreateSubscription runs in a transaction that reads the uniqueness key
// and the partner's count, so concurrent creates conflict and are retried:
// one stores, the others find it.
func (s *webhookStore) CreateSubscription(ctx context.Context, sub webhooks.Subscription, limit int) (webhooks.Subscription, bool, error) {
	uniq := uniqueKey(sub)
	countKey := []byte(subCountPref + sub.PartnerID)
	for {
		stored, created := sub, false
		err := s.db.Update(func(txn *badger.Txn) error {
			if it, err := txn.Get(uniq); err == nil {
				id, err := it.ValueCopy(nil)
				if err != nil {
					return err
				}
				stored, err = getSub(txn, string(id))
				if !errors.Is(err, webhooks.ErrNotFound) {
					return err
				}
				// An orphan key (its subscription is gone): replaced below.
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			n, err := count(txn, countKey)
			if err != nil {
				return err
			}
			if n >= limit {
				return webhooks.ErrLimit
			}
			v, err := json.Marshal(sub)
			if err != nil {
				return err
			}
			stored, created = sub, true
			return errors.Join(
				txn.Set([]byte(subPrefix+sub.ID), v),
				txn.Set([]byte(subPartnerPref+sub.PartnerID+"\x00"+sub.ID), nil),
				txn.Set(uniq, []byte(sub.ID)),
				txn.Set(countKey, []byte(strconv.Itoa(n+1))),
			)
		})
		if errors.Is(err, badger.ErrConflict) {
			if ctx.Err() != nil {
				return webhooks.Subscription{}, false, ctx.Err()
			}
			continue
		}
		if err != nil {
			return webhooks.Subscription{}, false, err
		}
		return stored, created, nil
	}
}

func getSub(txn *badger.Txn, id string) (webhooks.Subscription, error) {
	var sub webhooks.Subscription
	it, err := txn.Get([]byte(subPrefix + id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return sub, webhooks.ErrNotFound
	} else if err != nil {
		return sub, err
	}
	err = it.Value(func(v []byte) error { return json.Unmarshal(v, &sub) })
	return sub, err
}

func (s *webhookStore) DeleteSubscription(partnerID, id string) (webhooks.Subscription, error) {
	countKey := []byte(subCountPref + partnerID)
	var sub webhooks.Subscription
	err := update(s.db, func(txn *badger.Txn) error {
		var err error
		sub, err = getSub(txn, id)
		if err != nil {
			return err
		}
		if sub.PartnerID != partnerID {
			return webhooks.ErrNotFound
		}
		n, err := count(txn, countKey)
		if err != nil {
			return err
		}
		return errors.Join(
			txn.Delete([]byte(subPrefix+id)),
			txn.Delete([]byte(subPartnerPref+partnerID+"\x00"+id)),
			txn.Delete(uniqueKey(sub)),
			txn.Set(countKey, []byte(strconv.Itoa(max(n-1, 0)))),
		)
	})
	if err != nil {
		return webhooks.Subscription{}, err
	}
	return sub, nil
}

// RepairSubscriptions removes every uniqueness key that is not the key of
// the subscription it names (that subscription was deleted, and an earlier
// version's delete left the key behind), and sets every partner's count to
// the number of subscriptions it has. An orphan key would otherwise make a
// create of the same URL answer "not found" and never be removed.
func (s *webhookStore) RepairSubscriptions() (orphanCount, fixed int, err error) {
	subs, err := s.Subscriptions()
	if err != nil {
		return 0, 0, err
	}
	byID := make(map[string]webhooks.Subscription, len(subs))
	actual := map[string]int{}
	for _, sub := range subs {
		byID[sub.ID] = sub
		actual[sub.PartnerID]++
	}
	var orphans [][]byte
	stored := map[string]int{}
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(subUniquePref), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			id, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			sub, ok := byID[string(id)]
			if !ok || string(uniqueKey(sub)) != string(k) {
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
		return 0, 0, fmt.Errorf("checking subscription keys: %w", err)
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range orphans {
		if err := wb.Delete(k); err != nil {
			return 0, 0, fmt.Errorf("removing an orphan subscription key: %w", err)
		}
	}
	for p, n := range stored {
		if actual[p] != n {
			fixed++
			if err := wb.Set([]byte(subCountPref+p), []byte(strconv.Itoa(actual[p]))); err != nil {
				return 0, 0, fmt.Errorf("correcting a subscription count: %w", err)
			}
		}
	}
	for p, n := range actual {
		if _, ok := stored[p]; !ok {
			fixed++
			if err := wb.Set([]byte(subCountPref+p), []byte(strconv.Itoa(n))); err != nil {
				return 0, 0, fmt.Errorf("correcting a subscription count: %w", err)
			}
		}
	}
	if len(orphans) == 0 && fixed == 0 {
		return 0, 0, nil
	}
	if err := wb.Flush(); err != nil {
		return 0, 0, fmt.Errorf("repairing subscription keys: %w", err)
	}
	return len(orphans), fixed, nil
}
