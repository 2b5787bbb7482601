package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
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
			if !d.NextArg() {
				return nil, d.ArgErr()
			}
			app.DataDir = d.Val()
			if d.NextArg() {
				return nil, d.ArgErr()
			}
		case "encryption_key":
			if app.EncryptionKey != "" {
				return nil, d.Err("encryption_key given twice")
			}
			if !d.NextArg() {
				return nil, d.ArgErr()
			}
			app.EncryptionKey = d.Val()
			if d.NextArg() {
				return nil, d.ArgErr()
			}
		case "storage":
			if app.StorageRaw != nil {
				return nil, d.Err("storage given twice")
			}
			unm, name, err := parseStorage(d)
			if err != nil {
				return nil, err
			}
			app.StorageRaw = caddyconfig.JSONModuleObject(unm, "backend", name, nil)
		case "tokens":
			if app.Tokens != nil {
				return nil, d.Err("tokens block given twice")
			}
			app.Tokens = new(TokensConfig)
			if err := app.Tokens.UnmarshalCaddyfile(d.NewFromNextSegment()); err != nil {
				return nil, err
			}
		case "webhooks":
			if app.Webhooks != nil {
				return nil, d.Err("webhooks block given twice")
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
