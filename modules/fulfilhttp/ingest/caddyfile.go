package ingest

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("fulfilment_ingest", parseIngestDirective)
}

// parseIngestDirective parses the fulfilment_ingest directive:
//
//	fulfilment_ingest <feed> {
//		secret       <shared secret>   # required, at least 32 bytes, e.g. {env.WMS_INGEST_SECRET}
//		max_body     <size>            # default 8MiB
//		read_timeout <duration>        # wait for the body; default 60s
//	}
func parseIngestDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	ih := new(IngestHandler)
	if err := ih.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return ih, nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler (syntax above).
func (h *IngestHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if !d.NextArg() {
		return d.Err("fulfilment_ingest: want the feed name")
	}
	h.Feed = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		opt := d.Val()
		if opt == "read_timeout" {
			var err error
			if h.ReadTimeout, err = fulfilhttp.ParseReadTimeout(d, h.ReadTimeout); err != nil {
				return err
			}
			continue
		}
		switch opt {
		case "secret":
			if err := caddyfileargs.String(d, &h.Secret); err != nil {
				return err
			}
		case "max_body":
			if err := caddyfileargs.Once(d, h.MaxBodyBytes != 0); err != nil {
				return err
			}
			v, err := caddyfileargs.One(d)
			if err != nil {
				return err
			}
			n, err := humanize.ParseBytes(v)
			if err != nil || n == 0 || n > 1<<30 {
				return d.Errf("max_body: want a size up to 1GiB, got %q", v)
			}
			h.MaxBodyBytes = int64(n)
		default:
			return d.Errf("unknown fulfilment_ingest option %q", opt)
		}
	}
	if h.Secret == "" {
		return d.Err("fulfilment_ingest: secret is required")
	}
	return nil
}
