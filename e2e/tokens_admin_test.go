package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2/clientcredentials"
)

// cliJSON runs `caddy fulfilment <args>` against g and decodes its output.
func cliJSON(t *testing.T, g *repoGateway, v any, args ...string) {
	t.Helper()
	out, err := g.CLI(append([]string{"fulfilment", "--address", g.Admin}, args...)...)
	if err != nil {
		t.Fatalf("caddy fulfilment %v: %v\n%s", args, err, out)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("caddy fulfilment %v: output is not JSON: %v\n%s", args, err, out)
		}
	}
}

func tokenFor(t *testing.T, g *repoGateway, id, secret string) (string, error) {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: g.Base + "/api/auth/token"}
	tok, err := cfg.Token(context.Background())
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

func shipmentsStatus(t *testing.T, g *repoGateway, token string) int {
	t.Helper()
	status, _, _ := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil, "Authorization", "Bearer "+token)
	return status
}

// Partner management without a restart, through the CLI (which calls the
// admin API): create, list, add a client, rotate and disable, rotate the
// webhook key and the signing key; dynamic partners survive a restart.
func TestTokensPartnerManagementCLI(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	var created struct {
		Partner struct {
			ID            string
			Consolidation bool
		}
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		WebhookKey   string `json:"webhook_key"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-initech", "--consolidation")
	if created.Partner.ID != "partner-initech" || !created.Partner.Consolidation || len(created.ClientSecret) < 43 || len(created.WebhookKey) < 43 {
		t.Fatalf("create answered %+v", created)
	}
	tok1, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	if s := shipmentsStatus(t, g, tok1); s != http.StatusOK {
		t.Fatalf("new partner's token: %d", s)
	}
	var added struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &added, "partner", "add-client", "partner-initech")
	tok2, err := tokenFor(t, g, added.ClientID, added.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}

	// Listing shows partners and clients, never a secret or key.
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "list")
	if err != nil {
		t.Fatal(err, out)
	}
	if !contains(out, "partner-initech", "partner-acme", "partner-globex", created.ClientID, added.ClientID) {
		t.Fatalf("list output:\n%s", out)
	}
	for _, s := range []string{created.ClientSecret, added.ClientSecret, created.WebhookKey, demoAcmeSecret, "DEMO-ONLY-acme-webhook"} {
		if strings.Contains(out, s) {
			t.Fatal("partner list shows a secret")
		}
	}

	// Rotation: the old secret and its token stop working at once.
	var rotated struct {
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &rotated, "partner", "rotate-secret", "partner-initech", created.ClientID)
	if s := shipmentsStatus(t, g, tok1); s != http.StatusUnauthorized {
		t.Fatalf("token of a rotated secret: %d, want 401", s)
	}
	if _, err := tokenFor(t, g, created.ClientID, created.ClientSecret); err == nil {
		t.Fatal("old secret still gets a token")
	}
	tok1b, err := tokenFor(t, g, created.ClientID, rotated.ClientSecret)
	if err != nil || shipmentsStatus(t, g, tok1b) != http.StatusOK {
		t.Fatalf("new secret: %v", err)
	}
	// Disable: 401 at once; the other client is unaffected.
	cliJSON(t, g, nil, "partner", "disable-client", "partner-initech", created.ClientID)
	if s := shipmentsStatus(t, g, tok1b); s != http.StatusUnauthorized {
		t.Fatalf("token of a disabled client: %d", s)
	}
	if s := shipmentsStatus(t, g, tok2); s != http.StatusOK {
		t.Fatalf("other client's token: %d", s)
	}
	var wk struct {
		WebhookKey string `json:"webhook_key"`
	}
	cliJSON(t, g, &wk, "partner", "rotate-webhook-key", "partner-initech")
	if len(wk.WebhookKey) < 43 || wk.WebhookKey == created.WebhookKey {
		t.Fatalf("webhook key rotation: %+v", wk)
	}
	// Static partners are changed in the Caddyfile, not here.
	if out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "rotate-secret", "partner-acme", demoAcmeID); err == nil || !strings.Contains(out, "configuration") {
		t.Fatalf("rotating a static client: %v %s", err, out)
	}
	if out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "create", "partner-initech"); err == nil || !strings.Contains(out, "409") && !strings.Contains(out, "exists") {
		t.Fatalf("duplicate partner: %v %s", err, out)
	}

	// Signing key rotation: tokens of the previous key stay valid.
	var key struct {
		KID     string `json:"kid"`
		Current bool   `json:"current"`
	}
	cliJSON(t, g, &key, "key", "rotate")
	if !key.Current || key.KID == "" {
		t.Fatalf("key rotate: %+v", key)
	}
	if s := shipmentsStatus(t, g, tok2); s != http.StatusOK {
		t.Fatalf("token of the previous signing key: %d", s)
	}
	var keys []struct{ KID string }
	cliJSON(t, g, &keys, "key", "list")
	if len(keys) != 2 {
		t.Fatalf("keys after rotation: %+v", keys)
	}

	// A restart keeps dynamic partners, clients, disabled state and keys.
	g.Stop()
	g.Restart()
	waitHTTP(t, g.Base+"/")
	if s := shipmentsStatus(t, g, tok2); s != http.StatusOK {
		t.Fatalf("token across restart: %d\n%s", s, g.Logs)
	}
	if _, err := tokenFor(t, g, created.ClientID, rotated.ClientSecret); err == nil {
		t.Fatal("disabled client gets a token after restart")
	}
	if _, err := tokenFor(t, g, added.ClientID, added.ClientSecret); err != nil {
		t.Fatalf("added client after restart: %v", err)
	}
}

// Disabling a client and enabling it again does not bring its old token
// back: the token fetched before the disable stays refused (401), also
// across a restart; a token fetched after enabling works.
func TestTokensReenabledClientKeepsOldTokensRevoked(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	var created struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-hooli")
	before, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	if s := shipmentsStatus(t, g, before); s != http.StatusOK {
		t.Fatalf("the new client's token: %d, want 200", s)
	}
	cliJSON(t, g, nil, "partner", "disable-client", "partner-hooli", created.ClientID)
	cliJSON(t, g, nil, "partner", "enable-client", "partner-hooli", created.ClientID)
	if s := shipmentsStatus(t, g, before); s != http.StatusUnauthorized {
		t.Fatalf("a token of before the disable, after enabling again: %d, want 401", s)
	}
	after, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatalf("token after enabling again: %v", err)
	}
	if after == before {
		t.Fatal("the token of before the disable was handed out again")
	}
	if s := shipmentsStatus(t, g, after); s != http.StatusOK {
		t.Fatalf("the token fetched after enabling again: %d, want 200", s)
	}
	g.Stop()
	g.Restart()
	waitHTTP(t, g.Base+"/")
	if s := shipmentsStatus(t, g, before); s != http.StatusUnauthorized {
		t.Fatalf("a token of before the disable, after a restart: %d, want 401", s)
	}
	if s := shipmentsStatus(t, g, after); s != http.StatusOK {
		t.Fatalf("the token fetched after enabling again, after a restart: %d, want 200", s)
	}
}
