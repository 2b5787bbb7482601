// Package auth benchmarks the protected path of the gateway (Bearer guard +
// version mapping + reverse proxy) against a bare reverse_proxy to the same
// upstream, in one Caddy process, and prints the throughput ratio.
//
//	go test -run '^$' -bench . -benchtime 20000x ./bench/auth/
//
// Target: ratio >= 0.95.
package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
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

// upstream is a small JSON backend on loopback.
func upstream(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"items":[{"id":"s1","status":"shipped"}],"page":1,"page_size":50,"total":1}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func loadCaddy(b *testing.B, caddyfile string) {
	cfg, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
	if err != nil {
		b.Fatalf("adapt: %v %v", err, warn)
	}
	if err := caddy.Load(cfg, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = caddy.Stop() })
}

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
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&tr) != nil {
		b.Fatalf("token: %d", resp.StatusCode)
	}
	return tr.AccessToken
}

// run sends n GETs with concurrency workers and returns the elapsed time.
func run(b *testing.B, client *http.Client, url string, hdr http.Header, n int) time.Duration {
	var wg sync.WaitGroup
	per := n / concurrency
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
				req.Header = hdr.Clone()
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

func BenchmarkProtectedPathVsBareProxy(b *testing.B) {
	up := upstream(b)
	prot, bare := freePort(b), freePort(b)
	loadCaddy(b, fmt.Sprintf(`{
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
	route /api/auth/token {
		fulfilment_token
	}
	route /api/fulfilment/* {
		fulfilment_auth
		fulfilment_version {
			version v4 {
				upstream_prefix /wms
			}
		}
		reverse_proxy %s
	}
}
http://127.0.0.1:%d {
	reverse_proxy %s
}
`, b.TempDir(), benchClient, benchSecret, prot, up, bare, up))
	protURL := fmt.Sprintf("http://127.0.0.1:%d/api/fulfilment/v4/shipments", prot)
	bareURL := fmt.Sprintf("http://127.0.0.1:%d/wms/shipments", bare)
	tok := token(b, fmt.Sprintf("http://127.0.0.1:%d", prot))
	authHdr := http.Header{"Authorization": {"Bearer " + tok}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2, MaxIdleConns: concurrency * 4}}
	// Warm up both paths (connections, verify cache).
	run(b, client, protURL, authHdr, concurrency*20)
	run(b, client, bareURL, http.Header{}, concurrency*20)

	const rounds = 10
	n := max(b.N/rounds, concurrency)
	var tProt, tBare time.Duration
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		tProt += run(b, client, protURL, authHdr, n)
		tBare += run(b, client, bareURL, http.Header{}, n)
	}
	b.StopTimer()
	total := float64((n / concurrency) * concurrency * rounds)
	ratio := tBare.Seconds() / tProt.Seconds()
	b.ReportMetric(total/tProt.Seconds(), "protected-req/s")
	b.ReportMetric(total/tBare.Seconds(), "bare-req/s")
	b.ReportMetric(ratio, "ratio")
	b.Logf("protected path (auth+version+proxy) / bare reverse_proxy throughput ratio: %.3f (target >= 0.95); %s",
		ratio, strings.TrimSpace(fmt.Sprintf("%.0f vs %.0f req/s", total/tProt.Seconds(), total/tBare.Seconds())))
}
