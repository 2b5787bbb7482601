package e2e

import (
	"context"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientCredentials gets a token as a partner's software would, through
// golang.org/x/oauth2/clientcredentials.
type clientCredentials struct{ id, secret, url string }

func (c *clientCredentials) token() (*oauth2.Token, error) {
	cfg := clientcredentials.Config{ClientID: c.id, ClientSecret: c.secret, TokenURL: c.url}
	return cfg.Token(context.Background())
}
