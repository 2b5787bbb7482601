// Package token benchmarks the token endpoint (HTTP Basic, token reuse on)
// against Caddy's static respond in the same process, and prints the
// throughput ratio.
//
//	go test -run '^$' -bench . -benchtime 40000x ./bench/token/
//
// Target: ratio >= 0.5.
package token

import (
	"fmt"
	"net/http"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"
	"github.com/fulfilgate/fulfilgate/bench/internal/loadtest"
)

const (
	benchClient = "bench-client"
	benchSecret = "bench-secret-rr9C9ucXEeNo7d98cAe8YDrhia1Ojn2J07HNRr-Mz8Y"
)

func BenchmarkTokenEndpointVsStaticRespond(b *testing.B) {
	port := loadtest.FreePort(b)
	loadtest.LoadCaddyfile(b, fmt.Sprintf(`{
	admin off
	log {
		output discard
	}
	fulfilment {
		data_dir %s
		tokens {
			throttle off
			partner bench-partner {
				client %s %s
			}
		}
	}
}
http://127.0.0.1:%d {
	route /api/auth/token {
		fulfilment_token
	}
	respond /static "{\"access_token\":\"x\",\"token_type\":\"Bearer\",\"expires_in\":3600}" 200
}
`, b.TempDir(), benchClient, benchSecret, port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ratio := loadtest.Compare(b,
		loadtest.Target{Name: "token", Method: http.MethodPost, URL: base + "/api/auth/token",
			Decorate: func(r *http.Request) { r.SetBasicAuth(benchClient, benchSecret) }},
		loadtest.Target{Name: "static", Method: http.MethodPost, URL: base + "/static"})
	b.Logf("target: ratio >= 0.5; measured %.3f", ratio)
}
