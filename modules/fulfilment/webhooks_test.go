package fulfilment

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

func TestWebhooksConfigCaddyfile(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    WebhooksConfig
		wantErr string
	}{
		{name: "empty", input: "webhooks", want: WebhooksConfig{}},
		{name: "empty block", input: "webhooks {\n}", want: WebhooksConfig{}},
		{name: "timeout", input: "webhooks {\n timeout 3s\n}", want: WebhooksConfig{Timeout: caddy.Duration(3 * time.Second)}},
		{name: "retry period in days", input: "webhooks {\n retry_period 2d\n}", want: WebhooksConfig{RetryPeriod: caddy.Duration(48 * time.Hour)}},
		{name: "dead retention", input: "webhooks {\n dead_retention 72h\n}", want: WebhooksConfig{DeadRetention: caddy.Duration(72 * time.Hour)}},
		{name: "max attempts", input: "webhooks {\n max_attempts 3\n}", want: WebhooksConfig{MaxAttempts: 3}},
		{name: "delivery log size", input: "webhooks {\n delivery_log_size 20\n}", want: WebhooksConfig{DeliveryLogSize: 20}},
		{name: "delivery log off", input: "webhooks {\n delivery_log_size off\n}", want: WebhooksConfig{DeliveryLogSize: -1}},
		{name: "delivery log zero", input: "webhooks {\n delivery_log_size 0\n}", wantErr: "delivery_log_size must be a positive integer or off"},
		{name: "delivery log twice", input: "webhooks {\n delivery_log_size off\n delivery_log_size 5\n}", wantErr: "delivery_log_size given twice"},
		{name: "delivery log missing", input: "webhooks {\n delivery_log_size\n}", wantErr: "wrong argument count"},
		{name: "per target", input: "webhooks {\n per_target_concurrency 2\n}", want: WebhooksConfig{PerTargetConcurrency: 2}},
		{name: "workers", input: "webhooks {\n workers 8\n}", want: WebhooksConfig{Workers: 8}},
		{name: "per partner", input: "webhooks {\n per_partner_concurrency 3\n}", want: WebhooksConfig{PerPartnerConcurrency: 3}},
		{name: "per partner zero", input: "webhooks {\n per_partner_concurrency 0\n}", wantErr: "per_partner_concurrency must be a positive integer"},
		{name: "max subscriptions", input: "webhooks {\n max_subscriptions_per_partner 5\n}", want: WebhooksConfig{MaxSubscriptionsPerPartner: 5}},
		{name: "allow http", input: "webhooks {\n allow_http\n}", want: WebhooksConfig{AllowHTTP: true}},
		{name: "standard webhooks", input: "webhooks {\n standard_webhooks\n}", want: WebhooksConfig{StandardWebhooks: true}},
		{name: "user agent", input: "webhooks {\n user_agent \"Acme Hooks/1.0\"\n}", want: WebhooksConfig{UserAgent: "Acme Hooks/1.0"}},
		{name: "allow networks repeat", input: "webhooks {\n allow_networks 127.0.0.0/8 ::1\n allow_networks 10.1.0.0/16\n}",
			want: WebhooksConfig{AllowNetworks: []AllowNetwork{{Networks: []string{"127.0.0.0/8", "::1"}}, {Networks: []string{"10.1.0.0/16"}}}}},
		{name: "allow networks scoped", input: "webhooks {\n allow_networks 127.0.0.1 {\n  ports 9090 9100-9199\n  partners acme globex\n }\n allow_networks 10.1.0.0/16 {\n  ports 443\n }\n}",
			want: WebhooksConfig{AllowNetworks: []AllowNetwork{
				{Networks: []string{"127.0.0.1"}, Ports: []string{"9090", "9100-9199"}, Partners: []string{"acme", "globex"}},
				{Networks: []string{"10.1.0.0/16"}, Ports: []string{"443"}}}}},
		{name: "everything", input: `webhooks {
	timeout 5s
	max_attempts 3
	retry_period 5s
	dead_retention 1h
	per_target_concurrency 1
	workers 2
	max_subscriptions_per_partner 7
	allow_http
	allow_networks 127.0.0.0/8
	standard_webhooks
	user_agent ua
}`, want: WebhooksConfig{Timeout: caddy.Duration(5 * time.Second), MaxAttempts: 3, RetryPeriod: caddy.Duration(5 * time.Second),
			DeadRetention: caddy.Duration(time.Hour), PerTargetConcurrency: 1, Workers: 2, MaxSubscriptionsPerPartner: 7,
			AllowHTTP: true, AllowNetworks: []AllowNetwork{{Networks: []string{"127.0.0.0/8"}}}, StandardWebhooks: true, UserAgent: "ua"}},

		{name: "argument on block", input: "webhooks x", wantErr: "wrong argument count"},
		{name: "unknown option", input: "webhooks {\n retries 3\n}", wantErr: `unknown webhooks option "retries"`},
		{name: "twice", input: "webhooks {\n workers 2\n workers 3\n}", wantErr: "workers given twice"},
		{name: "timeout missing", input: "webhooks {\n timeout\n}", wantErr: "wrong argument count"},
		{name: "timeout extra", input: "webhooks {\n timeout 1s 2s\n}", wantErr: "wrong argument count"},
		{name: "timeout bad", input: "webhooks {\n timeout soon\n}", wantErr: "timeout:"},
		{name: "timeout zero", input: "webhooks {\n timeout 0s\n}", wantErr: "timeout must be positive"},
		{name: "retry negative", input: "webhooks {\n retry_period -1h\n}", wantErr: "retry_period must be positive"},
		{name: "retention bad", input: "webhooks {\n dead_retention week\n}", wantErr: "dead_retention:"},
		{name: "attempts zero", input: "webhooks {\n max_attempts 0\n}", wantErr: "max_attempts must be a positive integer"},
		{name: "attempts text", input: "webhooks {\n max_attempts many\n}", wantErr: "max_attempts must be a positive integer"},
		{name: "attempts missing", input: "webhooks {\n max_attempts\n}", wantErr: "wrong argument count"},
		{name: "attempts extra", input: "webhooks {\n max_attempts 1 2\n}", wantErr: "wrong argument count"},
		{name: "workers negative", input: "webhooks {\n workers -2\n}", wantErr: "workers must be a positive integer"},
		{name: "per target text", input: "webhooks {\n per_target_concurrency x\n}", wantErr: "per_target_concurrency must be a positive integer"},
		{name: "max subs zero", input: "webhooks {\n max_subscriptions_per_partner 0\n}", wantErr: "max_subscriptions_per_partner must be a positive integer"},
		{name: "allow http arg", input: "webhooks {\n allow_http yes\n}", wantErr: "wrong argument count"},
		{name: "standard arg", input: "webhooks {\n standard_webhooks on\n}", wantErr: "wrong argument count"},
		{name: "networks missing", input: "webhooks {\n allow_networks\n}", wantErr: "wrong argument count"},
		{name: "networks bad cidr", input: "webhooks {\n allow_networks 10.0.0.0/33\n}", wantErr: "not a CIDR network"},
		{name: "networks bad ip", input: "webhooks {\n allow_networks localhost\n}", wantErr: "neither a CIDR network nor an IP address"},
		{name: "networks bad port", input: "webhooks {\n allow_networks 127.0.0.1 {\n  ports 70000\n }\n}", wantErr: "neither a port"},
		{name: "networks reversed ports", input: "webhooks {\n allow_networks 127.0.0.1 {\n  ports 9100-9000\n }\n}", wantErr: "neither a port"},
		{name: "networks empty ports", input: "webhooks {\n allow_networks 127.0.0.1 {\n  ports\n }\n}", wantErr: "wrong argument count"},
		{name: "networks empty partners", input: "webhooks {\n allow_networks 127.0.0.1 {\n  partners\n }\n}", wantErr: "wrong argument count"},
		{name: "networks ports twice", input: "webhooks {\n allow_networks 127.0.0.1 {\n  ports 1\n  ports 2\n }\n}", wantErr: `"ports" given twice`},
		{name: "networks unknown option", input: "webhooks {\n allow_networks 127.0.0.1 {\n  hosts a\n }\n}", wantErr: `unknown allow_networks option "hosts"`},
		{name: "user agent missing", input: "webhooks {\n user_agent\n}", wantErr: "wrong argument count"},
		{name: "user agent extra", input: "webhooks {\n user_agent a b\n}", wantErr: "wrong argument count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got WebhooksConfig
			err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestWebhooksConfigDefaults(t *testing.T) {
	for _, in := range []*WebhooksConfig{nil, {}} {
		c, err := in.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if time.Duration(c.Timeout) != 10*time.Second || c.MaxAttempts != 185 ||
			time.Duration(c.RetryPeriod) != 24*time.Hour || time.Duration(c.DeadRetention) != 7*24*time.Hour ||
			c.PerTargetConcurrency != 4 || c.Workers != 64 || c.MaxSubscriptionsPerPartner != 100 ||
			c.AllowHTTP || c.StandardWebhooks || len(c.allow) != 0 {
			t.Fatalf("defaults: %+v", c)
		}
		if !strings.HasPrefix(c.UserAgent, "Fulfilgate-Webhooks/") {
			t.Fatalf("user agent %q", c.UserAgent)
		}
	}
}

func TestWebhooksConfigValidate(t *testing.T) {
	c, err := (&WebhooksConfig{AllowNetworks: []AllowNetwork{{Networks: []string{"127.1.2.3/8", "::1"}},
		{Networks: []string{"10.0.0.1"}, Ports: []string{"443", "9000-9099"}, Partners: []string{"acme"}}}}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := []netpolicy.AllowRule{
		{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}},
		{Networks: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}, Ports: []netpolicy.PortRange{{First: 443, Last: 443}, {First: 9000, Last: 9099}},
			Partners: []string{"acme"}},
	}
	if !reflect.DeepEqual(c.allow, want) {
		t.Fatalf("allow = %v, want %v", c.allow, want)
	}
	for _, tt := range []struct {
		in      WebhooksConfig
		wantErr string
	}{
		{WebhooksConfig{Timeout: caddy.Duration(time.Minute), RetryPeriod: caddy.Duration(time.Second)}, "timeout (1m0s) is longer than retry_period (1s)"},
		{WebhooksConfig{MaxAttempts: -1}, "max_attempts must be positive"},
		{WebhooksConfig{Workers: -1}, "workers must be positive"},
		{WebhooksConfig{Workers: 8, PerPartnerConcurrency: 9}, "per_partner_concurrency (9) is more than workers (8)"},
		{WebhooksConfig{AllowNetworks: []AllowNetwork{{Networks: []string{"nowhere"}}}}, "allow_networks:"},
		{WebhooksConfig{AllowNetworks: []AllowNetwork{{}}}, "allow_networks: an entry names no network"},
		{WebhooksConfig{AllowNetworks: []AllowNetwork{{Networks: []string{"::1"}, Ports: []string{"0"}}}}, "allow_networks:"},
		{WebhooksConfig{AllowNetworks: []AllowNetwork{{Networks: []string{"::1"}, Partners: []string{""}}}}, "allow_networks: partner"},
		{WebhooksConfig{UserAgent: "a\r\nX-Evil: 1"}, "user_agent must be one line"},
	} {
		if _, err := tt.in.withDefaults(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%+v: error = %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}

// An operator may shorten the interface's retry limits, never extend them.
func TestWebhooksConfigInterfaceLimits(t *testing.T) {
	for _, tt := range []struct {
		in      WebhooksConfig
		wantErr string
	}{
		{WebhooksConfig{MaxAttempts: 186}, "max_attempts (186) is more than the interface allows (185)"},
		{WebhooksConfig{RetryPeriod: caddy.Duration(25 * time.Hour)}, "retry_period (25h0m0s) is longer than the interface allows (24h0m0s)"},
	} {
		if _, err := tt.in.withDefaults(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%+v: error %v, want %q", tt.in, err, tt.wantErr)
		}
	}
	for _, ok := range []WebhooksConfig{{MaxAttempts: 185, RetryPeriod: caddy.Duration(24 * time.Hour)}, {MaxAttempts: 3, RetryPeriod: caddy.Duration(time.Minute)}} {
		if _, err := ok.withDefaults(); err != nil {
			t.Errorf("%+v refused: %v", ok, err)
		}
	}
}

// allow_networks in JSON: the earlier form, a string naming a network
// (every port, every partner), still loads, beside the object form; an
// unknown field in the object is refused.
func TestAllowNetworksJSON(t *testing.T) {
	var c WebhooksConfig
	in := `{"allow_networks":["127.0.0.0/8",{"networks":["10.0.0.0/8"],"ports":["443"],"partners":["acme"]}]}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	want := []AllowNetwork{{Networks: []string{"127.0.0.0/8"}},
		{Networks: []string{"10.0.0.0/8"}, Ports: []string{"443"}, Partners: []string{"acme"}}}
	if !reflect.DeepEqual(c.AllowNetworks, want) {
		t.Fatalf("allow_networks %+v, want %+v", c.AllowNetworks, want)
	}
	if err := json.Unmarshal([]byte(`{"allow_networks":[{"network":"10.0.0.0/8"}]}`), &c); err == nil {
		t.Fatal("an unknown field in an allow_networks entry was accepted")
	}
}
