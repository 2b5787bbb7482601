package fulfilment

import (
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("fulfilment", parseGlobalOption)
}

// parseGlobalOption parses the fulfilment global option:
//
//	{
//		fulfilment {
//			data_dir <path>
//			encryption_key <key>  # e.g. {env.FULFILGATE_ENCRYPTION_KEY}; default: none
//			storage <backend> [...] # a fulfilment.storage module; default: badger
//			tokens   { ... }   # see TokensConfig
//			webhooks { ... }   # see WebhooksConfig
//			feed <name> { ... } # see FeedConfig; repeatable
//		}
//	}
func parseGlobalOption(d *caddyfile.Dispenser, existing any) (any, error) {
	app := new(App)
	if existing != nil {
		return nil, d.Err("the fulfilment global option may appear only once")
	}
	d.Next() // consume option name
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "data_dir":
			if err := caddyfileargs.String(d, &app.DataDir); err != nil {
				return nil, err
			}
		case "encryption_key":
			if err := caddyfileargs.String(d, &app.EncryptionKey); err != nil {
				return nil, err
			}
		case "storage":
			if err := caddyfileargs.Once(d, app.StorageRaw != nil); err != nil {
				return nil, err
			}
			unm, name, err := parseStorage(d)
			if err != nil {
				return nil, err
			}
			app.StorageRaw = caddyconfig.JSONModuleObject(unm, "backend", name, nil)
		case "tokens":
			if err := caddyfileargs.Once(d, app.Tokens != nil); err != nil {
				return nil, err
			}
			app.Tokens = new(TokensConfig)
			if err := app.Tokens.UnmarshalCaddyfile(d.NewFromNextSegment()); err != nil {
				return nil, err
			}
		case "webhooks":
			if err := caddyfileargs.Once(d, app.Webhooks != nil); err != nil {
				return nil, err
			}
			app.Webhooks = new(WebhooksConfig)
			if err := app.Webhooks.UnmarshalCaddyfile(d.NewFromNextSegment()); err != nil {
				return nil, err
			}
		case "feed":
			f := new(FeedConfig)
			if err := f.UnmarshalCaddyfile(d.NewFromNextSegment()); err != nil {
				return nil, err
			}
			app.Feeds = append(app.Feeds, f)
		default:
			return nil, d.Errf("unknown fulfilment option %q", d.Val())
		}
	}
	return httpcaddyfile.App{Name: "fulfilment", Value: caddyconfig.JSON(app, nil)}, nil
}
