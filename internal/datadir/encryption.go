package datadir

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// encryptedIndexCache is the index cache of an encrypted data directory:
// Badger decrypts a table's index on use and keeps it there (an
// unencrypted directory keeps its indexes in memory instead).
const encryptedIndexCache = 16 << 20

// WithEncryption returns opts encrypting everything Badger writes (tables,
// value and write-ahead logs) with AES under key (16, 24 or 32 bytes:
// AES-128, -192 or -256). Badger encrypts with data keys it rotates every
// ten days and keeps in its KEYREGISTRY file, encrypted under key.
func WithEncryption(opts badger.Options, key []byte) badger.Options {
	return opts.WithEncryptionKey(key).WithIndexCacheSize(encryptedIndexCache)
}

// minEncryptionKeyBits is the least entropy tokens.SecretStrength must
// estimate for an encryption key as written. It is far below what a random
// key carries (16 random bytes estimate at 70 bits or more in every
// encoding), and far above a typed pattern (all zeros: 4).
const minEncryptionKeyBits = 48

// ParseEncryptionKey decodes a configured encryption key: Base64 (standard
// or URL alphabet, padded or not) or hex of 16, 24 or 32 bytes. `caddy
// fulfilment secret` prints a fitting one (32 bytes, Base64url). A key that
// decodes but is a typed pattern (zeros, a repeated word) is refused.
func ParseEncryptionKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if tokens.SecretStrength(s) < minEncryptionKeyBits {
		return nil, fmt.Errorf("the encryption key does not look random (a pattern such as zeros or a repeated word); use 16, 24 or 32 random bytes (`caddy fulfilment secret` prints one)")
	}
	var decoded [][]byte
	if b, err := hex.DecodeString(s); err == nil {
		decoded = append(decoded, b)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			decoded = append(decoded, b)
		}
	}
	for _, b := range decoded {
		switch len(b) {
		case 16, 24, 32:
			return b, nil
		}
	}
	return nil, fmt.Errorf("the encryption key must be the Base64 or hex of 16, 24 or 32 random bytes (`caddy fulfilment secret` prints one)")
}
