package fulfilment

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestFeedConfigCaddyfile(t *testing.T) {
	no := false
	tests := []struct {
		name, in string
		want     *FeedConfig
		err      string
	}{
		{name: "minimal", in: `feed wms`, want: &FeedConfig{Name: "wms"}},
		{name: "full", in: `feed wms {
			url http://127.0.0.1:8081/wms/changes
			interval 250ms
			page_size 500
			timeout 3s
			backoff_max 1m
			max_page_size 2MiB
			header X-Api-Key {env.WMS_KEY}
			dedupe_window 24h
			field id seq
			field partner owner
			kind outbound order
			change outbound.status-changed STATE
			created_is_status false
		}`, want: &FeedConfig{
			Name: "wms", URL: "http://127.0.0.1:8081/wms/changes",
			Interval: caddy.Duration(250 * time.Millisecond), PageSize: 500, Timeout: caddy.Duration(3 * time.Second),
			BackoffMax: caddy.Duration(time.Minute), MaxPageBytes: 2 << 20,
			Headers:         http.Header{"X-Api-Key": {"{env.WMS_KEY}"}},
			DedupeWindow:    caddy.Duration(24 * time.Hour),
			Fields:          map[string]string{"id": "seq", "partner": "owner"},
			Kinds:           map[string]string{"outbound": "order"},
			Changes:         map[string]string{"outbound.status-changed": "STATE"},
			CreatedIsStatus: &no,
		}},
		{name: "no name", in: `feed`, err: "argument"},
		{name: "two names", in: `feed a b`, err: "argument"},
		{name: "unknown option", in: "feed wms {\n colour blue\n}", err: `unknown feed option "colour"`},
		{name: "bad interval", in: "feed wms {\n interval soon\n}", err: "invalid duration"},
		{name: "zero interval", in: "feed wms {\n interval 0s\n}", err: "interval must be positive"},
		{name: "bad page size", in: "feed wms {\n page_size -3\n}", err: "positive number"},
		{name: "bad size", in: "feed wms {\n max_page_size huge\n}", err: "size"},
		{name: "field needs two", in: "feed wms {\n field id\n}", err: "canonical name"},
		{name: "url needs one", in: "feed wms {\n url\n}", err: "wrong argument count"},
		{name: "bad bool", in: "feed wms {\n created_is_status maybe\n}", err: "true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := new(FeedConfig)
			err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestProvisionFeedsRefusesBadConfig(t *testing.T) {
	for name, feeds := range map[string][]*FeedConfig{
		"bad name":       {{Name: "a/b"}},
		"twice":          {{Name: "wms"}, {Name: "wms"}},
		"unknown field":  {{Name: "wms", Fields: map[string]string{"colour": "x"}}},
		"relative url":   {{Name: "wms", URL: "/wms/changes"}},
		"ftp url":        {{Name: "wms", URL: "ftp://127.0.0.1/changes"}},
		"negative pages": {{Name: "wms", PageSize: -1}},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		a := &App{DataDir: t.TempDir(), Feeds: feeds}
		if err := a.Provision(ctx); err == nil {
			t.Errorf("%s: provisioned", name)
		}
		cancel()
	}
}

// The env placeholders of url and headers are resolved at provision time.
func TestProvisionFeedsResolvesPlaceholders(t *testing.T) {
	t.Setenv("FEED_TEST_PORT", "9999")
	t.Setenv("FEED_TEST_KEY", "k3y")
	c := &FeedConfig{Name: "wms", URL: "http://127.0.0.1:{env.FEED_TEST_PORT}/c", Headers: http.Header{"X-Key": {"{env.FEED_TEST_KEY}"}}}
	if err := c.provision(caddy.NewReplacer()); err != nil {
		t.Fatal(err)
	}
	pc := c.pollConfig()
	if pc.URL != "http://127.0.0.1:9999/c" || pc.Header.Get("X-Key") != "k3y" {
		t.Fatalf("%+v", pc)
	}
	if ua := pc.Header.Get("User-Agent"); !strings.HasPrefix(ua, "Fulfilgate-Feed/") {
		t.Fatalf("feed requests would go out as %q", ua)
	}
	own := &FeedConfig{Name: "wms", URL: "http://127.0.0.1:1/c", Headers: http.Header{"User-Agent": {"Ops-Probe/2"}}}
	if err := own.provision(caddy.NewReplacer()); err != nil {
		t.Fatal(err)
	}
	if ua := own.pollConfig().Header.Get("User-Agent"); ua != "Ops-Probe/2" {
		t.Fatalf("a configured User-Agent was replaced by %q", ua)
	}
}
