package tokens

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// load reads the pepper (creating it on first use), generated keys and
// dynamic partners and clients.
func (s *Service) load() error {
	pepper, err := s.store.Pepper(func() ([]byte, error) {
		pepper := make([]byte, 32)
		_, err := io.ReadFull(s.rand, pepper)
		return pepper, err
	})
	if err != nil {
		return fmt.Errorf("reading the pepper: %w", err)
	}
	s.hasher = hasher{pepper: pepper}
	st, err := s.readState()
	if err != nil {
		return err
	}
	s.dynPartners, s.dynClients, s.genKeys, s.staticKeys = st.partners, st.clients, st.keys, st.staticKeys
	return s.loadUsage()
}

// storedState is what the store holds besides the pepper.
type storedState struct {
	partners   map[string]*Partner
	clients    map[string]*client
	keys       map[string]*key
	staticKeys map[string]StaticKeyRecord
}

// readState reads the dynamic partners and clients, the generated keys and
// the kept webhook keys of static partners.
func (s *Service) readState() (storedState, error) {
	st := storedState{partners: map[string]*Partner{}, clients: map[string]*client{}}
	partners, err := s.store.Partners()
	if err != nil {
		return st, fmt.Errorf("reading partners: %w", err)
	}
	for _, r := range partners {
		st.partners[r.ID] = &Partner{ID: r.ID, Consolidation: r.Consolidation,
			WebhookKey: []byte(r.WebhookKey), Disabled: r.Disabled, Created: r.Created, keySource: KeySourceGenerated}
	}
	if st.staticKeys, err = s.readStaticKeys(); err != nil {
		return st, err
	}
	clients, err := s.store.Clients()
	if err != nil {
		return st, fmt.Errorf("reading clients: %w", err)
	}
	for _, r := range clients {
		if len(r.Hash) != 32 {
			return st, fmt.Errorf("client %s: corrupt hash", r.ID)
		}
		c := &client{ID: r.ID, PartnerID: r.Partner, version: r.Version, Active: r.Active, Created: r.Created,
			hint: r.Hint, prevUntil: r.PrevUntil}
		if !r.OpaqueVersion {
			c.legacySV = r.Version
		}
		copy(c.hash[:], r.Hash)
		if len(r.PrevHash) == len(c.prevHash) {
			copy(c.prevHash[:], r.PrevHash)
		} else {
			c.prevUntil = time.Time{}
		}
		st.clients[r.ID] = c
	}
	st.keys, err = s.readKeys()
	return st, err
}

// readKeys reads the generated signing keys.
func (s *Service) readKeys() (map[string]*key, error) {
	keys, err := s.store.SigningKeys()
	if err != nil {
		return nil, fmt.Errorf("reading signing keys: %w", err)
	}
	out := make(map[string]*key, len(keys))
	for _, r := range keys {
		k, err := newKey(r.KID, r.Alg, r.Material)
		if err != nil {
			return nil, err
		}
		k.Created, k.Retired = r.Created, r.Retired
		out[k.KID] = k
	}
	return out, nil
}

// keyRetention is how long a retired generated key still verifies: the
// longest lifetime plus the largest leeway, so every token it signed has
// expired by then.
const keyRetention = MaxLifetime + MaxLeeway

// generatedRing returns the ring of generated keys of alg, creating a key
// when there is none (or always, when rotate is set) and pruning retired
// keys past keyRetention. A key is created in the store only if the current
// key there is still the one this service saw (KeyStore.ReplaceCurrentKey):
// instances sharing the store that start at once all use the key stored
// first, and a rotation racing another's is made again on top of it.
// Called with mu held.
func (s *Service) generatedRing(alg string, rotate bool) (*ring, error) {
	now := s.clock()
	current := currentOf(s.genKeys, alg)
	for attempt := 0; current == nil || rotate; attempt++ {
		if attempt == maxKeyAttempts {
			return nil, fmt.Errorf("storing a new signing key: %w, %d times", ErrKeyChanged, attempt)
		}
		k, err := s.newGeneratedKey(alg, now)
		if err != nil {
			return nil, err
		}
		prev := ""
		if current != nil {
			prev = current.KID
		}
		err = s.store.ReplaceCurrentKey(prev, KeyRecord{KID: k.KID, Alg: k.Alg, Material: keyMaterial(k), Created: k.Created})
		if err != nil && !errors.Is(err, ErrKeyChanged) {
			return nil, fmt.Errorf("storing signing keys: %w", err)
		}
		keys, rerr := s.readKeys()
		if rerr != nil {
			return nil, rerr
		}
		s.genKeys = keys
		current = currentOf(s.genKeys, alg)
		if err == nil {
			break // stored: the current key is now k (or a later one)
		}
	}
	var deleted []string
	for kid, k := range s.genKeys {
		if k.expired(now) {
			deleted = append(deleted, kid)
		}
	}
	if len(deleted) > 0 {
		if err := s.store.UpdateSigningKeys(nil, deleted); err != nil {
			return nil, fmt.Errorf("storing signing keys: %w", err)
		}
		for _, kid := range deleted {
			delete(s.genKeys, kid)
		}
	}
	r := &ring{alg: alg, current: current, byKID: map[string]*key{}}
	for kid, k := range s.genKeys {
		if k.Alg == alg {
			r.byKID[kid] = k
		}
	}
	return r, nil
}

// maxKeyAttempts bounds the tries of a key creation that loses races with
// other instances.
const maxKeyAttempts = 3

// currentOf returns the current key of alg among keys (the rule of
// CurrentKey), or nil.
func currentOf(keys map[string]*key, alg string) *key {
	var cur *key
	for _, k := range keys {
		if k.Alg != alg || !k.Retired.IsZero() {
			continue
		}
		if cur == nil || k.Created.After(cur.Created) || k.Created.Equal(cur.Created) && k.KID > cur.KID {
			cur = k
		}
	}
	return cur
}

// newGeneratedKey returns a fresh key of alg created at now (not stored).
func (s *Service) newGeneratedKey(alg string, now time.Time) (*key, error) {
	mat, err := generateKeyMaterial(s.rand, alg)
	if err != nil {
		return nil, err
	}
	kid, err := newID(s.rand, now.UTC().Format("20060102")+"-", 6)
	if err != nil {
		return nil, err
	}
	k, err := newKey(kid, alg, mat)
	if err != nil {
		return nil, err
	}
	k.Created = now
	return k, nil
}

// keyMaterial returns the raw material newKey was built from.
func keyMaterial(k *key) []byte {
	switch v := k.sign.(type) {
	case []byte:
		return v
	case interface{ Seed() []byte }:
		return v.Seed()
	}
	return nil
}

// RotateSigningKey makes a new generated key current. Tokens signed by the
// previous key stay valid until they expire. Configured keys are rotated in
// the configuration instead (ErrStatic).
func (s *Service) RotateSigningKey() (KeyInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cfg.Keys) > 0 {
		return KeyInfo{}, fmt.Errorf("signing keys are %w: add the new key first in the list", ErrStatic)
	}
	r, err := s.generatedRing(s.settings.Load().alg, true)
	if err != nil {
		return KeyInfo{}, err
	}
	s.ring.Store(r)
	s.log.Info("signing key rotated")
	return r.info()[0], nil
}

// Credentials are a client id and its secret, shown once.
type Credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// NewPartner is what CreatePartner returns: shown once.
type NewPartner struct {
	Partner PartnerInfo `json:"partner"`
	Credentials
	WebhookKey string `json:"webhook_key"`
}

// CreatePartner creates a partner with one client, a fresh secret and a
// fresh webhook key, and returns them (the only time the secret is shown).
func (s *Service) CreatePartner(id string, consolidation bool) (NewPartner, error) {
	if err := checkID("partner", id); err != nil {
		return NewPartner{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.reg.Load().partners[id]; ok {
		return NewPartner{}, fmt.Errorf("partner %s %w", id, ErrExists)
	}
	wk, err := newSecret(s.rand)
	if err != nil {
		return NewPartner{}, err
	}
	p := &Partner{ID: id, Consolidation: consolidation, WebhookKey: []byte(wk), Created: s.clock().UTC(), keySource: KeySourceGenerated}
	c, creds, err := s.newClient(id)
	if err != nil {
		return NewPartner{}, err
	}
	if err := s.store.CreatePartner(PartnerRecord{ID: id, Consolidation: consolidation,
		WebhookKey: wk, Created: p.Created}, recordOf(c)); err != nil {
		return NewPartner{}, err
	}
	s.dynPartners[id] = p
	s.dynClients[c.ID] = c
	s.publish()
	s.log.Info("partner created", zapPartner(id), zapClient(c.ID))
	return NewPartner{Partner: s.reg.Load().info(id), Credentials: creds, WebhookKey: wk}, nil
}

func (r *registry) info(id string) PartnerInfo {
	for _, p := range r.list() {
		if p.ID == id {
			return p
		}
	}
	return PartnerInfo{}
}

// PartnerInfo returns one partner without secrets.
func (s *Service) PartnerInfo(id string) (PartnerInfo, error) {
	reg := s.reg.Load()
	if _, ok := reg.partners[id]; !ok {
		return PartnerInfo{}, fmt.Errorf("partner %s %w", id, ErrNotFound)
	}
	return reg.info(id), nil
}

func recordOf(c *client) ClientRecord {
	r := ClientRecord{ID: c.ID, Partner: c.PartnerID, Hash: c.hash[:], Version: c.version,
		OpaqueVersion: c.legacySV == "", Active: c.Active, Created: c.Created, Hint: c.hint}
	if !c.prevUntil.IsZero() {
		r.PrevHash, r.PrevUntil = c.prevHash[:], c.prevUntil
	}
	return r
}

// newClient makes a client with a fresh id and secret (not yet stored).
func (s *Service) newClient(partnerID string) (*client, Credentials, error) {
	id, err := newID(s.rand, strings.ToLower(partnerID)+"-", 8)
	if err != nil {
		return nil, Credentials{}, err
	}
	if len(id) > 64 {
		if id, err = newID(s.rand, "client-", 12); err != nil {
			return nil, Credentials{}, err
		}
	}
	secret, err := newSecret(s.rand)
	if err != nil {
		return nil, Credentials{}, err
	}
	version, err := newClientVersion(s.rand)
	if err != nil {
		return nil, Credentials{}, err
	}
	return &client{ID: id, PartnerID: partnerID, hash: s.hasher.hash(secretDigest(secret)), version: version,
		Active: true, Created: s.clock().UTC(), hint: secretHint(secret)}, Credentials{ClientID: id, ClientSecret: secret}, nil
}

// dynamicPartner returns a partner that the admin API may change.
func (s *Service) dynamicPartner(id string) (*Partner, error) {
	if _, ok := s.static.partners[id]; ok {
		return nil, fmt.Errorf("partner %s is %w", id, ErrStatic)
	}
	p, ok := s.dynPartners[id]
	if !ok {
		return nil, fmt.Errorf("partner %s %w", id, ErrNotFound)
	}
	return p, nil
}

// operatorClient returns a client of partnerID that the admin API may
// change: any client created at run time (through the admin API or in the
// portal), also of a partner from the configuration, and also of a
// disabled partner. A client defined in the configuration is ErrStatic; a
// client of another partner (or shadowed by one of the configuration) is
// ErrNotFound. Called with mu held.
func (s *Service) operatorClient(partnerID, clientID string) (*client, error) {
	_, static := s.static.partners[partnerID]
	if _, dynamic := s.dynPartners[partnerID]; !static && !dynamic {
		return nil, fmt.Errorf("partner %s %w", partnerID, ErrNotFound)
	}
	if sc, ok := s.static.clients[clientID]; ok {
		if sc.PartnerID == partnerID {
			return nil, fmt.Errorf("client %s of partner %s is %w", clientID, partnerID, ErrStatic)
		}
		return nil, fmt.Errorf("client %s of partner %s %w", clientID, partnerID, ErrNotFound)
	}
	c, ok := s.dynClients[clientID]
	if !ok || c.PartnerID != partnerID {
		return nil, fmt.Errorf("client %s of partner %s %w", clientID, partnerID, ErrNotFound)
	}
	return c, nil
}

// updateClient stores c, a client the store holds, and publishes it
// (ErrNotFound when another instance deleted it). Called with mu held.
func (s *Service) updateClient(c *client) error {
	err := s.store.UpdateClient(recordOf(c))
	if errors.Is(err, ErrClientGone) {
		// Another instance deleted it: this one forgets it too.
		delete(s.dynClients, c.ID)
		s.reuse.Delete(c.ID)
		s.publish()
		return fmt.Errorf("client %s %w (%w)", c.ID, ErrNotFound, err)
	}
	if err != nil {
		return err
	}
	s.adoptClient(c)
	return nil
}

// adoptClient publishes c, which the store holds. Called with mu held.
func (s *Service) adoptClient(c *client) {
	s.dynClients[c.ID] = c
	s.reuse.Delete(c.ID)
	s.publish()
}

// RotateSecret gives a client created at run time (see operatorClient) a
// fresh secret; its outstanding tokens stop being valid at once.
func (s *Service) RotateSecret(partnerID, clientID string) (Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.operatorClient(partnerID, clientID)
	if err != nil {
		return Credentials{}, err
	}
	secret, err := newSecret(s.rand)
	if err != nil {
		return Credentials{}, err
	}
	version, err := newClientVersion(s.rand)
	if err != nil {
		return Credentials{}, err
	}
	c := *old
	c.hash, c.version, c.legacySV = s.hasher.hash(secretDigest(secret)), version, ""
	c.hint, c.prevHash, c.prevUntil = secretHint(secret), [32]byte{}, time.Time{}
	if err := s.updateClient(&c); err != nil {
		return Credentials{}, err
	}
	s.log.Info("client secret rotated", zapPartner(partnerID), zapClient(clientID))
	return Credentials{ClientID: clientID, ClientSecret: secret}, nil
}

// SetClientActive disables (or enables again) a client created at run
// time (see operatorClient). A disabled client gets no token and its
// outstanding tokens are refused; disabling gives it a new version, so the
// tokens it had stay refused once it is enabled again.
func (s *Service) SetClientActive(partnerID, clientID string, active bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.operatorClient(partnerID, clientID)
	if err != nil {
		return err
	}
	c := *old
	c.Active = active
	if !active {
		if c.version, err = newClientVersion(s.rand); err != nil {
			return err
		}
		c.legacySV = ""
	}
	if err := s.updateClient(&c); err != nil {
		return err
	}
	s.log.Info("client active changed", zapPartner(partnerID), zapClient(clientID), zapBool("active", active))
	return nil
}

// RotateWebhookKey gives a partner a fresh webhook key and returns it (the
// only time it is shown). A static partner's key rotates too, unless the
// configuration sets webhook_key, which always wins (ErrStatic): see
// static_keys.go.
func (s *Service) RotateWebhookKey(partnerID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp, ok := s.static.partners[partnerID]; ok {
		wk, err := s.rotateStaticWebhookKey(sp)
		if err != nil {
			return "", err
		}
		s.log.Info("webhook key rotated", zapPartner(partnerID), zapBool("static", true))
		return wk, nil
	}
	old, err := s.dynamicPartner(partnerID)
	if err != nil {
		return "", err
	}
	wk, err := newSecret(s.rand)
	if err != nil {
		return "", err
	}
	p := *old
	p.WebhookKey = []byte(wk)
	if err := s.store.PutPartner(PartnerRecord{ID: p.ID, Consolidation: p.Consolidation,
		WebhookKey: wk, Disabled: p.Disabled, Created: p.Created}); err != nil {
		return "", err
	}
	s.dynPartners[p.ID] = &p
	s.publish()
	s.log.Info("webhook key rotated", zapPartner(partnerID))
	return wk, nil
}
