package tokens

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Change names what was changed in a store that several gateway instances
// share, so that each instance reloads it (Service.Refresh).
type Change uint8

// Kinds of change; a notification may carry several.
const (
	// ChangePartners: partners, clients or the generated webhook keys of
	// static partners.
	ChangePartners Change = 1 << iota
	// ChangeKeys: the generated signing keys.
	ChangeKeys
	// ChangeAll: anything may have changed (after the notifications were
	// interrupted, they may have been lost).
	ChangeAll = ChangePartners | ChangeKeys
)

// ChangeNotifier is implemented by a Store that several gateway instances
// share (PostgreSQL). Changes returns once it listens: the channel then
// receives the kinds of every committed change, by any instance, coalesced
// while the reader is busy, and ChangeAll after the notifications were
// interrupted. It is closed when ctx ends. A store used by one process only
// (Badger) does not implement it: the service's own changes are all there
// is.
type ChangeNotifier interface {
	Changes(ctx context.Context) (<-chan Change, error)
}

// DefaultRefreshInterval is how often a service on a shared store reloads
// its state even without a notification: the safety net under the
// notifications.
const DefaultRefreshInterval = 30 * time.Second

// follow reloads the state on every change notification and every
// interval, until the service closes.
func (s *Service) follow(changes <-chan Change, interval time.Duration) {
	defer close(s.followDone)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		var c Change
		select {
		case <-s.stop.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			c = ch
		case <-tick.C:
			c = ChangeAll
		}
		if err := s.Refresh(); err != nil {
			s.log.Warn("reloading partners, clients and keys from the store failed; the next change or the periodic refresh tries again",
				zap.Uint8("change", uint8(c)), zap.Error(err))
		}
	}
}

// Refresh reloads partners, clients, generated signing keys and static
// partners' generated webhook keys from the store, as another instance
// sharing it may have changed them, and swaps them in at once: requests in
// flight keep the snapshot they read. What the configuration sets (static
// partners and clients, configured keys, settings) is kept. When the store
// cannot be read nothing changes; when only the signing keys cannot be
// settled (a new one to store), the rest is applied and the ring kept.
func (s *Service) Refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked()
}

// refreshLocked is Refresh with mu held.
func (s *Service) refreshLocked() error {
	s.reloads.Add(1)
	st, err := s.readState()
	if err != nil {
		return err
	}
	for id := range s.static.partners {
		_, had := s.dynPartners[id]
		if _, clash := st.partners[id]; clash && !had {
			s.log.Warn("a partner created through the admin API of another instance has the id of a partner of this configuration; the configuration's wins here",
				zapPartner(id))
		}
	}
	s.dynPartners, s.dynClients, s.genKeys, s.staticKeys = st.partners, st.clients, st.keys, st.staticKeys
	s.static = s.withKeptKeys(s.static)
	s.publish()
	if s.configured && len(s.cfg.Keys) == 0 {
		r, err := s.generatedRing(s.cfg.Algorithm, false)
		if err != nil {
			return fmt.Errorf("reloading signing keys: %w", err)
		}
		s.ring.Store(r)
	}
	return nil
}

// FindPartner is Partner for a caller that must not mistake a partner
// created on another instance a moment ago for an unknown one (a change of
// the WMS for it): on a shared store, a miss reloads the state first, by a
// reload begun after the miss (one for the misses that wait meanwhile).
// The error is the reload's.
func (s *Service) FindPartner(id string) (Partner, bool, error) {
	if p, ok := s.Partner(id); ok || !s.shared {
		return p, ok, nil
	}
	begun := s.reloads.Load()
	s.mu.Lock()
	var err error
	if s.reloads.Load() == begun {
		err = s.refreshLocked()
	}
	s.mu.Unlock()
	if err != nil {
		return Partner{}, false, err
	}
	p, ok := s.Partner(id)
	return p, ok, nil
}

// withKeptKeys returns static with each partner whose webhook key is
// generated given its kept key (s.staticKeys), sharing what is unchanged.
// Called with mu held.
func (s *Service) withKeptKeys(static *registry) *registry {
	out := &registry{partners: make(map[string]*Partner, len(static.partners)), clients: static.clients}
	for id, p := range static.partners {
		rec, ok := s.staticKeys[id]
		if p.keySource != KeySourceGenerated || !ok || string(p.WebhookKey) == rec.WebhookKey {
			out.partners[id] = p
			continue
		}
		np := *p
		np.WebhookKey = []byte(rec.WebhookKey)
		out.partners[id] = &np
	}
	return out
}
