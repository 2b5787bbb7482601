package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func parse(t *testing.T, block string) (*Handler, error) {
	t.Helper()
	h := new(Handler)
	return h, h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("fulfilment_gateway {\n" + block + "}"))
}

// The jobs' own paths default inside the gateway, each job takes its own
// directive's options, and their order in the block does not matter.
func TestGatewayCaddyfileDefaultsAndOptions(t *testing.T) {
	h, err := parse(t, "version {\n map products items\n version v4\n}\nsubscriptions {\n read_timeout 3s\n}\nauth X-Partner\ntoken\nportal {\n max_clients 3\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		raw  json.RawMessage
		want []string
	}{
		{"portal", h.PortalRaw, []string{`"handler":"fulfilment_portal"`, `"prefix":"/portal"`, `"max_clients":3`}},
		{"token", h.TokenRaw, []string{`"handler":"fulfilment_token"`, `"path":"/api/auth/token"`}},
		{"auth", h.AuthRaw, []string{`"handler":"fulfilment_auth"`, `"identity_header":"X-Partner"`}},
		{"subscriptions", h.SubscriptionsRaw, []string{`"handler":"fulfilment_subscriptions"`, `"read_timeout":3000000000`}},
		{"version", h.VersionRaw, []string{`"handler":"fulfilment_version"`, `"products":"items"`}},
	} {
		for _, w := range c.want {
			if !strings.Contains(string(c.raw), w) {
				t.Errorf("%s: %s, want %s in it", c.name, c.raw, w)
			}
		}
	}

	h, err = parse(t, "portal {\n prefix /partners\n}\ntoken {\n path /oauth/token\n}\nauth\n"+versionBlock)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h.PortalRaw), `"prefix":"/partners"`) || !strings.Contains(string(h.TokenRaw), `"path":"/oauth/token"`) {
		t.Errorf("own paths not kept: portal %s, token %s", h.PortalRaw, h.TokenRaw)
	}
	if h.SubscriptionsRaw != nil {
		t.Errorf("subscriptions %s without a subscriptions line", h.SubscriptionsRaw)
	}
}

// An incomplete or unclear gateway block is refused with a message that
// says what to change.
func TestGatewayCaddyfileRefusals(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{versionBlock, "needs the Bearer guard"},
		{"auth\n", "needs a version block"},
		{"auth\nauth\n" + versionBlock, "auth is given twice"},
		{"auth\nportal\nportal\n" + versionBlock, "portal is given twice"},
		{"auth\nproxy\n" + versionBlock, `unknown fulfilment_gateway job "proxy"`},
		{"auth\nportal {\n colour blue\n}\n" + versionBlock, "colour"},
		{"auth\nversion {\n}\n", "version"},
	} {
		if _, err := parse(t, c.block); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("block %q: error %v, want one saying %q", c.block, err, c.want)
		}
	}
	h := new(Handler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("fulfilment_gateway extra {\nauth\n}")); err == nil {
		t.Error("an argument after fulfilment_gateway was accepted")
	}
}

// A JSON configuration is held to the same: both required jobs, each slot
// holding its own module, and own paths for the portal and the token
// endpoint (without them either would answer every request). Each is
// refused when Caddy loads it.
func TestGatewayJSONRefusals(t *testing.T) {
	up := newRecorder(t)
	const version = `{"handler": "fulfilment_version", "resources": {"products": "items"}, "versions": [{"name": "v4", "upstream_prefix": "/wms"}]}`
	const auth = `{"handler": "fulfilment_auth"}`
	for _, c := range []struct{ name, jobs, want string }{
		{"no guard", `"version": ` + version, "the Bearer guard (auth) is required"},
		{"no version", `"auth": ` + auth, "the version mapping (version) is required"},
		{"another module as the guard", `"auth": {"handler": "static_response"}, "version": ` + version, "auth must be the fulfilment_auth handler"},
		{"a guard as the version", `"auth": ` + auth + `, "version": ` + auth, "version must be the fulfilment_version handler"},
		{"portal without a prefix", `"portal": {"handler": "fulfilment_portal"}, "auth": ` + auth + `, "version": ` + version, "the portal needs a prefix"},
		{"token endpoint without a path", `"token": {"handler": "fulfilment_token"}, "auth": ` + auth + `, "version": ` + version, "the token endpoint needs a path"},
	} {
		cfg := fmt.Sprintf(`{"admin": {"disabled": true}, "apps": {
			"fulfilment": {"data_dir": %q},
			"http": {"servers": {"gw": {"listen": ["127.0.0.1:%d"], "routes": [{"handle": [
				{"handler": "fulfilment_gateway", %s},
				{"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}]}]}}}}}`,
			t.TempDir(), freePort(t), c.jobs, up.addr())
		err := caddy.Load([]byte(cfg), true)
		if err == nil {
			_ = caddy.Stop()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: load error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// A matcher on the gateway is refused, inline or named: the requests it
// left out would go to the proxy after it without the guard. ("*", which
// matches every request, is no matcher to Caddy.)
func TestGatewayCaddyfileRefusesAMatcher(t *testing.T) {
	for _, matcher := range []string{"/api/*", "@api", "/"} {
		cf := gatewayCaddyfile(t.TempDir(), 1, "\t\tauth\n"+versionBlock, "127.0.0.1:2")
		cf = strings.Replace(cf, "\tfulfilment_gateway {", "\t@api path /api/*\n\tfulfilment_gateway "+matcher+" {", 1)
		_, err := adapt(cf)
		if err == nil || !strings.Contains(err.Error(), "fulfilment_gateway takes no matcher") || !strings.Contains(err.Error(), "Caddyfile:16") {
			t.Errorf("matcher %s: %v, want the refusal of a matcher, at the directive's line", matcher, err)
		}
	}
	for _, matcher := range []string{"", "* "} {
		cf := gatewayCaddyfile(t.TempDir(), 1, "\t\tauth\n"+versionBlock, "127.0.0.1:2")
		cf = strings.Replace(cf, "\tfulfilment_gateway {", "\tfulfilment_gateway "+matcher+"{", 1)
		if _, err := adapt(cf); err != nil {
			t.Errorf("matcher %q: %v", matcher, err)
		}
	}
}
