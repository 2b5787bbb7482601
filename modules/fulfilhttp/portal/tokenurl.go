package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// tokenPath is the token endpoint's path on the gateway.
const tokenPath = "/api/auth/token"

// checkTokenURL refuses a token_url that is not an absolute http(s) URL.
func checkTokenURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("token_url %q: want an absolute http or https URL without user info", s)
	}
	return nil
}

// tokenURL is the token endpoint partners are shown: token_url, else the
// token path on the scheme and host the portal was reached on.
func (h *Handler) tokenURL(r *http.Request) string {
	if h.TokenURL != "" {
		return h.TokenURL
	}
	return requestScheme(r) + "://" + r.Host + tokenPath
}

// apiBase is the v4 base address beside a token URL.
func apiBase(tokenURL string) string {
	if base, ok := strings.CutSuffix(tokenURL, tokenPath); ok {
		return base + "/api/fulfilment/v4"
	}
	u, err := url.Parse(tokenURL)
	if err != nil {
		return "/api/fulfilment/v4"
	}
	return u.Scheme + "://" + u.Host + "/api/fulfilment/v4"
}
