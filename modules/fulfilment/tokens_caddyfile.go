package fulfilment

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
)

// UnmarshalCaddyfile parses the "tokens" block of the fulfilment global
// option; d is positioned on the "tokens" token. Full syntax (every line is
// optional; defaults in TokensConfig):
//
//	tokens {
//		issuer    <string>                 # default fulfilgate
//		audience  <string>                 # default fulfilment
//		lifetime  <duration>               # 30m..1h, default 1h
//		leeway    <duration>               # 0..60s, default 0
//		algorithm EdDSA|HS256              # default: the keys' algorithm, else EdDSA
//		signing_key <kid> <alg> <base64>   # repeatable; the first signs; use {env.*}
//		throttle off
//		throttle {
//			client  <failures> <window>    # default 10 1m; off to disable
//			address <failures> <window>    # default 30 1m; off to disable
//			max_entries <n>                # default 65536
//		}
//		partner <id> {                     # repeatable
//			consolidation                  # a consolidation partner (default: not)
//			webhook_key <key>              # at least 32 bytes; use {env.*}. Default:
//			                               # generated, kept in the data dir, rotatable
//			client <id> <secret>           # repeatable; a random secret (at least 32
//			                               # characters, 128 bits by the gateway's
//			                               # estimate): `caddy fulfilment secret`
//			client <id> sha256:<hex>       # or the hex SHA-256 of a random secret (only
//			                               # as strong as the secret; not checked)
//		}
//	}
func (c *TokensConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "tokens"
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		opt := d.Val()
		switch opt {
		case "issuer", "audience", "algorithm", "lifetime", "leeway", "throttle":
			if err := caddyfileargs.Once(d, seen[opt]); err != nil {
				return err
			}
			seen[opt] = true
		}
		switch opt {
		case "issuer":
			if err := caddyfileargs.String(d, &c.Issuer); err != nil {
				return err
			}
		case "audience":
			if err := caddyfileargs.String(d, &c.Audience); err != nil {
				return err
			}
		case "algorithm":
			if err := caddyfileargs.String(d, &c.Algorithm); err != nil {
				return err
			}
		case "lifetime", "leeway": // 0 is a value (no leeway): not caddyfileargs.Duration
			v, err := caddyfileargs.One(d)
			if err != nil {
				return err
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("%s: %v", opt, err)
			}
			if opt == "lifetime" {
				c.Lifetime = caddy.Duration(dur)
			} else {
				c.Leeway = caddy.Duration(dur)
			}
		case "signing_key":
			args := d.RemainingArgs()
			if len(args) != 3 {
				return d.Err("signing_key wants <kid> <alg> <base64 key>")
			}
			c.SigningKeys = append(c.SigningKeys, SigningKeyConfig{KID: args[0], Alg: args[1], Key: args[2]})
		case "throttle":
			if err := c.parseThrottle(d); err != nil {
				return err
			}
		case "partner":
			p, err := parsePartner(d)
			if err != nil {
				return err
			}
			c.Partners = append(c.Partners, p)
		default:
			return d.Errf("unknown tokens option %q", opt)
		}
	}
	return nil
}

func (c *TokensConfig) parseThrottle(d *caddyfile.Dispenser) error {
	if c.Throttle == nil {
		c.Throttle = new(ThrottleConfig)
	}
	t := c.Throttle
	if d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return d.Err("throttle takes a block or the single argument off")
		}
		t.ClientFailures, t.AddressFailures = -1, -1
		return nil
	}
	for nest := d.Nesting(); d.NextBlock(nest); {
		sub := d.Val()
		args := d.RemainingArgs()
		switch sub {
		case "client", "address":
			n, win := -1, caddy.Duration(0)
			switch {
			case len(args) == 1 && args[0] == "off":
			case len(args) == 2:
				var err error
				if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
					return d.Errf("throttle %s: failures must be a positive integer", sub)
				}
				dur, err := caddy.ParseDuration(args[1])
				if err != nil || dur <= 0 {
					return d.Errf("throttle %s: bad window %q", sub, args[1])
				}
				win = caddy.Duration(dur)
			default:
				return d.Errf("throttle %s wants <failures> <window> or off", sub)
			}
			if sub == "client" {
				t.ClientFailures, t.ClientWindow = n, win
			} else {
				t.AddressFailures, t.AddressWindow = n, win
			}
		case "max_entries":
			if len(args) != 1 {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return d.Err("throttle max_entries must be a positive integer")
			}
			t.MaxEntries = n
		default:
			return d.Errf("unknown throttle option %q", sub)
		}
	}
	return nil
}

func parsePartner(d *caddyfile.Dispenser) (PartnerConfig, error) {
	var p PartnerConfig
	id, err := caddyfileargs.One(d)
	if err != nil {
		return p, d.Err("partner wants an id and a block")
	}
	p.ID = id
	for nest := d.Nesting(); d.NextBlock(nest); {
		sub := d.Val()
		args := d.RemainingArgs()
		switch sub {
		case "consolidation":
			if len(args) != 0 {
				return p, d.ArgErr()
			}
			p.Consolidation = true
		case "webhook_key":
			if len(args) != 1 {
				return p, d.ArgErr()
			}
			p.WebhookKey = args[0]
		case "client":
			if len(args) != 2 {
				return p, d.Err("client wants <id> <secret> or <id> sha256:<hex>")
			}
			cl := ClientConfig{ID: args[0]}
			if h, ok := strings.CutPrefix(args[1], "sha256:"); ok {
				cl.SecretSHA256 = h
			} else {
				cl.Secret = args[1]
			}
			p.Clients = append(p.Clients, cl)
		default:
			return p, d.Errf("unknown partner option %q", sub)
		}
	}
	return p, nil
}
