// Checks a Fulfilgate webhook's signature: go run verify.go < body.json,
// with WEBHOOK_SECRET (your webhook key) and X_HOOK_SIGNATURE (the request's
// x-hook-signature header) in the environment. In a receiver, call verify
// with the raw body:
//
//	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
//	if err != nil || !verify(body, r.Header.Get("x-hook-signature"), secret) {
//		http.Error(w, "bad signature", http.StatusUnauthorized)
//		return
//	}
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
)

// verify reports whether signature is the Base64 HMAC-SHA256 of the raw
// request body keyed with the webhook key, comparing in constant time.
func verify(body []byte, signature, secret string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	got, err := base64.StdEncoding.DecodeString(signature)
	return err == nil && hmac.Equal(got, mac.Sum(nil))
}

func main() {
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading the body:", err)
		os.Exit(2)
	}
	if !verify(body, os.Getenv("X_HOOK_SIGNATURE"), os.Getenv("WEBHOOK_SECRET")) {
		fmt.Println("invalid signature")
		os.Exit(1)
	}
	fmt.Println("valid signature")
}
