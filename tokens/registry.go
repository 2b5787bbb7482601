package tokens

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"
)

// Partner is a partner of the warehouse: its id (the "sub" of its tokens and
// the identity passed upstream), its kind and its webhook key.
type Partner struct {
	ID string
	// Consolidation tells a consolidation partner from a non-consolidation
	// one: it changes which shipment events fire.
	Consolidation bool
	// WebhookKey is the HMAC key of the partner's webhook signatures: the
	// bytes of the key string handed to the partner. It is the effective
	// key: for a static partner, its configured webhook_key, else the key
	// the gateway generated (or last rotated) and keeps in the data store
	// (see static_keys.go).
	WebhookKey []byte
	// Disabled partners get no tokens and their tokens are refused.
	Disabled bool
	// Static partners come from configuration and are changed there.
	Static  bool
	Created time.Time

	keySource string // KeySourceConfiguration or KeySourceGenerated
}

// client is a client id/secret pair of a partner. Only a keyed hash of the
// secret is kept.
type client struct {
	ID        string
	PartnerID string
	hash      [32]byte
	version   string // changes with the secret and on disable (client_version.go)
	legacySV  string // the unkeyed sv of tokens issued before sv was keyed, if any
	Active    bool
	Static    bool
	Created   time.Time
	// hint is the end of the secret (client_grace.go), shown to tell
	// secrets apart; empty for static clients.
	hint string
	// prevHash authenticates the previous secret until prevUntil, after a
	// rotation with a grace period (client_grace.go).
	prevHash  [32]byte
	prevUntil time.Time
}

// registry is an immutable snapshot of partners and clients, replaced as a
// whole on every change so that readers take no lock.
type registry struct {
	partners map[string]*Partner
	clients  map[string]*client
}

// Errors of the partner management operations.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrStatic: the partner, client or key comes from configuration and is
	// changed there, not through the admin API.
	ErrStatic  = errors.New("defined in the configuration; change it there")
	ErrInvalid = errors.New("invalid")
)

// minWebhookKey is the shortest configured webhook key accepted, in bytes
// (a webhook key carries at least 32 bytes of entropy).
const minWebhookKey = 32

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidID reports whether s can name a partner or a client: 1 to 64 of
// A-Z a-z 0-9 . _ -, starting with a letter or digit.
func ValidID(s string) bool { return idPattern.MatchString(s) }

func checkID(what, s string) error {
	if !ValidID(s) {
		return fmt.Errorf("%w: %s id %q: use 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit", ErrInvalid, what, s)
	}
	return nil
}

// ClientInfo describes a client without its secret.
type ClientInfo struct {
	ID      string     `json:"client_id"`
	Active  bool       `json:"active"`
	Static  bool       `json:"static"`
	Created *time.Time `json:"created,omitempty"`
}

// PartnerInfo describes a partner without any secret or key.
type PartnerInfo struct {
	ID            string `json:"id"`
	Consolidation bool   `json:"consolidation"`
	Disabled      bool   `json:"disabled"`
	Static        bool   `json:"static"`
	HasWebhookKey bool   `json:"has_webhook_key"`
	// WebhookKeySource is "configuration" (webhook_key in the Caddyfile:
	// change it there) or "generated" (by the gateway, kept in the data
	// store, rotatable through the admin API).
	WebhookKeySource string       `json:"webhook_key_source"`
	Created          *time.Time   `json:"created,omitempty"`
	Clients          []ClientInfo `json:"clients"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (r *registry) list() []PartnerInfo {
	byPartner := map[string][]ClientInfo{}
	for _, c := range r.clients {
		byPartner[c.PartnerID] = append(byPartner[c.PartnerID], ClientInfo{
			ID: c.ID, Active: c.Active, Static: c.Static, Created: timePtr(c.Created)})
	}
	out := make([]PartnerInfo, 0, len(r.partners))
	for _, p := range r.partners {
		cs := byPartner[p.ID]
		sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
		if cs == nil {
			cs = []ClientInfo{}
		}
		out = append(out, PartnerInfo{ID: p.ID, Consolidation: p.Consolidation, Disabled: p.Disabled,
			Static: p.Static, HasWebhookKey: len(p.WebhookKey) > 0, WebhookKeySource: p.keySource,
			Created: timePtr(p.Created), Clients: cs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// StaticPartner is a partner given by configuration.
type StaticPartner struct {
	ID            string
	Consolidation bool
	// WebhookKey is the key string (at least 32 bytes). Empty: the gateway
	// generates a key once and keeps it in the data store, where the admin
	// API can rotate it; a non-empty WebhookKey always wins over that.
	WebhookKey string
	Clients    []StaticClient
}

// StaticClient is a client given by configuration: either its Secret
// (at least 32 characters and MinSecretBits by SecretStrength; use an
// {env.*} placeholder) or SecretSHA256, the hex SHA-256 of the secret, so
// that the configuration holds no secret. The digest cannot be checked for
// strength, and it is only as strong as the secret: whoever reads it can
// test guesses against it offline, so it must be the digest of a random
// secret.
type StaticClient struct {
	ID           string
	Secret       string
	SecretSHA256 string
}

// validateStatic checks static partners without touching any store.
func validateStatic(ps []StaticPartner) error {
	seenP, seenC := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		if err := checkID("partner", p.ID); err != nil {
			return err
		}
		if seenP[p.ID] {
			return fmt.Errorf("partner %s given twice", p.ID)
		}
		seenP[p.ID] = true
		if p.WebhookKey != "" && len(p.WebhookKey) < minWebhookKey {
			return fmt.Errorf("partner %s: webhook_key has %d bytes; it needs at least %d (generate one with `caddy fulfilment secret`, or leave webhook_key out and the gateway generates and keeps one)",
				p.ID, len(p.WebhookKey), minWebhookKey)
		}
		for _, c := range p.Clients {
			if err := checkID("client", c.ID); err != nil {
				return err
			}
			if seenC[c.ID] {
				return fmt.Errorf("client %s given twice", c.ID)
			}
			seenC[c.ID] = true
			switch {
			case c.Secret != "" && c.SecretSHA256 != "":
				return fmt.Errorf("client %s: give either a secret or its sha256, not both", c.ID)
			case c.SecretSHA256 != "":
				if _, err := parseDigest(c.SecretSHA256); err != nil {
					return fmt.Errorf("client %s: %v", c.ID, err)
				}
			case len(c.Secret) < 32:
				return fmt.Errorf("client %s: the secret needs at least 32 characters (generate one with `caddy fulfilment secret`)", c.ID)
			case SecretStrength(c.Secret) < MinSecretBits:
				return fmt.Errorf("client %s: the secret is too predictable: about %d bits of entropy by the gateway's estimate, at least %d needed (words, repeated parts and runs such as 0123 or abcd count little); use a random secret: `caddy fulfilment secret` generates one",
					c.ID, SecretStrength(c.Secret), MinSecretBits)
			}
		}
	}
	return nil
}
