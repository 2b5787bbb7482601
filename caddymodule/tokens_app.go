package caddymodule

import (
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// TokensConfig is the "tokens" part of the fulfilment app: the token
// settings, signing keys, throttle and static partners (Caddyfile syntax in
// tokens_caddyfile.go). Values of signing keys, client secrets and webhook
// keys may be {env.*} placeholders, resolved at provisioning, so that the
// configuration JSON (visible on the admin API) holds no secret.
type TokensConfig struct {
	// Issuer is the "iss" of issued tokens and the only one accepted.
	// Default "fulfilgate".
	Issuer string `json:"issuer,omitempty"`
	// Audience is the "aud" of issued tokens and the one required.
	// Default "fulfilment".
	Audience string `json:"audience,omitempty"`
	// Lifetime of a new token, 30m to 1h. Default 1h. Anything else is
	// refused at start-up.
	Lifetime caddy.Duration `json:"lifetime,omitempty"`
	// Leeway allowed on exp, 0 to 60s. Default 0.
	Leeway caddy.Duration `json:"leeway,omitempty"`
	// Algorithm pins the signing algorithm: "EdDSA" or "HS256". Default:
	// the algorithm of the signing keys, else EdDSA.
	Algorithm string `json:"algorithm,omitempty"`
	// SigningKeys: the first signs, the others only verify (keep the
	// previous key listed for an hour after a rotation). Default: none, the
	// gateway generates a key and keeps it in its data directory.
	SigningKeys []SigningKeyConfig `json:"signing_keys,omitempty"`
	// Throttle limits failed token requests. Default: 10 failures per client
	// id and 30 per remote address, per minute.
	Throttle *ThrottleConfig `json:"throttle,omitempty"`
	// Partners are static partners and their clients. Default: none.
	Partners []PartnerConfig `json:"partners,omitempty"`

	cfg tokens.Config
	svc *tokens.Service // set by Start; read after App.current()
}

// SigningKeyConfig is a configured signing key.
type SigningKeyConfig struct {
	// KID is the key id put in the token header. Required.
	KID string `json:"kid"`
	// Alg is "EdDSA" or "HS256". Required.
	Alg string `json:"alg"`
	// Key is the Base64 key material: a 32-byte Ed25519 seed for EdDSA, at
	// least 32 bytes for HS256. Use an {env.*} placeholder. Required.
	Key string `json:"key"`
}

// ThrottleConfig limits failed token requests; a 0 field takes its default.
type ThrottleConfig struct {
	// ClientFailures per ClientWindow per client id. Default 10 per 1m;
	// -1 turns the check off.
	ClientFailures int            `json:"client_failures,omitempty"`
	ClientWindow   caddy.Duration `json:"client_window,omitempty"`
	// AddressFailures per AddressWindow per remote address (Caddy's client
	// IP, which honours trusted_proxies). Default 30 per 1m; -1 turns it off.
	AddressFailures int            `json:"address_failures,omitempty"`
	AddressWindow   caddy.Duration `json:"address_window,omitempty"`
	// MaxEntries bounds each table's memory. Default 65536.
	MaxEntries int `json:"max_entries,omitempty"`
}

// PartnerConfig is a static partner.
type PartnerConfig struct {
	// ID is the partner id: the "sub" of its tokens and the identity sent
	// upstream. Required.
	ID string `json:"id"`
	// Consolidation marks a consolidation partner. Default false.
	Consolidation bool `json:"consolidation,omitempty"`
	// WebhookKey signs the partner's webhooks; at least 32 bytes (shorter
	// is refused at start-up). When set it always wins, and the admin API
	// cannot rotate it (409): change it here. Default: the gateway
	// generates a random 32-byte key once, keeps it in the data directory
	// (stable across restarts and reloads) and rotates it on request
	// (`caddy fulfilment partner rotate-webhook-key <id>`, which shows it).
	WebhookKey string `json:"webhook_key,omitempty"`
	// Clients are the partner's client id/secret pairs.
	Clients []ClientConfig `json:"clients,omitempty"`
}

// ClientConfig is a static client: Secret (random: at least 32 characters
// and 128 bits by tokens.SecretStrength, else refused at start-up) or
// SecretSHA256 (hex SHA-256 of the secret, which cannot be checked and is
// only as strong as the secret: use it for random secrets only), not both.
type ClientConfig struct {
	ID           string `json:"id"`
	Secret       string `json:"secret,omitempty"`
	SecretSHA256 string `json:"secret_sha256,omitempty"`
}

// provisionTokens resolves placeholders and checks the configuration; it
// opens nothing, so `caddy validate` works while a server runs.
func (a *App) provisionTokens(ctx caddy.Context) error {
	if a.Tokens == nil {
		a.Tokens = new(TokensConfig)
	}
	cfg, err := a.Tokens.build(caddy.NewReplacer())
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	a.Tokens.cfg = cfg
	return nil
}

// build turns the JSON configuration into a checked tokens.Config.
func (c *TokensConfig) build(repl *caddy.Replacer) (tokens.Config, error) {
	resolve := func(what, v string) (string, error) {
		out := strings.TrimSpace(repl.ReplaceKnown(v, ""))
		if out == "" && v != "" {
			return "", fmt.Errorf("%s is empty after placeholders: is its environment variable set?", what)
		}
		return out, nil
	}
	cfg := tokens.Config{
		Issuer: c.Issuer, Audience: c.Audience, Algorithm: c.Algorithm,
		Lifetime: time.Duration(c.Lifetime), Leeway: time.Duration(c.Leeway),
	}
	for _, k := range c.SigningKeys {
		v, err := resolve("signing key "+k.KID, k.Key)
		if err != nil {
			return cfg, err
		}
		cfg.Keys = append(cfg.Keys, tokens.KeyConfig{KID: k.KID, Alg: k.Alg, Secret: v})
	}
	if t := c.Throttle; t != nil {
		cfg.Throttle = tokens.ThrottleConfig{ClientFailures: t.ClientFailures, ClientWindow: time.Duration(t.ClientWindow),
			AddressFailures: t.AddressFailures, AddressWindow: time.Duration(t.AddressWindow), MaxEntries: t.MaxEntries}
	}
	for _, p := range c.Partners {
		wk, err := resolve("webhook key of partner "+p.ID, p.WebhookKey)
		if err != nil {
			return cfg, err
		}
		sp := tokens.StaticPartner{ID: p.ID, Consolidation: p.Consolidation, WebhookKey: wk}
		for _, cl := range p.Clients {
			sec, err := resolve("secret of client "+cl.ID, cl.Secret)
			if err != nil {
				return cfg, err
			}
			sp.Clients = append(sp.Clients, tokens.StaticClient{ID: cl.ID, Secret: sec, SecretSHA256: cl.SecretSHA256})
		}
		cfg.Partners = append(cfg.Partners, sp)
	}
	if err := cfg.Normalize(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// startTokens opens (or, across a reload, reuses) the token service of the
// data directory and applies this configuration to it.
func (a *App) startTokens(st *sharedState) error {
	v, err := st.service("tokens", func() (any, error) {
		return tokens.Open(tokens.Options{Store: st.Stores.Tokens(), Logger: a.logger.Named("tokens")})
	})
	if err != nil {
		return err
	}
	svc := v.(*tokens.Service)
	err = st.applyFor(a, "tokens", func(to *App) error { return svc.Configure(to.Tokens.cfg) })
	if err != nil {
		return err
	}
	a.Tokens.svc = svc
	a.logger.Info("tokens ready", zap.Int("partners", len(svc.Partners())),
		zap.String("algorithm", a.Tokens.cfg.Algorithm), zap.Duration("lifetime", a.Tokens.cfg.Lifetime))
	return nil
}

// tokenService returns the data dir's running token service, or nil when
// no loaded config has it open (handlers then answer 503). During a reload
// this config's server may serve before this app's Start has set
// a.Tokens.svc; the service the other config started is the same one.
func (a *App) tokenService() *tokens.Service {
	if a == nil || a.Tokens == nil {
		return nil
	}
	st := a.current()
	if st == nil {
		return nil
	}
	if svc := a.Tokens.svc; svc != nil {
		return svc // steady path: no lock
	}
	// The other config's service, once it is configured: a config whose
	// servers run before its own Start has configured it (Caddy starts
	// the http app and this one in no set order) must answer 503, not
	// use a half-built service.
	if v, ok := st.existing("tokens"); ok && v.(*tokens.Service).Configured() {
		return v.(*tokens.Service)
	}
	return nil
}
