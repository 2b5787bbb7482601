package fulfilment

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// `caddy validate` (provisioning without start) refuses every setting that
// Start would refuse, and a config it accepts starts: one case per setting
// and limit of the fulfilment app.
func TestValidateRefusesWhatStartWouldRefuse(t *testing.T) {
	t.Setenv("FULFILGATE_TEST_SIGNING_KEY", tSeedB64)
	const hook = `"webhook_key":"a-webhook-key-of-enough-length-0123456789"`
	for _, tc := range []struct {
		name    string
		app     string // fields of the fulfilment app's JSON, besides data_dir
		refused bool
	}{
		{"defaults", ``, false},
		{"webhooks: all set within limits", `"webhooks":{"timeout":"5s","max_attempts":185,"retry_period":"24h","dead_retention":"1h",
			"per_target_concurrency":2,"workers":8,"per_partner_concurrency":8,"max_subscriptions_per_partner":3,"delivery_log_size":1000,
			"allow_http":true,"allow_networks":[{"networks":["10.0.0.0/8"],"ports":["8080"],"partners":["acme"]}],
			"standard_webhooks":true,"user_agent":"Acme-Hooks/2"}`, false},
		{"webhooks: negative timeout", `"webhooks":{"timeout":"-1s"}`, true},
		{"webhooks: negative dead_retention", `"webhooks":{"dead_retention":"-1h"}`, true},
		{"webhooks: negative workers", `"webhooks":{"workers":-1}`, true},
		{"webhooks: delivery_log_size off", `"webhooks":{"delivery_log_size":-1}`, false},
		{"webhooks: delivery_log_size over 1000", `"webhooks":{"delivery_log_size":1001}`, true},
		{"webhooks: delivery_log_size under -1", `"webhooks":{"delivery_log_size":-2}`, true},
		{"webhooks: max_attempts over the interface's 185", `"webhooks":{"max_attempts":186}`, true},
		{"webhooks: retry_period over the interface's 24h", `"webhooks":{"retry_period":"25h"}`, true},
		{"webhooks: timeout longer than retry_period", `"webhooks":{"timeout":"2h","retry_period":"1h"}`, true},
		{"webhooks: per_partner_concurrency over workers", `"webhooks":{"workers":4,"per_partner_concurrency":5}`, true},
		{"webhooks: per_partner_concurrency over the default workers", `"webhooks":{"per_partner_concurrency":65}`, true},
		{"webhooks: user_agent with a control character", `"webhooks":{"user_agent":"bad\u0001agent"}`, true},
		{"webhooks: user_agent with a line break", `"webhooks":{"user_agent":"a\r\nb"}`, true},
		{"webhooks: user_agent with DEL", `"webhooks":{"user_agent":"a\u007fb"}`, true},
		{"webhooks: allow_networks not a network", `"webhooks":{"allow_networks":["nonsense"]}`, true},
		{"webhooks: allow_networks bad port range", `"webhooks":{"allow_networks":[{"networks":["10.0.0.0/8"],"ports":["9-1"]}]}`, true},
		{"tokens: lifetime under 30m", `"tokens":{"lifetime":"10m"}`, true},
		{"tokens: lifetime over 1h", `"tokens":{"lifetime":"2h"}`, true},
		{"tokens: leeway over 60s", `"tokens":{"leeway":"2m"}`, true},
		{"tokens: unknown algorithm", `"tokens":{"algorithm":"RS256"}`, true},
		{"tokens: signing key too short", `"tokens":{"signing_keys":[{"kid":"k","alg":"HS256","key":"c2hvcnQ="}]}`, true},
		{"tokens: signing key from an unset variable", `"tokens":{"signing_keys":[{"kid":"k","alg":"EdDSA","key":"{env.FULFILGATE_TEST_UNSET}"}]}`, true},
		{"tokens: signing key from the environment", `"tokens":{"signing_keys":[{"kid":"k","alg":"EdDSA","key":"{env.FULFILGATE_TEST_SIGNING_KEY}"}]}`, false},
		{"tokens: webhook key too short", `"tokens":{"partners":[{"id":"acme","webhook_key":"short"}]}`, true},
		{"tokens: weak client secret", `"tokens":{"partners":[{"id":"acme",` + hook + `,"clients":[{"id":"c","secret":"password"}]}]}`, true},
		{"tokens: partner given twice", `"tokens":{"partners":[{"id":"acme",` + hook + `},{"id":"acme",` + hook + `}]}`, true},
		{"tokens: a static partner", `"tokens":{"partners":[{"id":"acme",` + hook + `}]}`, false},
		{"feeds: bad name", `"feeds":[{"name":"a/b"}]`, true},
		{"feeds: name given twice", `"feeds":[{"name":"wms"},{"name":"wms"}]`, true},
		{"feeds: negative interval", `"feeds":[{"name":"wms","url":"http://127.0.0.1:9/feed","interval":"-1s"}]`, true},
		{"feeds: unknown canonical field", `"feeds":[{"name":"wms","fields":{"colour":"c"}}]`, true},
		{"feeds: a push-only feed", `"feeds":[{"name":"wms"}]`, false},
		{"encryption_key: not a key", `"encryption_key":"not-a-key"`, true},
		{"encryption_key: from an unset variable", `"encryption_key":"{env.FULFILGATE_TEST_UNSET}"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := json.Marshal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			app := fmt.Sprintf(`{"data_dir":%s}`, dir)
			if tc.app != "" {
				app = fmt.Sprintf(`{"data_dir":%s,%s}`, dir, tc.app)
			}
			cfg := &caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}, AppsRaw: caddy.ModuleMap{"fulfilment": json.RawMessage(app)}}
			err = caddy.Validate(cfg)
			if tc.refused {
				if err == nil {
					t.Fatalf("caddy validate accepted %s", app)
				}
				return
			}
			if err != nil {
				t.Fatalf("caddy validate refused %s: %v", app, err)
			}
			var a App
			if err := json.Unmarshal([]byte(app), &a); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := newConfigContext(t)
			defer cancel()
			started := loadApp(t, ctx, &a)
			if err := started.Start(); err != nil {
				t.Fatalf("caddy validate accepted %s, which Start refuses: %v", app, err)
			}
			if err := started.Stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
