// Package token benchmarks the token endpoint (HTTP Basic, token reuse on)
// against Caddy's static respond in the same process, and prints the
// throughput ratio.
//
//	go test -run '^$' -bench . -benchtime 20000x ./bench/token/
//
// Target: ratio >= 0.5.
package token

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate/caddymodule"
)

const (
	benchClient = "bench-client"
	benchSecret = "bench-secret-0123456789abcdefghijklmnopqrstuvwxyz"
	concurrency = 16
)

func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run sends n POSTs with concurrency workers and returns the elapsed time.
func run(b *testing.B, client *http.Client, url string, basic bool, n int) time.Duration {
	var wg sync.WaitGroup
	per := n / concurrency
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				req, _ := http.NewRequest(http.MethodPost, url, nil)
				if basic {
					req.SetBasicAuth(benchClient, benchSecret)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("%s: %d", url, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func BenchmarkTokenEndpointVsStaticRespond(b *testing.B) {
	port := freePort(b)
	cf := fmt.Sprintf(`{
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
`, b.TempDir(), benchClient, benchSecret, port)
	cfg, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
	if err != nil {
		b.Fatalf("adapt: %v %v", err, warn)
	}
	if err := caddy.Load(cfg, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = caddy.Stop() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2, MaxIdleConns: concurrency * 4}}
	run(b, client, base+"/api/auth/token", true, concurrency*20)
	run(b, client, base+"/static", false, concurrency*20)

	const rounds = 10
	n := max(b.N/rounds, concurrency)
	var tTok, tStatic time.Duration
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		tTok += run(b, client, base+"/api/auth/token", true, n)
		tStatic += run(b, client, base+"/static", false, n)
	}
	b.StopTimer()
	total := float64((n / concurrency) * concurrency * rounds)
	ratio := tStatic.Seconds() / tTok.Seconds()
	b.ReportMetric(total/tTok.Seconds(), "token-req/s")
	b.ReportMetric(total/tStatic.Seconds(), "static-req/s")
	b.ReportMetric(ratio, "ratio")
	b.Logf("token endpoint (Basic, reuse) / static respond throughput ratio: %.3f (target >= 0.5); %.0f vs %.0f req/s",
		ratio, total/tTok.Seconds(), total/tStatic.Seconds())
}
