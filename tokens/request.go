package tokens

import (
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// MaxTokenRequestBody is the largest token request body accepted (8 KiB;
// larger bodies answer 413).
const MaxTokenRequestBody = 8 << 10

// TokenRequest is a parsed client credentials token request.
type TokenRequest struct {
	ClientID     string
	ClientSecret string
	// Basic tells that the client authenticated with the Authorization
	// header (so a 401 carries WWW-Authenticate: Basic).
	Basic bool
}

// RequestError is an RFC 6749 §5.2 error answer of the token endpoint.
type RequestError struct {
	Status      int
	Code        string // "invalid_request", "invalid_client", "unsupported_grant_type"
	Description string
	// Challenge asks for a WWW-Authenticate: Basic header on the answer.
	Challenge bool
	// ClientID is the client id the request named, if any (for throttling).
	ClientID string
}

func (e *RequestError) Error() string { return e.Code + ": " + e.Description }

func requestErr(status int, code, desc string) *RequestError {
	return &RequestError{Status: status, Code: code, Description: desc}
}

// errInvalidClient is the one answer to every failed client authentication;
// it never tells which part was wrong.
func errInvalidClient(basic bool, clientID string) *RequestError {
	return &RequestError{Status: http.StatusUnauthorized, Code: "invalid_client",
		Description: "client authentication failed", Challenge: basic, ClientID: clientID}
}

// ParseTokenRequest parses a token request from its Authorization header,
// Content-Type header and body (at most MaxTokenRequestBody bytes, which the
// caller enforces). Exactly one client authentication form is accepted:
// HTTP Basic (id and secret form-urlencoded before Base64, RFC 6749 §2.3.1)
// or client_id and client_secret in a form body with
// grant_type=client_credentials.
func ParseTokenRequest(authorization, contentType string, body []byte) (TokenRequest, *RequestError) {
	var form url.Values
	if len(body) > 0 {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request",
				"the body must be application/x-www-form-urlencoded")
		}
		form, err = url.ParseQuery(string(body))
		if err != nil {
			return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request", "the body is not a valid form")
		}
		for _, k := range []string{"grant_type", "client_id", "client_secret", "scope"} {
			if len(form[k]) > 1 {
				return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request", "parameter "+k+" given more than once")
			}
		}
	}
	_, hasGrant := form["grant_type"]
	grant := form.Get("grant_type")
	_, hasID := form["client_id"]
	_, hasSecret := form["client_secret"]

	scheme, cred, hasAuth := strings.Cut(strings.TrimSpace(authorization), " ")
	basic := hasAuth && strings.EqualFold(scheme, "Basic")
	if authorization != "" && !basic {
		return TokenRequest{}, errInvalidClient(true, "")
	}
	if basic && (hasID || hasSecret) {
		return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request",
			"use exactly one client authentication method: HTTP Basic or the form body")
	}
	switch {
	case hasGrant && grant == "":
		return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request", "grant_type is empty")
	case hasGrant && grant != "client_credentials":
		return TokenRequest{}, requestErr(http.StatusBadRequest, "unsupported_grant_type",
			"only grant_type=client_credentials is supported")
	case !hasGrant && !basic && len(body) > 0:
		return TokenRequest{}, requestErr(http.StatusBadRequest, "invalid_request", "grant_type is missing")
	}
	if basic {
		id, secret, ok := decodeBasic(strings.TrimSpace(cred))
		if !ok {
			return TokenRequest{}, errInvalidClient(true, "")
		}
		return TokenRequest{ClientID: id, ClientSecret: secret, Basic: true}, nil
	}
	if !hasID && !hasSecret {
		// Neither form: invite Basic, as RFC 9110 wants a challenge on 401.
		return TokenRequest{}, errInvalidClient(true, "")
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if id == "" || secret == "" {
		return TokenRequest{}, errInvalidClient(false, id)
	}
	return TokenRequest{ClientID: id, ClientSecret: secret}, nil
}

// decodeBasic decodes the credentials of an HTTP Basic header: Base64 of
// "id:secret", where both are form-urlencoded.
func decodeBasic(cred string) (id, secret string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return "", "", false
		}
	}
	i, s, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", false
	}
	if id, err = url.QueryUnescape(i); err != nil {
		return "", "", false
	}
	if secret, err = url.QueryUnescape(s); err != nil {
		return "", "", false
	}
	if id == "" || secret == "" {
		return "", "", false
	}
	return id, secret, true
}

// MaxTokenLength bounds the access tokens the verifier looks at.
const MaxTokenLength = 4096

// ParseBearer extracts the token of an "Authorization: Bearer <token>"
// header (RFC 6750 §2.1: the scheme is case-insensitive, the token is a
// token68). It reports false for a missing or malformed header.
func ParseBearer(h string) (string, bool) {
	tok, ok := bearerToken(h)
	if !ok {
		return "", false
	}
	i := 0
	for i < len(tok) && isToken68(tok[i]) {
		i++
	}
	for j := i; j < len(tok); j++ {
		if tok[j] != '=' {
			return "", false
		}
	}
	if i == 0 {
		return "", false
	}
	return tok, true
}

// bearerToken is ParseBearer without the scan of the token's characters:
// the scheme, the length and the spaces after the scheme.
func bearerToken(h string) (string, bool) {
	if len(h) < 8 || len(h) > MaxTokenLength+16 || !strings.EqualFold(h[:7], "Bearer ") {
		return "", false
	}
	tok := strings.TrimLeft(h[7:], " ")
	if tok == "" || len(tok) > MaxTokenLength {
		return "", false
	}
	return tok, true
}

func isToken68(c byte) bool {
	return isJWTChar(c) || c == '~' || c == '+' || c == '/'
}
