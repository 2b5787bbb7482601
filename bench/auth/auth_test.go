// Package auth benchmarks the protected path of the gateway (the demo's
// shape: the token endpoint for its path, then the Bearer guard, the
// subscriptions API, the version mapping and the reverse proxy) against a
// bare reverse_proxy to the same upstream, in one Caddy process, and prints
// the throughput ratio.
//
//	go test -run '^$' -bench . -benchtime 60000x ./bench/auth/
//
// Target: ratio >= 0.95.
package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"
	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
	"github.com/fulfilgate/fulfilgate/bench/internal/loadtest"
)

const (
	benchClient = benchgw.Client
	benchSecret = benchgw.Secret
)

// token fetches an access token from the gateway at base.
func token(b *testing.B, base string) string {
	req, _ := http.NewRequest(http.MethodPost, base+"/api/auth/token", nil)
	req.SetBasicAuth(benchClient, benchSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tr) != nil {
		b.Fatalf("token: %d", resp.StatusCode)
	}
	return tr.AccessToken
}

func BenchmarkProtectedPathVsBareProxy(b *testing.B) {
	up := loadtest.Upstream(b)
	prot, bare := loadtest.FreePort(b), loadtest.FreePort(b)
	loadtest.LoadCaddyfile(b, fmt.Sprintf(`{
	admin off
	log {
		output discard
	}
	fulfilment {
		data_dir %s
		tokens {
			partner bench-partner {
				client %s %s
			}
		}
	}
}
http://127.0.0.1:%d {
	fulfilment_token {
		path /api/auth/token
	}
	fulfilment_auth
	fulfilment_subscriptions
	fulfilment_version {
		expose shipments
		version v4 {
			upstream_prefix /wms
		}
	}
	reverse_proxy %s
}
http://127.0.0.1:%d {
	reverse_proxy %s
}
`, b.TempDir(), benchClient, benchSecret, prot, up, bare, up))
	tok := token(b, fmt.Sprintf("http://127.0.0.1:%d", prot))
	ratio := loadtest.Compare(b,
		loadtest.Target{Name: "protected", Method: http.MethodGet,
			URL:      fmt.Sprintf("http://127.0.0.1:%d/api/fulfilment/v4/shipments", prot),
			Decorate: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }},
		// The bare proxy gets the identical request, token included: what
		// is compared is the gateway's work, not the token's bytes on the
		// wire (carrying it alone costs a bare proxy about 5 %).
		loadtest.Target{Name: "bare", Method: http.MethodGet,
			URL:      fmt.Sprintf("http://127.0.0.1:%d/wms/shipments", bare),
			Decorate: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }})
	b.Logf("protected path (the demo's shape) / bare reverse_proxy: target >= 0.95; measured %.3f", ratio)
}
