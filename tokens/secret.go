// Package tokens holds the partners and clients of the gateway, the hashing
// of client secrets, the issue and verification of OAuth 2.0 client
// credentials access tokens (RFC 9068-shaped JWTs), the signing key ring and
// the throttle for failed token requests. It knows nothing of Caddy: the
// Caddy glue (modules/fulfilment and its handler packages under
// modules/fulfilhttp) wires it into HTTP handlers and the admin API.
package tokens

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
)

// SecretBytes is the number of random bytes in every generated client
// secret and webhook key (at least 32, so that none can be guessed).
const SecretBytes = 32

// NewSecret returns base64url (no padding) of SecretBytes random bytes
// from r: the form of every generated client secret and webhook key.
func NewSecret(r io.Reader) (string, error) { return newSecret(r) }

func newSecret(r io.Reader) (string, error) {
	b := make([]byte, SecretBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("reading randomness: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newID returns prefix followed by the hex of n random bytes.
func newID(r io.Reader, prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("reading randomness: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

// secretDigest is SHA-256 of a client secret. Static clients may be
// configured with this digest (hex) instead of the secret itself.
func secretDigest(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// hasher turns secret digests into the stored hashes: HMAC-SHA256 keyed with
// a per-gateway pepper. Secrets are 32 random bytes, so a fast keyed hash is
// the right tool (a slow password hash would buy nothing against 256 bits of
// entropy and would cost the token endpoint its throughput).
//
// Authenticate does all of its secret work through a hasher (digest, hash,
// equal), so that a test can count it: note, nil in production, is told of
// every unit of work.
type hasher struct {
	pepper []byte
	note   func(work string)
}

// Units of work a hasher reports to note.
const (
	workDigest  = "sha256"
	workHash    = "hmac-sha256"
	workCompare = "constant-time compare"
)

func (h hasher) noted(work string) {
	if h.note != nil {
		h.note(work)
	}
}

// digest is secretDigest, counted.
func (h hasher) digest(secret string) [32]byte {
	h.noted(workDigest)
	return secretDigest(secret)
}

// equal is the constant-time comparison of two hashes, counted.
func (h hasher) equal(a, b [32]byte) bool {
	h.noted(workCompare)
	return equal(a, b)
}

func (h hasher) hash(digest [32]byte) [32]byte {
	h.noted(workHash)
	m := hmac.New(sha256.New, h.pepper)
	m.Write(digest[:])
	var out [32]byte
	m.Sum(out[:0])
	return out
}

// equal compares two hashes in constant time.
func equal(a, b [32]byte) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }

// parseDigest decodes a configured "sha256:<hex>" secret digest.
func parseDigest(s string) ([32]byte, error) {
	var d [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("secret digest must be 64 hex digits (SHA-256 of the secret)")
	}
	copy(d[:], b)
	return d, nil
}
