package tokens

import (
	"crypto/ed25519"
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Signing algorithms the gateway can pin.
const (
	AlgEdDSA = "EdDSA" // Ed25519 (default)
	AlgHS256 = "HS256" // HMAC-SHA256 with a shared key of at least 32 bytes
)

// KeyConfig is a signing key given by configuration. Secret is the standard
// or URL Base64 of the key material: the 32-byte Ed25519 seed for EdDSA, at
// least 32 random bytes for HS256.
type KeyConfig struct {
	KID    string
	Alg    string
	Secret string
}

// key is one signing key of the ring.
type key struct {
	KID        string
	Alg        string
	method     jwt.SigningMethod
	sign       any // ed25519.PrivateKey or []byte
	verify     any // ed25519.PublicKey or []byte
	Created    time.Time
	Retired    time.Time // zero for the current key
	Configured bool
	svKey      []byte // the MAC key of the "sv" claims of the tokens it signs
}

// ring is an immutable snapshot of the signing keys: the current one signs,
// every key verifies. Swapped atomically on rotation.
type ring struct {
	alg     string
	current *key
	byKID   map[string]*key
}

// sameAs reports whether k and o are the same key: the same kid,
// algorithm and key material (a ring rebuilt by a reload holds new key
// values for unchanged keys).
func (k *key) sameAs(o *key) bool {
	if k == o {
		return true
	}
	if k == nil || o == nil || k.KID != o.KID || k.Alg != o.Alg {
		return false
	}
	switch kv := k.verify.(type) {
	case ed25519.PublicKey:
		ov, ok := o.verify.(ed25519.PublicKey)
		return ok && kv.Equal(ov)
	case []byte:
		ov, ok := o.verify.([]byte)
		return ok && hmac.Equal(kv, ov)
	}
	return false
}

// expired reports whether k is a retired key past keyRetention at now:
// every token it signed has expired, so it verifies nothing any more.
// Checked on every verification, so the key stops verifying on time, not
// only when the next start, reload or rotation prunes it.
func (k *key) expired(now time.Time) bool {
	return !k.Retired.IsZero() && now.Sub(k.Retired) > keyRetention
}

var kidPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func methodFor(alg string) (jwt.SigningMethod, error) {
	switch alg {
	case AlgEdDSA:
		return jwt.SigningMethodEdDSA, nil
	case AlgHS256:
		return jwt.SigningMethodHS256, nil
	}
	return nil, fmt.Errorf("unsupported signing algorithm %q (use %s or %s)", alg, AlgEdDSA, AlgHS256)
}

// newKey builds a key from its raw material.
func newKey(kid, alg string, material []byte) (*key, error) {
	if !kidPattern.MatchString(kid) {
		return nil, fmt.Errorf("key id %q: use 1 to 64 of A-Z a-z 0-9 . _ -", kid)
	}
	m, err := methodFor(alg)
	if err != nil {
		return nil, err
	}
	k := &key{KID: kid, Alg: alg, method: m, svKey: deriveSVKey(material)}
	switch alg {
	case AlgEdDSA:
		if len(material) != ed25519.SeedSize {
			return nil, fmt.Errorf("key %s: an EdDSA key is a %d-byte Ed25519 seed, got %d bytes", kid, ed25519.SeedSize, len(material))
		}
		priv := ed25519.NewKeyFromSeed(material)
		k.sign, k.verify = priv, priv.Public()
	case AlgHS256:
		if len(material) < 32 {
			return nil, fmt.Errorf("key %s: an HS256 key needs at least 32 bytes, got %d", kid, len(material))
		}
		b := append([]byte(nil), material...)
		k.sign, k.verify = b, b
	}
	return k, nil
}

// decodeKeyMaterial accepts standard or URL Base64, padded or not.
func decodeKeyMaterial(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("key material is not Base64")
}

// configuredRing builds the ring of configured keys; the first one signs.
func configuredRing(alg string, cfgs []KeyConfig) (*ring, error) {
	r := &ring{alg: alg, byKID: map[string]*key{}}
	for i, c := range cfgs {
		if c.Alg != alg {
			return nil, fmt.Errorf("signing key %s uses %s but the pinned algorithm is %s", c.KID, c.Alg, alg)
		}
		mat, err := decodeKeyMaterial(c.Secret)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %v", c.KID, err)
		}
		k, err := newKey(c.KID, c.Alg, mat)
		if err != nil {
			return nil, err
		}
		k.Configured = true
		if _, dup := r.byKID[k.KID]; dup {
			return nil, fmt.Errorf("signing key id %s given twice", k.KID)
		}
		r.byKID[k.KID] = k
		if i == 0 {
			r.current = k
		}
	}
	return r, nil
}

// generateKeyMaterial returns fresh key material for alg.
func generateKeyMaterial(rand io.Reader, alg string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(rand, b); err != nil {
		return nil, fmt.Errorf("reading randomness: %w", err)
	}
	return b, nil
}

// GenerateKey returns a fresh key for the signing_key configuration option:
// the Base64 of 32 random bytes (an Ed25519 seed or an HS256 key).
func GenerateKey(rand io.Reader, alg string) (string, error) {
	if _, err := methodFor(alg); err != nil {
		return "", err
	}
	b, err := generateKeyMaterial(rand, alg)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// KeyInfo describes a signing key without its material.
type KeyInfo struct {
	KID        string     `json:"kid"`
	Alg        string     `json:"alg"`
	Current    bool       `json:"current"`
	Configured bool       `json:"configured"`
	Created    *time.Time `json:"created,omitempty"`
	Retired    *time.Time `json:"retired,omitempty"`
	// PublicKey is the Base64 Ed25519 public key (EdDSA only).
	PublicKey string `json:"public_key,omitempty"`
}

func (r *ring) info() []KeyInfo {
	out := make([]KeyInfo, 0, len(r.byKID))
	add := func(k *key) {
		ki := KeyInfo{KID: k.KID, Alg: k.Alg, Current: k == r.current, Configured: k.Configured}
		if !k.Created.IsZero() {
			t := k.Created
			ki.Created = &t
		}
		if !k.Retired.IsZero() {
			t := k.Retired
			ki.Retired = &t
		}
		if pub, ok := k.verify.(ed25519.PublicKey); ok {
			ki.PublicKey = base64.StdEncoding.EncodeToString(pub)
		}
		out = append(out, ki)
	}
	add(r.current)
	for _, k := range r.byKID {
		if k != r.current {
			add(k)
		}
	}
	return out
}
