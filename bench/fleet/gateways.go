package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
)

// The benchmark partner's webhook key and the ingest endpoint's secret
// (throw-away gateways only).
const (
	webhookKey   = "bench-webhook-key-0123456789abcdefghijklmn"
	ingestSecret = "bench-ingest-Ire2Jld7Pg7EREXaqqLtq9N2NcQRVR8a3yj-wlRXlO0"
)

// caddyfile is one gateway: the benchmark partner, webhooks to 127.0.0.1's
// ephemeral ports, a push-only feed "push" taken on the ingest listener,
// and a polled feed "src" (the latency run's source), with the state in
// storage (empty: Badger in DATA).
func caddyfile(storage string, port, ingestPort, adminPort int, srcURL string) string {
	concurrency := ""
	if *perPartner > 0 {
		concurrency = fmt.Sprintf("per_partner_concurrency %d\n\t\t\tworkers %d", *perPartner, max(64, *perPartner))
	}
	return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	default_bind 127.0.0.1
	fulfilment {
		data_dir {$DATA}
		%s
		tokens {
			partner partner-bench {
				webhook_key %s
				client %s %s
			}
		}
		webhooks {
			%s
			allow_http
			allow_networks 127.0.0.1 {
				ports 32768-65535
			}
		}
		feed push
		feed src {
			url %s
		}
	}
}

http://127.0.0.1:%d {
	fulfilment_token {
		path /api/auth/token
	}
	fulfilment_auth
	fulfilment_subscriptions
}

http://127.0.0.1:%d {
	fulfilment_ingest push {
		secret %s
	}
}
`, adminPort, storage, webhookKey, benchgw.Client, benchgw.Secret, concurrency, srcURL, port, ingestPort, ingestSecret)
}

// gateway is one running gateway process.
type gateway struct {
	name         string
	base, ingest string // http://127.0.0.1:<port>
	admin        string // 127.0.0.1:<port>
	*benchgw.Process
}

// startGateway runs bin on a fresh directory under root, with the state in
// the PostgreSQL database dsn (Badger in the directory when "").
func startGateway(bin, root, name, dsn, srcURL string) (*gateway, error) {
	storage := ""
	if dsn != "" {
		storage = "storage postgres {env.FULFILGATE_DATABASE_URL}"
	}
	ports, err := benchgw.FreePorts(3)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	proc, err := benchgw.Caddy{Bin: bin, Dir: dir, Config: caddyfile(storage, ports[0], ports[1], ports[2], srcURL),
		ConfigName: "Caddyfile", LogName: "log", Env: []string{"DATA=" + filepath.Join(dir, "data"), "FULFILGATE_DATABASE_URL=" + dsn}}.Start()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	g := &gateway{Process: proc, name: name,
		base:   fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		ingest: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		admin:  fmt.Sprintf("127.0.0.1:%d", ports[2])}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := benchgw.FetchToken(g.base + "/api/auth/token")
		if err == nil {
			return g, nil
		}
		select {
		case <-g.Done:
			return nil, fmt.Errorf("%s exited at start:\n%s", name, g.logTail())
		default:
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("%s gave no token within a minute: %w\n%s", name, err, g.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop interrupts the process and waits for it (killing it after 30 s).
func (g *gateway) stop() { g.Stop(30 * time.Second) }

// logTail is the end of the gateway's log, for error messages.
func (g *gateway) logTail() string { return g.LogTail(1000) }

// subscribe subscribes the benchmark partner to event at each target.
func (g *gateway) subscribe(event string, targets []string) error {
	tok, err := benchgw.FetchToken(g.base + "/api/auth/token")
	if err != nil {
		return err
	}
	for _, target := range targets {
		req, err := http.NewRequest(http.MethodPost, g.base+"/api/fulfilment/v4/subscriptions",
			strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, target, event)))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("subscribing %s: %d %s", target, resp.StatusCode, b)
		}
	}
	return nil
}

// push sends changes (JSON objects) to the gateway's ingest endpoint.
func (g *gateway) push(client *http.Client, changes []string) error {
	req, err := http.NewRequest(http.MethodPost, g.ingest+"/", strings.NewReader(`{"changes":[`+strings.Join(changes, ",")+`]}`))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+ingestSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("push to %s: %d %s", g.name, resp.StatusCode, b)
	}
	return nil
}

// waitIngest pushes an empty page until the ingest endpoint takes it (the
// feed starts after the listener), for up to 30 s.
func (g *gateway) waitIngest() error {
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := g.push(client, nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the ingest endpoint did not take changes within 30 s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// queued reads the queue's depth from the admin API.
func (g *gateway) queued() (int64, error) {
	resp, err := http.Get("http://" + g.admin + "/fulfilment/webhooks/depth")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var d struct {
		Queued int64 `json:"queued"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("depth: %d %s", resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return 0, fmt.Errorf("depth: %w", err)
	}
	return d.Queued, nil
}
