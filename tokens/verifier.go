package tokens

import (
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Fault classifies a refused access token: missing (401), invalid (401), or
// expired (403, only for a genuine token that is otherwise valid).
type Fault int

const (
	// FaultMissing: no Authorization header, or not a Bearer token: 401
	// with WWW-Authenticate: Bearer realm="fulfilment".
	FaultMissing Fault = iota + 1
	// FaultInvalid: any fault of the token but expiry alone: 401
	// invalid_token.
	FaultInvalid
	// FaultExpired: a genuine, otherwise valid token whose exp has passed:
	// 403 invalid_token.
	FaultExpired
)

// VerifyError tells why a token was refused. Reason is safe to log and to
// show: it never contains the token.
type VerifyError struct {
	Fault  Fault
	Reason string
}

func (e *VerifyError) Error() string { return e.Reason }

func invalid(reason string) *VerifyError { return &VerifyError{Fault: FaultInvalid, Reason: reason} }

var (
	errMissing  = &VerifyError{Fault: FaultMissing, Reason: "a Bearer access token is required"}
	errExpired  = &VerifyError{Fault: FaultExpired, Reason: "The access token expired"}
	errRevoked  = invalid("the access token was revoked")
	errOldKey   = invalid("the access token's signing key is no longer valid")
	errTooLong  = invalid("the access token's lifetime is longer than the gateway issues")
	errNotYet   = invalid("the access token is not yet valid")
	errBadToken = invalid("the access token is invalid")
)

// Identity is who a valid token speaks for.
type Identity struct {
	PartnerID string
	ClientID  string
	Expires   time.Time
}

// VerifyHeader verifies the token of an Authorization header.
func (s *Service) VerifyHeader(authorization string) (Identity, *VerifyError) {
	// Fast path: a token seen before, looked up as sent. Only tokens that
	// passed the full path are cached, and Verify caches only tokens made
	// of base64url characters and dots, which ParseBearer returns as they
	// are: its scan of every character is only needed for a token not
	// seen before.
	if tok, ok := bearerToken(authorization); ok {
		if st := s.settings.Load(); st != nil {
			if v, ok := st.cache.get(tok); ok {
				return s.checkLive(v)
			}
		}
	}
	return s.verifyHeaderFull(authorization)
}

// verifyHeaderFull is VerifyHeader without the fast path.
func (s *Service) verifyHeaderFull(authorization string) (Identity, *VerifyError) {
	tok, ok := ParseBearer(authorization)
	if !ok {
		return Identity{}, errMissing
	}
	return s.Verify(tok)
}

// Verify checks an access token. The signature, algorithm (pinned; never
// taken from the header), key id (looked up only in the gateway's ring),
// typ, issuer, audience, subject and client are checked before expiry, so a
// token is reported expired (FaultExpired) only when every other check
// passes; any other fault, with or without expiry, is FaultInvalid.
//
// A token whose signature and fixed claims checked out once is remembered
// (bounded cache, looked up by the whole token), so the hot path does no
// signature work for a token already seen; the revocable parts (key still
// in the ring, client active, secret version, time) are checked every time.
// A token with any byte but base64url characters and dots is refused
// before parsing (the base64 decoder would skip a line break), so one
// genuine token has exactly one spelling that verifies.
func (s *Service) Verify(token string) (Identity, *VerifyError) {
	if token == "" || len(token) > MaxTokenLength {
		return Identity{}, errBadToken
	}
	st := s.settings.Load()
	if st == nil {
		return Identity{}, errBadToken // not configured yet (handlers answer 503 first)
	}
	v, ok := st.cache.get(token)
	if !ok {
		if !jwtCharsOnly(token) {
			return Identity{}, invalid("the access token is malformed")
		}
		var err *VerifyError
		if v, err = s.verifySignature(st, token); err != nil {
			return Identity{}, err
		}
		st.cache.put(token, v, s.clock())
	}
	return s.checkLive(v)
}

// jwtCharsOnly reports whether token holds only the characters of a
// compact JWS: base64url and dots.
func jwtCharsOnly(token string) bool {
	for i := 0; i < len(token); i++ {
		if !isJWTChar(token[i]) {
			return false
		}
	}
	return true
}

// isJWTChar: base64url (RFC 4648 §5) or the dot between a JWS's parts.
func isJWTChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// verified is what a token's signature and fixed claims established.
type verified struct {
	partner, client, sv string
	key                 *key // the key the signature was checked with
	iat, nbf, exp       time.Time
	// The time checks, worked out once under the settings whose cache
	// holds the entry: exp - iat is longer than lifetime + leeway; the
	// token is usable only after notBefore and before expires.
	tooLong            bool
	notBefore, expires time.Time
	// standing is the ring and registry snapshots under which the key,
	// the client (active, same secret version) and the partner last
	// checked out: they are looked up again only after a change, which
	// always publishes new snapshots.
	standing atomic.Pointer[standing]
}

// standing is a verified token's good standing under a ring and a
// registry snapshot, and the ring's key it was signed with.
type standing struct {
	ring *ring
	reg  *registry
	key  *key
}

func (s *Service) verifySignature(st *settings, token string) (*verified, *VerifyError) {
	r := s.ring.Load()
	var claims accessClaims
	var used *key
	_, err := st.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		if typ, _ := t.Header["typ"].(string); !strings.EqualFold(typ, TokenType) && !strings.EqualFold(typ, "application/"+TokenType) {
			return nil, errors.New("typ is not at+jwt")
		}
		kid, _ := t.Header["kid"].(string)
		k, ok := r.byKID[kid]
		if !ok || kid == "" {
			return nil, errors.New("unknown kid")
		}
		if t.Method.Alg() != k.Alg {
			return nil, errors.New("algorithm does not match the key")
		}
		used = k
		return k.verify, nil
	})
	if err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenMalformed):
			return nil, invalid("the access token is malformed")
		case errors.Is(err, jwt.ErrTokenUnverifiable):
			return nil, invalid("the access token's key or type is not accepted")
		default:
			return nil, invalid("the access token's signature is invalid")
		}
	}
	switch {
	case claims.Issuer != st.issuer:
		return nil, invalid("the access token's issuer is not accepted")
	case !contains(claims.Audience, st.audience):
		return nil, invalid("the access token's audience is not accepted")
	case claims.ExpiresAt == nil:
		return nil, invalid("the access token has no expiry")
	case claims.IssuedAt == nil:
		return nil, invalid("the access token has no issue time")
	case claims.Subject == "" || claims.ClientID == "" || claims.ID == "":
		return nil, invalid("the access token lacks sub, client_id or jti")
	}
	v := &verified{partner: claims.Subject, client: claims.ClientID, sv: claims.SV, key: used,
		iat: claims.IssuedAt.Time, exp: claims.ExpiresAt.Time}
	if claims.NotBefore != nil {
		v.nbf = claims.NotBefore.Time
	}
	v.setTimes(st)
	return v, nil
}

// setTimes works out v's time checks under st. iat and nbf are compared
// with now + leeway rounded up to a whole second (the issuer rounds iat
// up): t > ceil(now + leeway) holds exactly when now + leeway <= ceil(t) -
// 1s, so the token is usable once now is after ceil(t) - 1s - leeway.
func (v *verified) setTimes(st *settings) {
	v.tooLong = v.exp.Sub(v.iat) > st.lifetime+st.leeway
	from := v.iat
	if v.nbf.After(from) {
		from = v.nbf
	}
	v.notBefore = ceilSecond(from).Add(-time.Second - st.leeway)
	v.expires = v.exp.Add(st.leeway)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkLive checks what can change after issue: the key is still in the
// ring (a retired generated key only for keyRetention after it was
// retired), the client is active with the same secret, the partner is
// enabled, exp - iat is no longer than the configured lifetime (a token
// the gateway did not issue, e.g. one signed with a leaked key, cannot
// outlive the tokens it does issue); then time: not before iat/nbf, and
// finally exp. The key, client and partner are looked up only when the
// ring or the registry changed since v last checked out (see standing);
// the time checks were worked out under the settings whose cache holds v.
func (s *Service) checkLive(v *verified) (Identity, *VerifyError) {
	now := s.clock()
	r, reg := s.ring.Load(), s.reg.Load()
	sg := v.standing.Load()
	if sg == nil || sg.ring != r || sg.reg != reg {
		var err *VerifyError
		if sg, err = s.checkStanding(r, reg, v, now); err != nil {
			return Identity{}, err
		}
		v.standing.Store(sg)
	}
	if sg.key.expired(now) {
		return Identity{}, errOldKey
	}
	switch {
	case v.tooLong:
		return Identity{}, errTooLong
	case !now.After(v.notBefore):
		return Identity{}, errNotYet
	case !now.Before(v.expires):
		return Identity{}, errExpired
	}
	return Identity{PartnerID: v.partner, ClientID: v.client, Expires: v.exp}, nil
}

// checkStanding looks v's key, client and partner up in the snapshots r and
// reg, in checkLive's order.
func (s *Service) checkStanding(r *ring, reg *registry, v *verified, now time.Time) (*standing, *VerifyError) {
	// The key is still in the ring, with the same material: a configured
	// key replaced under its kid revokes what it signed.
	k := r.byKID[v.key.KID]
	if k == nil || !k.sameAs(v.key) || k.expired(now) {
		return nil, errOldKey
	}
	c, ok := reg.clients[v.client]
	if !ok || !c.Active || c.PartnerID != v.partner || !svMatches(v.key, c, v.sv, v.iat, s.opened) {
		return nil, errRevoked
	}
	if p, ok := reg.partners[v.partner]; !ok || p.Disabled {
		return nil, errRevoked
	}
	return &standing{ring: r, reg: reg, key: k}, nil
}

// verifyCache remembers tokens whose signature and fixed claims are good.
// Only genuine tokens enter it, so its size is bounded by issuance; it is
// also capped per shard. A token's signature (see hashedTail) is hashed
// once: the hash picks the shard and is the map key, and the entry holds the token to
// compare (a collision is a miss; the newer token replaces the older).
//
// Look-ups take no lock (sync.Map): every request of a partner looks up
// the same token, and a read lock's shared counter would bounce between
// the cores serving them. Puts, one per token issued, take their shard's
// mutex, which also keeps the shard's count exact.
type verifyCache struct {
	seed   maphash.Seed
	shards [16]verifyShard
}

type verifyShard struct {
	m  sync.Map // uint64 -> *cacheEntry
	mu sync.Mutex
	n  int // entries in m; guarded by mu
}

type cacheEntry struct {
	token string
	v     *verified
}

const verifyCachePerShard = 4096

func newVerifyCache() *verifyCache {
	return &verifyCache{seed: maphash.MakeSeed()}
}

// hashedTail is how much of a token's end the cache hashes: the last 32
// characters of a JWT are its signature's (192 bits of it), which differ
// between any two tokens; hashing the whole token (about 300 bytes) cost
// most of a look-up. The entry's token is compared in full.
const hashedTail = 32

func (c *verifyCache) shard(token string) (*verifyShard, uint64) {
	h := maphash.String(c.seed, token[max(0, len(token)-hashedTail):])
	return &c.shards[h%uint64(len(c.shards))], h
}

// drop deletes k and counts it; the caller holds sh.mu.
func (sh *verifyShard) drop(k any) {
	if _, ok := sh.m.LoadAndDelete(k); ok {
		sh.n--
	}
}

func (c *verifyCache) get(token string) (*verified, bool) {
	sh, h := c.shard(token)
	e, ok := sh.m.Load(h)
	if !ok {
		return nil, false
	}
	if e := e.(*cacheEntry); e.token == token {
		return e.v, true
	}
	return nil, false
}

func (c *verifyCache) put(token string, v *verified, now time.Time) {
	sh, h := c.shard(token)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m.Load(h); !ok && sh.n >= verifyCachePerShard {
		sh.m.Range(func(k, e any) bool {
			if now.Sub(e.(*cacheEntry).v.exp) > MaxLeeway {
				sh.drop(k)
			}
			return true
		})
		sh.m.Range(func(k, _ any) bool {
			if sh.n < verifyCachePerShard {
				return false
			}
			sh.drop(k)
			return true
		})
	}
	if _, loaded := sh.m.Swap(h, &cacheEntry{token: token, v: v}); !loaded {
		sh.n++
	}
}
