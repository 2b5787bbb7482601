package tokens

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// The operations below are the partner's own, through the portal: they
// work on the clients of any partner, static or not (a static partner may
// add clients beside those of the configuration), while the clients of the
// configuration stay read-only (ErrStatic). CreateClient is the operator's
// too (add-client): one rule for both.

var (
	// ErrLimit: the partner has as many clients as it may have.
	ErrLimit = errors.New("limit reached")
	// ErrDisabled: the partner is disabled. It is an ErrInvalid.
	ErrDisabled = fmt.Errorf("disabled: %w", ErrInvalid)
)

// Bounds of the per-partner client limit (CreateClient's limit).
const (
	DefaultClientLimit = 10
	MaxClientLimit     = 100
)

// hintLen is how many of a secret's last characters its hint shows: 4 of
// 43 base64url characters, 24 of 256 bits, too few to help a guess.
const hintLen = 4

// secretHint is the hint of a generated secret.
func secretHint(secret string) string {
	if len(secret) < 2*hintLen {
		return ""
	}
	return secret[len(secret)-hintLen:]
}

// PartnerClient describes a client of a partner for the partner, without
// its secret.
type PartnerClient struct {
	ID      string
	Active  bool
	Static  bool
	Created time.Time
	// LastUsed is when it last got a token (zero: never).
	LastUsed time.Time
	// Hint is the end of its secret (empty for clients of the
	// configuration).
	Hint string
	// PreviousUntil is when the previous secret stops working after a
	// rotation (zero: no previous secret works).
	PreviousUntil time.Time
}

// PartnerClients lists the clients of a partner, oldest first (those of
// the configuration first).
func (s *Service) PartnerClients(partnerID string) []PartnerClient {
	reg := s.reg.Load()
	now := s.clock()
	var out []PartnerClient
	for _, c := range reg.clients {
		if c.PartnerID != partnerID {
			continue
		}
		pc := PartnerClient{ID: c.ID, Active: c.Active, Static: c.Static, Created: c.Created,
			LastUsed: s.lastUsed(c.ID), Hint: c.hint}
		if !c.prevUntil.IsZero() && now.Before(c.prevUntil) {
			pc.PreviousUntil = c.prevUntil
		}
		out = append(out, pc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Static != out[j].Static {
			return out[i].Static
		}
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// portalPartner returns an enabled partner, static or not. Called with mu
// held.
func (s *Service) portalPartner(id string) (*Partner, error) {
	p, ok := s.reg.Load().partners[id]
	if !ok {
		return nil, fmt.Errorf("partner %s %w", id, ErrNotFound)
	}
	if p.Disabled {
		return nil, fmt.Errorf("partner %s is %w", id, ErrDisabled)
	}
	return p, nil
}

// partnerClient returns a client of partnerID created at run time; a
// client of another partner is ErrNotFound, one of the configuration
// ErrStatic. Called with mu held.
func (s *Service) partnerClient(partnerID, clientID string) (*client, error) {
	if _, err := s.portalPartner(partnerID); err != nil {
		return nil, err
	}
	if c, ok := s.static.clients[clientID]; ok && c.PartnerID == partnerID {
		return nil, fmt.Errorf("client %s is %w", clientID, ErrStatic)
	}
	c, ok := s.dynClients[clientID]
	if !ok || c.PartnerID != partnerID {
		return nil, fmt.Errorf("client %s %w", clientID, ErrNotFound)
	}
	return c, nil
}

// CreateClient adds a client with a fresh secret to an enabled partner
// (static or not; a disabled one is ErrDisabled, an unknown one
// ErrNotFound) that has fewer than limit clients, those of the
// configuration included (ErrLimit). The secret is returned here only.
//
// The limit holds across instances sharing the store: this instance's
// registry gives the quick refusal, and the store, which sees the clients
// every instance created, decides (ClientStore.CreateClient). The store
// holds only clients created at run time, so it is given the limit less
// the partner's clients of the configuration, which every instance has.
func (s *Service) CreateClient(partnerID string, limit int) (Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.portalPartner(partnerID); err != nil {
		return Credentials{}, err
	}
	n := 0
	for _, c := range s.reg.Load().clients {
		if c.PartnerID == partnerID {
			n++
		}
	}
	if n >= limit {
		return Credentials{}, fmt.Errorf("partner %s has %d clients: %w", partnerID, n, ErrLimit)
	}
	c, creds, err := s.newClient(partnerID)
	if err != nil {
		return Credentials{}, err
	}
	if _, clash := s.static.clients[c.ID]; clash {
		return Credentials{}, fmt.Errorf("client %s %w", c.ID, ErrExists)
	}
	static := 0
	for _, sc := range s.static.clients {
		if sc.PartnerID == partnerID {
			static++
		}
	}
	err = s.store.CreateClient(recordOf(c), limit-static)
	if errors.Is(err, ErrClientLimit) {
		// Another instance added clients this one has not seen yet.
		return Credentials{}, fmt.Errorf("partner %s has %d clients or more: %w (%w)", partnerID, limit, ErrLimit, err)
	}
	if err != nil {
		return Credentials{}, err
	}
	s.adoptClient(c)
	s.log.Info("client added", zapPartner(partnerID), zapClient(c.ID))
	return creds, nil
}

// RotateClientSecret gives a client of partnerID a fresh secret. The
// previous secret keeps authenticating for grace (0: it stops at once,
// and so do the client's tokens); tokens issued before or during the
// grace period stay valid until they expire. Only the secret in use
// before this rotation is kept: rotating again within the grace period
// ends the grace of the one before.
func (s *Service) RotateClientSecret(partnerID, clientID string, grace time.Duration) (Credentials, error) {
	if grace < 0 {
		return Credentials{}, fmt.Errorf("%w: negative grace period", ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.partnerClient(partnerID, clientID)
	if err != nil {
		return Credentials{}, err
	}
	secret, err := newSecret(s.rand)
	if err != nil {
		return Credentials{}, err
	}
	c := *old
	c.hash, c.hint = s.hasher.hash(secretDigest(secret)), secretHint(secret)
	c.prevHash, c.prevUntil = [32]byte{}, time.Time{}
	if grace > 0 {
		c.prevHash, c.prevUntil = old.hash, s.clock().Add(grace).UTC()
	} else {
		if c.version, err = newClientVersion(s.rand); err != nil {
			return Credentials{}, err
		}
		c.legacySV = ""
	}
	if err := s.updateClient(&c); err != nil {
		return Credentials{}, err
	}
	s.log.Info("client secret rotated", zapPartner(partnerID), zapClient(clientID), zapDuration("grace", grace))
	return Credentials{ClientID: clientID, ClientSecret: secret}, nil
}

// RevokeClient deletes a client of partnerID: it gets no token, and every
// token it holds is refused at once.
func (s *Service) RevokeClient(partnerID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.partnerClient(partnerID, clientID); err != nil {
		return err
	}
	if err := s.store.DeleteClient(clientID); err != nil {
		return err
	}
	delete(s.dynClients, clientID)
	s.reuse.Delete(clientID)
	s.publish()
	s.log.Info("client revoked", zapPartner(partnerID), zapClient(clientID))
	return nil
}
