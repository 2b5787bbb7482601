package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// A fleet is three gateway instances (A, B, C) on one PostgreSQL database,
// each with its own admin endpoint, data dir and partner listener on
// 127.0.0.1, and one WMS simulator in a process of its own that all three
// read and proxy to (a simulator inside an instance would be a warehouse of
// that instance alone: killing it would wipe the WMS, and three of them on
// one port would share the connections through SO_REUSEPORT).
//
// Each instance reads the feed through a tap of its own: a reverse proxy
// in the test that records the instance's polls, so a test knows which
// instance reads the feed (the per-feed lease's holder) without asking
// the gateway.

// Static partners of the fleet's Caddyfile.
const (
	fleetKeyCons  = "fleet-cons-webhook-key-0123456789abcdefgh"
	fleetKeyPlain = "fleet-plain-webhook-key-0123456789abcdefg"
	fleetSecret   = "fleet-client-secret-Vt3kq9LxW2bN8sQfR1mZ4pYc7HdJ0uAe6GiKoTlXwE"
)

// fleetCaddyfile is one instance: state in $FULFILGATE_DATABASE_URL, the
// token endpoint, the guard, the subscriptions API and the v4 mapping on
// GW_PORT in front of the simulator on WMS_PORT, and the feed "wms" read
// from FEED_URL. HOOK_TIMEOUT is the webhook attempt timeout.
const fleetCaddyfile = `{
	admin {$ADMIN}
	default_bind 127.0.0.1
	fulfilment {
		data_dir {$DATA}
		storage postgres {env.FULFILGATE_DATABASE_URL}
		tokens {
			partner partner-cons {
				consolidation
				webhook_key ` + fleetKeyCons + `
				client cons-client ` + fleetSecret + `
			}
			partner partner-plain {
				webhook_key ` + fleetKeyPlain + `
				client plain-client ` + fleetSecret + `
			}
		}
		webhooks {
			allow_http
			allow_networks 127.0.0.1 {
				ports 32768-65535
			}
			timeout {$HOOK_TIMEOUT:10s}
		}
		feed wms {
			url {$FEED_URL}
			interval 100ms
			page_size {$FEED_PAGE:100}
			backoff_max 1s
		}
	}
}

http://127.0.0.1:{$GW_PORT} {
	fulfilment_token {
		path /api/auth/token
	}
	fulfilment_auth
	fulfilment_subscriptions
	fulfilment_version {
		map products items
		expose shipments
		version v4 {
			upstream_prefix /wms
		}
	}
	reverse_proxy 127.0.0.1:{$WMS_PORT}
}
`

// fleetOptions tune a fleet.
type fleetOptions struct {
	dsn         string        // the database; "" = a fresh one on the shared cluster
	hookTimeout string        // webhook attempt timeout; "" = 10s
	feedPage    int           // feed page size; 0 = 100
	feedDelay   time.Duration // added to every feed answer by the taps (a slow WMS)
}

// fleet is a running fleet.
type fleet struct {
	t    *testing.T
	sim  *gateway
	wms  string // http://127.0.0.1:<port>, the simulator
	inst []*instance
}

// instance is one gateway of a fleet.
type instance struct {
	Name string // "A", "B", "C"
	*gateway
	Base string   // the partner listener, http://127.0.0.1:<port>
	tap  *feedTap // the feed as this instance reads it
}

// startFleet starts the simulator, then A (which creates the schema and
// the signing key), then B and C. An instance that does not start fails
// the test with its log.
func startFleet(t *testing.T, o fleetOptions) *fleet {
	t.Helper()
	if o.dsn == "" {
		o.dsn = pgtest.Database(t)
	}
	wmsPort := freePort(t)
	f := &fleet{t: t, wms: fmt.Sprintf("http://127.0.0.1:%d", wmsPort)}
	f.sim = startGateway(t, "{\n\tadmin {$ADMIN}\n\tdefault_bind 127.0.0.1\n}\n"+simSite, fmt.Sprintf("WMS_PORT=%d", wmsPort), "WMS_NAME=fleet")
	waitHTTP(t, f.wms+"/wms")
	for _, name := range []string{"A", "B", "C"} {
		tap := newFeedTap(t, f.wms, o.feedDelay)
		port := freePort(t)
		g := &gateway{t: t, Dir: t.TempDir(), Admin: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Logs: &syncBuffer{}}
		g.Env = []string{
			"ADMIN=" + g.Admin, "DATA=" + g.Dir + "/data", "HOME=" + g.Dir,
			"XDG_DATA_HOME=" + g.Dir + "/xdg-data", "XDG_CONFIG_HOME=" + g.Dir + "/xdg-config",
			"FULFILGATE_DATABASE_URL=" + o.dsn,
			fmt.Sprintf("GW_PORT=%d", port), fmt.Sprintf("WMS_PORT=%d", wmsPort),
			"FEED_URL=" + tap.URL + "/wms/changes",
		}
		if o.hookTimeout != "" {
			g.Env = append(g.Env, "HOOK_TIMEOUT="+o.hookTimeout)
		}
		if o.feedPage > 0 {
			g.Env = append(g.Env, fmt.Sprintf("FEED_PAGE=%d", o.feedPage))
		}
		if err := os.WriteFile(g.Dir+"/Caddyfile", []byte(fleetCaddyfile), 0o600); err != nil {
			t.Fatal(err)
		}
		in := &instance{Name: name, gateway: g, Base: fmt.Sprintf("http://127.0.0.1:%d", port), tap: tap}
		err := g.tryStart()
		if err == nil {
			t.Cleanup(g.Stop)
			err = in.waitServing(30 * time.Second)
		}
		if err != nil && len(f.inst) == 0 {
			t.Fatalf("instance %s did not start on PostgreSQL: %v; its log:\n%s", name, err, g.Logs)
		}
		if err != nil {
			t.Fatalf("instance %s did not start on the PostgreSQL database that %d instance(s) already use: %v\n"+
				"several instances on one database must run side by side; its log:\n%s", name, len(f.inst), err, g.Logs)
		}
		f.inst = append(f.inst, in)
	}
	return f
}

// waitServing waits until the instance's partner listener answers; the
// admin endpoint answers before the apps have started, so the process may
// still exit.
func (in *instance) waitServing(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		select {
		case <-in.done:
			return fmt.Errorf("caddy exited during start-up: %v", in.waitErr)
		default:
		}
		resp, err := http.Get(in.Base + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("its listener %s did not answer within %s: %w", in.Base, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// byName returns the instance called name.
func (f *fleet) byName(name string) *instance {
	for _, in := range f.inst {
		if in.Name == name {
			return in
		}
	}
	f.t.Fatalf("no instance %q", name)
	return nil
}

// others returns the instances other than not.
func (f *fleet) others(not *instance) []*instance {
	var out []*instance
	for _, in := range f.inst {
		if in != not {
			out = append(out, in)
		}
	}
	return out
}

// pids maps each running instance's pid to its name.
func (f *fleet) pids() map[int]string {
	m := map[int]string{}
	for _, in := range f.inst {
		select {
		case <-in.done:
		default:
			m[in.cmd.Process.Pid] = in.Name
		}
	}
	return m
}

// feedReader waits until exactly one instance has polled the feed within
// the last window and returns it; it fails the test when none does within
// `within`, or when two read the feed in the same window (one reader per
// feed, whatever the number of instances).
func (f *fleet) feedReader(t *testing.T, within, window time.Duration) *instance {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var readers []*instance
		for _, in := range f.inst {
			if in.tap.polledSince(time.Now().Add(-window)) > 0 {
				readers = append(readers, in)
			}
		}
		if len(readers) > 1 {
			names := []string{}
			for _, r := range readers {
				names = append(names, r.Name)
			}
			t.Fatalf("instances %v all polled the feed within %s: one instance at a time must read a feed", names, window)
		}
		if len(readers) == 1 {
			return readers[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instance polled the feed within %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// control calls the simulator's control surface and returns the new id.
func (f *fleet) control(path, body string) string {
	f.t.Helper()
	id, err := f.tryControl(path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// tryControl is control for any goroutine: it returns the error.
func (f *fleet) tryControl(path, body string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(f.wms+"/wms/_control/"+path, "application/json", strings.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("simulator control %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var rec struct {
		ID string `json:"id"`
	}
	if err != nil || resp.StatusCode/100 != 2 || json.Unmarshal(b, &rec) != nil || rec.ID == "" {
		return "", fmt.Errorf("simulator control %s: %d %s (%v)", path, resp.StatusCode, b, err)
	}
	return rec.ID, nil
}

// token fetches an access token from the instance (HTTP Basic client
// authentication); it returns the status and the token.
func (in *instance) token(t *testing.T, client, secret string) (int, string) {
	t.Helper()
	basic := base64.StdEncoding.EncodeToString([]byte(client + ":" + secret))
	status, _, body := do(t, "POST", in.Base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"),
		"Authorization", "Basic "+basic, "Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status == 200 {
		if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
			t.Fatalf("instance %s: token answer %s", in.Name, body)
		}
	}
	return status, tok.AccessToken
}

// mustToken is token that fails the test unless the answer is 200.
func (in *instance) mustToken(t *testing.T, client, secret string) string {
	t.Helper()
	status, tok := in.token(t, client, secret)
	if status != 200 {
		t.Fatalf("instance %s: token for %s: %d, want 200\n%s", in.Name, client, status, in.Logs)
	}
	return tok
}

// products GETs /api/fulfilment/v4/products with the token and returns
// the status.
func (in *instance) products(t *testing.T, token string) int {
	t.Helper()
	status, _, _ := do(t, "GET", in.Base+"/api/fulfilment/v4/products", nil, "Authorization", "Bearer "+token)
	return status
}

// subscribe subscribes the token's partner to event at target on this
// instance and returns the subscription's id.
func (in *instance) subscribe(t *testing.T, token, target, event string) string {
	t.Helper()
	status, _, body := do(t, "POST", in.Base+"/api/fulfilment/v4/subscriptions",
		strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, target, event)),
		"Authorization", "Bearer "+token, "Content-Type", "application/json")
	var sub struct {
		ID string `json:"id"`
	}
	if status != 201 || json.Unmarshal(body, &sub) != nil || sub.ID == "" {
		t.Fatalf("instance %s: subscribing to %s: %d %s", in.Name, event, status, body)
	}
	return sub.ID
}

// admin calls the instance's admin API and decodes a 2xx answer into v.
func (in *instance) admin(t *testing.T, method, path, body string, v any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	status, _, b := do(t, method, "http://"+in.Admin+path, r, "Content-Type", "application/json")
	if status/100 != 2 {
		t.Fatalf("instance %s: %s %s: %d %s", in.Name, method, path, status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("instance %s: %s %s: %v: %s", in.Name, method, path, err, b)
		}
	}
}

// feedTap is a reverse proxy to the simulator that records one instance's
// polls of the feed (and may slow them down).
type feedTap struct {
	URL   string
	mu    sync.Mutex
	polls []time.Time
}

func newFeedTap(t *testing.T, wms string, delay time.Duration) *feedTap {
	target, err := url.Parse(wms)
	if err != nil {
		t.Fatal(err)
	}
	tap := &feedTap{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wms/changes" {
			tap.mu.Lock()
			tap.polls = append(tap.polls, time.Now())
			tap.mu.Unlock()
			if delay > 0 {
				time.Sleep(delay)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tap.URL = srv.URL
	return tap
}

// polledSince counts the polls at or after since.
func (tap *feedTap) polledSince(since time.Time) int {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	n := 0
	for i := len(tap.polls) - 1; i >= 0 && !tap.polls[i].Before(since); i-- {
		n++
	}
	return n
}

// firstPollAfter returns the first poll after since (zero if none).
func (tap *feedTap) firstPollAfter(since time.Time) time.Time {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for _, p := range tap.polls {
		if p.After(since) {
			return p
		}
	}
	return time.Time{}
}
