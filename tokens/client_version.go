package tokens

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"time"
)

// Client versions and the "sv" claim.
//
// Every client has a version that changes whenever its earlier tokens must
// stop being valid: when its secret changes, and when it is disabled (so
// that enabling it again does not bring back the tokens it had). A token
// carries sv, a MAC of the version under a key derived from the signing
// key that signed the token: sv reveals nothing about the version, and a
// leaked token offers nothing to guess a secret against offline.
//
//   - A client created through the admin API has an opaque random version,
//     kept in the data store and replaced on rotation and on disable.
//   - A static client's version is the SHA-256 of its secret, held only in
//     memory: instances sharing the configuration (and its signing keys)
//     agree on it without sharing a store, and a new secret in the
//     configuration revokes the tokens of the old one.
//
// Because the MAC key comes from the signing key, a rotation of the signing
// key does not revoke tokens (each token's sv is checked under the key
// that signed it).

// svKeyLabel separates the MAC key of sv from every other use of the
// signing key material.
const svKeyLabel = "fulfilgate client version key"

// svBytes is the length of sv before Base64: 96 bits, enough that no one
// guesses a valid sv for a version they do not know.
const svBytes = 12

// deriveSVKey derives the MAC key of sv from a signing key's material.
func deriveSVKey(material []byte) []byte {
	m := hmac.New(sha256.New, material)
	m.Write([]byte(svKeyLabel))
	return m.Sum(nil)
}

// sv is the "sv" claim of a token signed by k for a client at version.
func (k *key) sv(version string) string {
	m := hmac.New(sha256.New, k.svKey)
	m.Write([]byte(version))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:svBytes])
}

// newClientVersion returns a fresh opaque client version.
func newClientVersion(r io.Reader) (string, error) { return newID(r, "v1-", 16) }

// staticVersion is a static client's version: its secret digest.
func staticVersion(digest [32]byte) string { return string(digest[:]) }

// legacySecretVersion is the sv that tokens carried before sv was keyed:
// an unkeyed digest of the secret digest. Such tokens are accepted only
// when issued before this service was opened (see svMatches), so that a
// restart onto this version does not refuse every partner's current
// token; the service never issues one.
func legacySecretVersion(digest [32]byte) string {
	m := sha256.New()
	m.Write([]byte("fulfilgate secret version\x00"))
	m.Write(digest[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:9])
}

// svMatches reports whether a token's sv, signed by k and issued at iat,
// belongs to client c as it is now. opened is when this service was opened.
func svMatches(k *key, c *client, sv string, iat, opened time.Time) bool {
	if hmac.Equal([]byte(sv), []byte(k.sv(c.version))) {
		return true
	}
	return c.legacySV != "" && iat.Before(opened) && hmac.Equal([]byte(sv), []byte(c.legacySV))
}
