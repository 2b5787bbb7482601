package webhooks

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Change names what was changed in a storage that several gateway
// instances share, so that each instance reloads it.
type Change uint8

// Kinds of change.
const (
	// ChangeSubscriptions: a subscription was created or deleted.
	ChangeSubscriptions Change = 1 << iota
	// ChangeAll: anything may have changed (after the notifications were
	// interrupted, they may have been lost).
	ChangeAll = ChangeSubscriptions
)

// ChangeNotifier is implemented by a Storage that several gateway
// instances share (PostgreSQL). Changes returns once it listens: the
// channel then receives the kinds of every committed change, by any
// instance, coalesced while the reader is busy, and ChangeAll after the
// notifications were interrupted. It is closed when ctx ends. A storage
// used by one process only (Badger) does not implement it.
type ChangeNotifier interface {
	Changes(ctx context.Context) (<-chan Change, error)
}

// DefaultRefreshInterval is how often a service on a shared storage
// reloads its subscriptions even without a notification: the safety net
// under the notifications.
const DefaultRefreshInterval = 30 * time.Second

// goneLimit bounds the ids of subscriptions known to be deleted
// (SubscriptionStore.gone); past it the set starts again.
const goneLimit = 10000

// follow reloads the subscriptions on every change notification and every
// interval, until the service closes.
func (s *Service) follow(changes <-chan Change, interval time.Duration) {
	defer s.loops.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
		case <-tick.C:
		}
		if err := s.subs.Refresh(); err != nil {
			s.logger().Warn("webhooks: reloading subscriptions failed; the next change or the periodic refresh tries again", zap.Error(err))
		}
	}
}

// Refresh reloads the subscriptions from the storage, as another instance
// sharing it may have created or deleted some, and swaps the index at
// once: a Publish or an attempt in flight keeps what it read. On error
// nothing changes.
func (s *SubscriptionStore) Refresh() error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	return s.refreshLocked()
}

// refreshLocked is Refresh with refreshMu held. A create or delete of this
// instance while the storage is read makes it read again (up to three
// times; then the change's own notification brings it).
func (s *SubscriptionStore) refreshLocked() error {
	s.reloads.Add(1)
	for attempt := 1; ; attempt++ {
		s.mu.RLock()
		gen := s.gen
		s.mu.RUnlock()
		subs, ver, err := s.store.SubscriptionsAt()
		if err != nil {
			return fmt.Errorf("webhooks: reloading subscriptions: %w", err)
		}
		s.mu.Lock()
		if s.gen != gen && attempt < 3 {
			s.mu.Unlock()
			continue
		}
		// A create of this instance missing from subs (read before it
		// committed) leaves ver older than the storage's: the next Sync
		// reloads.
		s.ver = ver
		old := s.byID
		s.byID, s.byPE = map[string]Subscription{}, map[string][]Subscription{}
		for _, sub := range subs {
			s.add(sub)
		}
		for id := range old {
			if _, ok := s.byID[id]; !ok {
				s.markGone(id)
			}
		}
		s.mu.Unlock()
		return nil
	}
}

// Sync makes the index hold every subscription committed before Sync was
// called and none deleted before it. On a shared storage it reads the
// storage's SubscriptionsVersion (one small query) and, when it is not the
// version the index was loaded at, reloads the index (one reload for the
// callers that wait meanwhile). A storage of this process only is current
// already: nothing is read. On error the index is unchanged and may miss
// other instances' latest writes.
func (s *SubscriptionStore) Sync() error {
	if !s.shared {
		return nil
	}
	ver, err := s.store.SubscriptionsVersion()
	if err != nil {
		return fmt.Errorf("webhooks: reading the subscriptions' version: %w", err)
	}
	if s.loadedAt(ver) {
		return nil
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.loadedAt(ver) { // reloaded meanwhile, from a read after ver's
		return nil
	}
	return s.refreshLocked()
}

// loadedAt reports whether the index was loaded at version ver.
func (s *SubscriptionStore) loadedAt(ver uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ver == ver
}

// markGone remembers that subscription id was deleted. Called with mu
// held.
func (s *SubscriptionStore) markGone(id string) {
	if len(s.gone) >= goneLimit {
		s.gone = map[string]struct{}{}
	}
	s.gone[id] = struct{}{}
}

// known reports whether the delivery of partnerID for subscription id is
// still wanted: its subscription exists and is partnerID's. On a shared
// storage, an id neither in memory nor known to be deleted may be a
// subscription another instance created a moment ago: the subscriptions
// are reloaded first, by a reload begun after the miss (one for the misses
// that wait meanwhile). A delivery is queued only after its subscription
// was stored, so an id such a reload does not find was deleted, and is
// remembered as gone. The error is the reload's: whether the subscription
// exists is then unknown, and the attempt fails (and is retried) rather
// than drop the delivery.
func (s *SubscriptionStore) known(id, partnerID string) (bool, error) {
	if sub, ok := s.lookup(id); ok || !s.shared {
		return ok && sub.PartnerID == partnerID, nil
	}
	s.mu.RLock()
	_, gone := s.gone[id]
	s.mu.RUnlock()
	if gone {
		return false, nil
	}
	begun := s.reloads.Load()
	s.refreshMu.Lock()
	var err error
	if s.reloads.Load() == begun {
		err = s.refreshLocked()
	}
	s.refreshMu.Unlock()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.byID[id]
	if !ok {
		s.markGone(id)
	}
	return ok && sub.PartnerID == partnerID, nil
}
