package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// Sign returns the x-hook-signature value of body: the standard Base64
// encoding of HMAC-SHA256(body) keyed with the partner's webhook key.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify reports, in constant time, whether signature is Sign(key, body).
// Receivers written in Go can use it as it is.
func Verify(key, body []byte, signature string) bool {
	got, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
