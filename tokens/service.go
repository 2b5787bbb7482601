package tokens

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"
)

// Limits of the configuration: a token lives 30 to 60 minutes, and at most
// 60 s of leeway applies to its expiry.
const (
	MinLifetime     = 1800 * time.Second
	MaxLifetime     = 3600 * time.Second
	DefaultLifetime = MaxLifetime
	MaxLeeway       = 60 * time.Second
	// ReuseMinRemaining: a client's current token is handed out again while
	// it has at least this long to live.
	ReuseMinRemaining = 1800 * time.Second
	DefaultIssuer     = "fulfilgate"
	DefaultAudience   = "fulfilment"
)

// Config is the token configuration. The zero value of each field means its
// default.
type Config struct {
	// Issuer is the "iss" of issued tokens, and the only one accepted.
	// Default "fulfilgate".
	Issuer string
	// Audience is the "aud" of issued tokens, and the one required.
	// Default "fulfilment".
	Audience string
	// Lifetime of a new token, between 30 and 60 minutes. Default 1 hour.
	Lifetime time.Duration
	// Leeway allowed on "exp" (and on "iat" in the future), at most 60 s.
	// Default 0.
	Leeway time.Duration
	// Algorithm pins the signing algorithm: EdDSA or HS256. Default: the
	// algorithm of the configured keys, else EdDSA.
	Algorithm string
	// Keys are configured signing keys; the first one signs, the others
	// only verify. Without keys the gateway generates one and keeps it in
	// its data store.
	Keys []KeyConfig
	// Throttle limits failed token requests.
	Throttle ThrottleConfig
	// Partners are the static partners and their clients.
	Partners []StaticPartner
}

// Normalize fills defaults and checks the configuration; it touches no
// store, so it can run at configuration validation.
func (c *Config) Normalize() error {
	if c.Issuer == "" {
		c.Issuer = DefaultIssuer
	}
	if c.Audience == "" {
		c.Audience = DefaultAudience
	}
	if c.Lifetime == 0 {
		c.Lifetime = DefaultLifetime
	}
	if c.Lifetime < MinLifetime || c.Lifetime > MaxLifetime || c.Lifetime%time.Second != 0 {
		return fmt.Errorf("token lifetime %v is out of range: it must be a whole number of seconds between 1800 (30m) and 3600 (1h)", c.Lifetime)
	}
	if c.Leeway < 0 || c.Leeway > MaxLeeway {
		return fmt.Errorf("leeway %v is out of range: it must be between 0 and 60s", c.Leeway)
	}
	if c.Algorithm == "" {
		c.Algorithm = AlgEdDSA
		if len(c.Keys) > 0 {
			c.Algorithm = c.Keys[0].Alg
		}
	}
	if _, err := methodFor(c.Algorithm); err != nil {
		return err
	}
	if len(c.Keys) > 0 {
		if _, err := configuredRing(c.Algorithm, c.Keys); err != nil {
			return err
		}
	}
	c.Throttle.normalize()
	return validateStatic(c.Partners)
}

// Options are the fixed dependencies of a Service.
type Options struct {
	Store  Store // required
	Logger *zap.Logger
	// Clock and Rand are injectable for tests; defaults time.Now and
	// crypto/rand.
	Clock func() time.Time
	Rand  io.Reader
	// RefreshInterval is how often a service whose Store is shared
	// (ChangeNotifier) reloads its state without a notification. Default
	// DefaultRefreshInterval.
	RefreshInterval time.Duration
}

// settings is the immutable part of the configuration read on hot paths.
type settings struct {
	issuer, audience string
	lifetime, leeway time.Duration
	alg              string
	parser           *jwt.Parser
	// cache holds tokens verified under these issuer, audience and
	// algorithm; one load of the settings gives a matching pair.
	cache *verifyCache
}

// Service is the token service of one data directory: partners and
// clients, signing keys, issue, reuse, verification and throttling. It
// outlives configuration reloads; Configure applies a new configuration.
// All reads on the request path are lock-free snapshot loads.
type Service struct {
	store  Store
	log    *zap.Logger
	clock  func() time.Time
	rand   io.Reader
	opened time.Time // when Open ran: tokens issued before may carry a legacy sv

	hasher hasher
	dummy  [32]byte // compared against for unknown client ids

	mu          sync.Mutex // serialises changes
	cfg         Config
	configured  bool
	static      *registry
	dynPartners map[string]*Partner
	dynClients  map[string]*client
	genKeys     map[string]*key            // generated keys kept in the store
	staticKeys  map[string]StaticKeyRecord // kept webhook keys of static partners

	settings atomic.Pointer[settings]
	ring     atomic.Pointer[ring]
	reg      atomic.Pointer[registry]
	throttle atomic.Pointer[Throttle]
	reuse    sync.Map // client id -> *issued
	usage    sync.Map // client id -> time.Time: when it last got a token (client_usage.go)

	shared     bool            // the store is shared with other instances (ChangeNotifier)
	reloads    atomic.Uint64   // reloads begun (Refresh)
	stop       context.Context // ended by Close: the change follower stops
	stopFn     context.CancelFunc
	followDone chan struct{} // closed when the follower has stopped
}

// Open loads the token state of opts.Store (pepper, generated keys,
// dynamic partners and clients). Call Configure before use.
func Open(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("tokens: no store")
	}
	s := &Service{store: opts.Store, log: opts.Logger, clock: opts.Clock, rand: opts.Rand,
		static: &registry{partners: map[string]*Partner{}, clients: map[string]*client{}}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	s.opened = s.clock()
	s.stop, s.stopFn = context.WithCancel(context.Background())
	s.followDone = make(chan struct{})
	// A shared store's changes are followed from before the state is
	// read, so that none made meanwhile is missed.
	var changes <-chan Change
	if n, ok := opts.Store.(ChangeNotifier); ok {
		s.shared = true
		var err error
		if changes, err = n.Changes(s.stop); err != nil {
			s.stopFn()
			return nil, fmt.Errorf("following the store's changes: %w", err)
		}
	}
	if err := s.load(); err != nil {
		s.stopFn()
		return nil, err
	}
	if _, err := io.ReadFull(s.rand, s.dummy[:]); err != nil {
		s.stopFn()
		return nil, err
	}
	s.publish()
	if changes == nil {
		close(s.followDone)
		return s, nil
	}
	interval := opts.RefreshInterval
	if interval <= 0 {
		interval = DefaultRefreshInterval
	}
	go s.follow(changes, interval)
	return s, nil
}

// Configure applies cfg (see Config.Normalize). On error nothing changes.
func (s *Service) Configure(cfg Config) error {
	if err := cfg.Normalize(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	static, err := s.buildStatic(cfg.Partners)
	if err != nil {
		return err
	}
	for id := range static.partners {
		if _, dup := s.dynPartners[id]; dup {
			return fmt.Errorf("static partner %s clashes with a partner created through the admin API", id)
		}
	}
	for id := range static.clients {
		if _, dup := s.dynClients[id]; dup {
			return fmt.Errorf("static client %s clashes with a client created through the admin API", id)
		}
	}
	var r *ring
	if len(cfg.Keys) > 0 {
		if r, err = configuredRing(cfg.Algorithm, cfg.Keys); err != nil {
			return err
		}
	} else if r, err = s.generatedRing(cfg.Algorithm, false); err != nil {
		return err
	}
	if err := s.fillStaticKeys(static); err != nil {
		return err
	}

	old := s.settings.Load()
	st := &settings{issuer: cfg.Issuer, audience: cfg.Audience, lifetime: cfg.Lifetime, leeway: cfg.Leeway,
		alg: cfg.Algorithm, parser: jwt.NewParser(jwt.WithValidMethods([]string{cfg.Algorithm}), jwt.WithoutClaimsValidation(), jwt.WithStrictDecoding())}
	// The verify cache holds what was checked under old, time bounds
	// included (verified.setTimes): it carries over only to settings that
	// check alike. Tokens kept for reuse were issued under old's lifetime.
	if old == nil || old.issuer != st.issuer || old.audience != st.audience || old.alg != st.alg ||
		old.lifetime != st.lifetime || old.leeway != st.leeway {
		st.cache = newVerifyCache()
		s.reuse.Clear()
	} else {
		st.cache = old.cache
	}
	if !s.configured || s.cfg.Throttle != cfg.Throttle {
		s.throttle.Store(NewThrottle(cfg.Throttle, s.clock))
	}
	s.static = static
	s.cfg = cfg
	s.configured = true
	s.ring.Store(r)
	s.publish()
	// The settings go last: once a reader sees them (Configured), the ring,
	// the registry and the throttle are there too.
	s.settings.Store(st)
	return nil
}

// Configured reports whether Configure has succeeded once, so the service
// can issue and verify tokens. A service opened but not yet configured (a
// config still starting) must not be used.
func (s *Service) Configured() bool { return s.settings.Load() != nil }

// publish rebuilds the registry snapshot from the static and dynamic sets.
// Called with mu held (or before the service is shared).
func (s *Service) publish() {
	r := &registry{partners: map[string]*Partner{}, clients: map[string]*client{}}
	for id, p := range s.dynPartners {
		r.partners[id] = p
	}
	for id, c := range s.dynClients {
		r.clients[id] = c
	}
	for id, p := range s.static.partners {
		r.partners[id] = p
	}
	for id, c := range s.static.clients {
		r.clients[id] = c
	}
	s.reg.Store(r)
}

func (s *Service) buildStatic(ps []StaticPartner) (*registry, error) {
	r := &registry{partners: map[string]*Partner{}, clients: map[string]*client{}}
	for _, sp := range ps {
		r.partners[sp.ID] = &Partner{ID: sp.ID, Consolidation: sp.Consolidation, WebhookKey: []byte(sp.WebhookKey), Static: true}
		for _, sc := range sp.Clients {
			d := secretDigest(sc.Secret)
			if sc.SecretSHA256 != "" {
				var err error
				if d, err = parseDigest(sc.SecretSHA256); err != nil {
					return nil, fmt.Errorf("client %s: %v", sc.ID, err)
				}
			}
			r.clients[sc.ID] = &client{ID: sc.ID, PartnerID: sp.ID, hash: s.hasher.hash(d),
				version: staticVersion(d), legacySV: legacySecretVersion(d), Active: true, Static: true}
		}
	}
	return r, nil
}

// Partner returns the partner with id (lock-free).
func (s *Service) Partner(id string) (Partner, bool) {
	p, ok := s.reg.Load().partners[id]
	if !ok {
		return Partner{}, false
	}
	return *p, true
}

// Partners lists partners and their clients, without secrets or keys.
func (s *Service) Partners() []PartnerInfo { return s.reg.Load().list() }

// Keys lists the signing keys, without their material.
func (s *Service) Keys() []KeyInfo { return s.ring.Load().info() }

// Throttle returns the failed-attempt throttle of the current configuration.
func (s *Service) Throttle() *Throttle { return s.throttle.Load() }

// Authenticate checks a client id and secret. It does the same work for an
// unknown id as for a wrong secret (one SHA-256, one HMAC, one constant-time
// comparison, against a random dummy hash for an unknown id), so answers do
// not reveal which client ids exist (TestAuthenticateSameWork counts it). A disabled
// client, or a client of a disabled partner, does not authenticate.
func (s *Service) Authenticate(clientID, secret string) (Client, bool) {
	reg := s.reg.Load()
	h := s.hasher.hash(s.hasher.digest(secret))
	c, found := reg.clients[clientID]
	want, prev := s.dummy, s.dummy
	if found {
		want = c.hash
		if !c.prevUntil.IsZero() {
			prev = c.prevHash
		}
	}
	// Both comparisons always run, so a client in a rotation's grace
	// period costs the same as any other.
	match := s.hasher.equal(h, want)
	matchPrev := s.hasher.equal(h, prev)
	if found && !match && matchPrev && !c.prevUntil.IsZero() && s.clock().Before(c.prevUntil) {
		match = true
	}
	if !found || !match || !c.Active {
		return Client{}, false
	}
	p, ok := reg.partners[c.PartnerID]
	if !ok || p.Disabled {
		return Client{}, false
	}
	return Client{ID: c.ID, PartnerID: c.PartnerID, version: c.version}, true
}

// Client is an authenticated client, the input of Token.
type Client struct {
	ID        string
	PartnerID string
	version   string
}

// Close stops following the store's changes, waiting up to 2 s for a
// reload in progress; the store belongs to the caller.
func (s *Service) Close() error {
	s.stopFn()
	select {
	case <-s.followDone:
	case <-time.After(2 * time.Second):
		s.log.Warn("a reload from the store was still running at close")
	}
	return nil
}
