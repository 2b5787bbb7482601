package webhooks

import (
	"fmt"
	"sync"
	"time"
)

// sharedSubsTTL is how long a subscription found in the store for a shared
// queue's delivery is remembered.
const sharedSubsTTL = 30 * time.Second

// maxSharedSubs bounds the subscriptions remembered (the memory is cleared
// when it is full).
const maxSharedSubs = 4096

// sharedSubs remembers what the store said of subscriptions this instance
// did not know, for a queue shared with other instances.
type sharedSubs struct {
	mu   sync.Mutex
	seen map[string]sharedSub
}

type sharedSub struct {
	sub     Subscription
	found   bool
	checked time.Time
}

// sharedSubscription looks subscription id up in the store, for a delivery
// of a shared queue whose subscription this instance does not know: it may
// have been created on another instance after this one loaded the
// subscriptions, and its deliveries must not be dropped here. A
// subscription the store does not have was deleted (ids are never reused)
// and is remembered as gone; one it has is remembered for sharedSubsTTL.
func (s *Service) sharedSubscription(id string) (Subscription, bool, error) {
	now := time.Now()
	m := &s.shared
	m.mu.Lock()
	if e, ok := m.seen[id]; ok && (!e.found || now.Sub(e.checked) < sharedSubsTTL) {
		m.mu.Unlock()
		return e.sub, e.found, nil
	}
	m.mu.Unlock()
	all, err := s.store.Subscriptions()
	if err != nil {
		return Subscription{}, false, fmt.Errorf("reading the subscriptions: %w", err)
	}
	e := sharedSub{checked: now}
	for _, sub := range all {
		if sub.ID == id {
			e.sub, e.found = sub, true
			break
		}
	}
	m.mu.Lock()
	if m.seen == nil || len(m.seen) >= maxSharedSubs {
		m.seen = map[string]sharedSub{}
	}
	m.seen[id] = e
	m.mu.Unlock()
	return e.sub, e.found, nil
}
