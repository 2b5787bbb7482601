// Package portal holds the rules of the partner portal's sign-in: single-use
// sign-in links the operator hands a partner, the sessions they are
// exchanged for (idle and absolute limits, sign-out, revocation), the
// CSRF token bound to a session, and the audit log of every change made
// through the portal or to its sessions. It knows nothing of Caddy or of a
// database: the pages live in modules/fulfilhttp/portal, the stores in
// storage/badgerstore and storage/pgstore.
package portal

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Options are the fixed dependencies of a Service.
type Options struct {
	Store  Store // required
	Logger *zap.Logger
	// Clock and Rand are injectable for tests; defaults time.Now and
	// crypto/rand.
	Clock func() time.Time
	Rand  io.Reader
}

// Service issues sign-in links, exchanges them for sessions, checks and
// ends sessions and keeps the audit log. It is safe for concurrent use and
// keeps nothing in memory that several gateway instances sharing a store
// would need to agree on.
type Service struct {
	store Store
	log   *zap.Logger
	clock func() time.Time
	rand  io.Reader

	pruneMu   sync.Mutex
	lastPrune time.Time
}

// Open returns a service on opts.Store.
func Open(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("portal: a store is required")
	}
	s := &Service{store: opts.Store, log: opts.Logger, clock: opts.Clock, rand: opts.Rand}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	return s, nil
}

// Close releases nothing of its own (the store belongs to the caller).
func (s *Service) Close() error { return nil }

// secretBytes is the entropy of every link and session secret.
const secretBytes = 32

// credential is a link or session token: "<id>.<secret>". Only the id and
// the SHA-256 of the secret are stored.
type credential struct {
	id     string
	secret string
}

func (c credential) String() string { return c.id + "." + c.secret }

func (c credential) hash() []byte {
	h := sha256.Sum256([]byte(c.secret))
	return h[:]
}

// newCredential returns a fresh credential whose id starts with prefix.
func (s *Service) newCredential(prefix string) (credential, error) {
	b := make([]byte, 12+secretBytes)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return credential{}, fmt.Errorf("reading randomness: %w", err)
	}
	return credential{id: prefix + hex.EncodeToString(b[:12]), secret: base64.RawURLEncoding.EncodeToString(b[12:])}, nil
}

// maxCredential bounds what parseCredential looks at.
const maxCredential = 200

// parseCredential splits a token into id and secret; ok is false for
// anything that cannot be one with prefix.
func parseCredential(token, prefix string) (credential, bool) {
	if len(token) > maxCredential {
		return credential{}, false
	}
	id, secret, ok := strings.Cut(token, ".")
	if !ok || !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+24 || secret == "" {
		return credential{}, false
	}
	if _, err := hex.DecodeString(id[len(prefix):]); err != nil {
		return credential{}, false
	}
	return credential{id: id, secret: secret}, true
}

// matches compares the hash of c's secret with want in constant time.
func (c credential) matches(want []byte) bool {
	return subtle.ConstantTimeCompare(c.hash(), want) == 1
}
