package fulfilment

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// FeedConfig is one upstream change feed of the fulfilment app: the WMS's
// changes are read from URL (or pushed to a
// fulfilment_ingest handler naming this feed) and turned into partner events.
type FeedConfig struct {
	// Name identifies the feed (its cursor and state in the data dir, the
	// admin API, metrics). 1 to 64 of A-Z a-z 0-9 _ . -. Required.
	Name string `json:"name"`

	// URL of the change feed, polled as GET {url}?after={cursor}&limit={n}.
	// Placeholders such as {env.WMS_FEED} are replaced at provision time.
	// Empty: the feed is not polled (push only, see fulfilment_ingest).
	URL string `json:"url,omitempty"`

	// Interval between polls once the reader has caught up. Default 500ms.
	// While pages come back full the reader follows "next" at once.
	Interval caddy.Duration `json:"interval,omitempty"`

	// PageSize is the number of changes asked for per request (limit).
	// Default 100.
	PageSize int `json:"page_size,omitempty"`

	// Timeout of one feed request, body included. Default 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// BackoffMax caps the back-off after upstream errors, time-outs and
	// malformed pages (it starts at Interval and doubles, with jitter).
	// Default 30s.
	BackoffMax caddy.Duration `json:"backoff_max,omitempty"`

	// MaxPageBytes is the largest page accepted; a larger one is an error
	// and the next request asks for half as many changes. Default 8 MiB.
	MaxPageBytes int64 `json:"max_page_bytes,omitempty"`

	// Headers are sent with every feed request (for example an API key);
	// values may use placeholders such as {env.WMS_KEY}.
	Headers http.Header `json:"headers,omitempty"`

	// DedupeWindow is how long a processed change id is remembered so that
	// it is never turned into events twice (a cursor going backwards, a
	// repeated push). Default 168h (7 days). Fixed when the feed first
	// starts in a process.
	DedupeWindow caddy.Duration `json:"dedupe_window,omitempty"`

	// Fields, Kinds and Changes rename the feed's field names, kind names
	// and change names for a WMS whose feed names them otherwise; keys are
	// the canonical names (fields: id partner kind entity change status
	// shipment products at; kinds: outbound shipment label receipt inbound
	// adjustment; changes: outbound.created outbound.status-changed
	// shipment.created shipment.dispatched label.printed
	// label.status-changed receipt.received inbound.created
	// inbound.status-changed adjustment.posted). Default: the canonical
	// names.
	Fields  map[string]string `json:"fields,omitempty"`
	Kinds   map[string]string `json:"kinds,omitempty"`
	Changes map[string]string `json:"changes,omitempty"`

	// CreatedIsStatus: an outbound or inbound "created" change is its
	// first status, so it fires outbound-status / inbound-status. Default
	// true.
	CreatedIsStatus *bool `json:"created_is_status,omitempty"`

	mapping *feed.Mapping
	url     string
	headers http.Header
}

// UnmarshalCaddyfile parses one feed block of the fulfilment global option;
// d is positioned on "feed":
//
//	feed <name> {
//		url            <url>            # omit for a push-only feed
//		interval       <duration>       # default 500ms
//		page_size      <n>              # default 100
//		timeout        <duration>       # default 10s
//		backoff_max    <duration>       # default 30s
//		max_page_size  <size>           # default 8MiB
//		header         <name> <value>   # repeatable
//		dedupe_window  <duration>       # default 168h
//		field          <canonical> <upstream-name>   # repeatable
//		kind           <canonical> <upstream-name>   # repeatable
//		change         <kind.change> <upstream-name> # repeatable
//		created_is_status true|false    # default true
//	}
func (c *FeedConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "feed"
	if !d.NextArg() {
		return d.ArgErr()
	}
	c.Name = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		opt := d.Val()
		pair := func(dst *map[string]string) error {
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("%s: want <canonical name> <upstream name>", opt)
			}
			if *dst == nil {
				*dst = map[string]string{}
			}
			(*dst)[args[0]] = args[1]
			return nil
		}
		var err error
		switch opt {
		case "url":
			err = caddyfileargs.String(d, &c.URL)
		case "interval":
			err = caddyfileargs.Duration(d, &c.Interval)
		case "timeout":
			err = caddyfileargs.Duration(d, &c.Timeout)
		case "backoff_max":
			err = caddyfileargs.Duration(d, &c.BackoffMax)
		case "dedupe_window":
			err = caddyfileargs.Duration(d, &c.DedupeWindow)
		case "page_size":
			err = caddyfileargs.PositiveInt(d, &c.PageSize)
		case "max_page_size":
			if err = caddyfileargs.Once(d, c.MaxPageBytes != 0); err != nil {
				return err
			}
			var v string
			if v, err = caddyfileargs.One(d); err == nil {
				n, perr := humanize.ParseBytes(v)
				if perr != nil || n == 0 || n > 1<<30 {
					err = d.Errf("max_page_size: want a size up to 1GiB, got %q", v)
				}
				c.MaxPageBytes = int64(n)
			}
		case "header":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("header: want <name> <value>")
			}
			if c.Headers == nil {
				c.Headers = http.Header{}
			}
			c.Headers.Add(args[0], args[1])
		case "field":
			err = pair(&c.Fields)
		case "kind":
			err = pair(&c.Kinds)
		case "change":
			err = pair(&c.Changes)
		case "created_is_status":
			if err = caddyfileargs.Once(d, c.CreatedIsStatus != nil); err != nil {
				return err
			}
			var v string
			if v, err = caddyfileargs.One(d); err == nil {
				b, perr := strconv.ParseBool(v)
				if perr != nil {
					err = d.Errf("created_is_status: want true or false, got %q", v)
				}
				c.CreatedIsStatus = &b
			}
		default:
			return d.Errf("unknown feed option %q", opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// provision checks the feed and fills in what it needs at start.
func (c *FeedConfig) provision(repl *caddy.Replacer) error {
	if !feed.ValidName(c.Name) {
		return fmt.Errorf("invalid feed name %q: use 1 to 64 of A-Z a-z 0-9 _ . -", c.Name)
	}
	m, err := feed.NewMapping(&feed.MappingConfig{
		Fields: c.Fields, Kinds: c.Kinds, Changes: c.Changes, CreatedIsStatus: c.CreatedIsStatus,
	})
	if err != nil {
		return fmt.Errorf("feed %s: %w", c.Name, err)
	}
	c.mapping = m
	c.url = repl.ReplaceKnown(c.URL, "")
	c.headers = http.Header{}
	for k, vs := range c.Headers {
		for _, v := range vs {
			c.headers.Add(k, repl.ReplaceKnown(v, ""))
		}
	}
	if c.headers.Get("User-Agent") == "" {
		// The WMS's logs name the gateway, as they do for webhooks.
		c.headers.Set("User-Agent", "Fulfilgate-Feed/"+Version())
	}
	if c.PageSize < 0 || c.MaxPageBytes < 0 || c.Interval < 0 || c.Timeout < 0 || c.BackoffMax < 0 || c.DedupeWindow < 0 {
		return fmt.Errorf("feed %s: negative setting", c.Name)
	}
	if err := c.pollConfig().Validate(); err != nil {
		return fmt.Errorf("feed %s: %w", c.Name, err)
	}
	return nil
}

func (c *FeedConfig) pollConfig() feed.PollConfig {
	return feed.PollConfig{
		URL: c.url, Interval: time.Duration(c.Interval), PageSize: c.PageSize,
		Timeout: time.Duration(c.Timeout), BackoffMax: time.Duration(c.BackoffMax),
		MaxPageBytes: c.MaxPageBytes, Header: c.headers,
	}
}

// provisionFeeds checks every feed; names must be unique.
func (a *App) provisionFeeds(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	seen := map[string]bool{}
	var errs []error
	for _, c := range a.Feeds {
		if c == nil {
			continue
		}
		if seen[c.Name] {
			errs = append(errs, fmt.Errorf("feed %q is configured twice", c.Name))
		}
		seen[c.Name] = true
		if err := c.provision(repl); err != nil {
			errs = append(errs, err)
		}
	}
	if err := registerFeedMetrics(ctx.GetMetricsRegistry()); err != nil {
		errs = append(errs, fmt.Errorf("feeds: registering metrics: %w", err))
	}
	return errors.Join(errs...)
}
