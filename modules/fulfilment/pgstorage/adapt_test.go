package pgstorage

import (
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// The Caddyfile's `storage postgres` in the fulfilment option adapts to the
// module object the app loads.
func TestCaddyfileAdaptsToTheStorageModule(t *testing.T) {
	input := "{\n\tfulfilment {\n\t\tstorage postgres {env.FULFILGATE_DATABASE_URL} {\n\t\t\tmax_conns 12\n\t\t\tstatement_timeout 10s\n\t\t\tlisten_timeout 5s\n\t\t}\n\t}\n}\n\n:8080 {\n\trespond ok\n}\n"
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	var cfg struct {
		Apps struct {
			Fulfilment struct {
				Storage json.RawMessage `json:"storage"`
			} `json:"fulfilment"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	want := `{"backend":"postgres","dsn":"{env.FULFILGATE_DATABASE_URL}","listen_timeout":5000000000,"max_conns":12,"statement_timeout":10000000000}`
	if got := string(cfg.Apps.Fulfilment.Storage); got != want {
		t.Errorf("storage adapted to %s, want %s", got, want)
	}
}
