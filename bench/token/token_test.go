// Package token benchmarks the token endpoint (HTTP Basic) against Caddy's
// static respond in the same process, and prints the throughput ratio: with
// token reuse (a client's current token handed out again) and with a new
// token signed for every request.
//
//	go test -run '^$' -bench . -benchtime 40000x ./bench/token/
//
// Targets: ratio >= 0.5 with reuse, >= 0.4 for fresh tokens.
package token

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
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

// gatewayConfig is a gateway on port with the token endpoint, a static
// respond of a token-sized answer, and the partner's clients (one line
// each: "client <id> <secret>").
func gatewayConfig(dataDir string, port int, clients []string) string {
	return fmt.Sprintf(`{
	admin off
	log {
		output discard
	}
	fulfilment {
		data_dir %s
		tokens {
			throttle off
			partner bench-partner {
				%s
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
`, dataDir, strings.Join(clients, "\n\t\t\t\t"), port)
}

func BenchmarkTokenEndpointVsStaticRespond(b *testing.B) {
	port := loadtest.FreePort(b)
	loadtest.LoadCaddyfile(b, gatewayConfig(b.TempDir(), port, []string{"client " + benchClient + " " + benchSecret}))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ratio := loadtest.Compare(b,
		loadtest.Target{Name: "token", Method: http.MethodPost, URL: base + "/api/auth/token",
			Decorate: func(r *http.Request) { r.SetBasicAuth(benchClient, benchSecret) }},
		loadtest.Target{Name: "static", Method: http.MethodPost, URL: base + "/static"})
	b.Logf("target: ratio >= 0.5; measured %.3f", ratio)
}

// Every request is a different client's first, so every answer is a newly
// signed token (reuse hands a client's current token out again, and only
// to that client): the gateway gets a client for each request the
// benchmark can send, and a request beyond them fails the benchmark.
func BenchmarkFreshTokenVsStaticRespond(b *testing.B) {
	n := loadtest.Requests(b.N)
	clients := make([]string, n)
	for i := range clients {
		clients[i] = fmt.Sprintf("client %s %s", freshClient(i), benchSecret)
	}
	port := loadtest.FreePort(b)
	loadtest.LoadCaddyfile(b, gatewayConfig(b.TempDir(), port, clients))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var next atomic.Int64
	ratio := loadtest.Compare(b,
		loadtest.Target{Name: "fresh-token", Method: http.MethodPost, URL: base + "/api/auth/token",
			Decorate: func(r *http.Request) {
				// Beyond the clients, no credentials: a 401 fails the run.
				if i := int(next.Add(1) - 1); i < n {
					r.SetBasicAuth(freshClient(i), benchSecret)
				}
			}},
		loadtest.Target{Name: "static", Method: http.MethodPost, URL: base + "/static"})
	if used := next.Load(); used > int64(n) {
		b.Fatalf("%d requests for %d clients: some tokens could have been reused", used, n)
	}
	b.Logf("target: ratio >= 0.4; measured %.3f", ratio)
}

func freshClient(i int) string { return fmt.Sprintf("fresh-client-%07d", i) }
