package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Two static partners: a consolidation one and a non-consolidation one.
const (
	feedKeyCons   = "cons-webhook-key-0123456789abcdefghij"
	feedKeyPlain  = "plain-webhook-key-0123456789abcdefghi"
	feedSecret    = "client-secret-8zAUTu8fAnFen-K11iDy5MtqZwUOPqLbdoJ06nHd6jo"
	feedIngestKey = "ingest-Ire2Jld7Pg7EREXaqqLtq9N2NcQRVR8a3yj-wlRXlO0"
)

// feedCaddyfile is a gateway with the token endpoint, the Bearer guard and
// the subscriptions API, the simulator on WMS_PORT and a feed reading
// FEED_URL (with the extra feed options given). An internal listener on
// INGEST_PORT takes pushed changes into a push-only feed "push".
func feedCaddyfile(feedOptions string) string {
	return `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
		tokens {
			partner partner-cons {
				consolidation
				webhook_key ` + feedKeyCons + `
				client cons-client ` + feedSecret + `
			}
			partner partner-plain {
				webhook_key ` + feedKeyPlain + `
				client plain-client ` + feedSecret + `
			}
		}
		webhooks {
			allow_http
			allow_networks 127.0.0.0/8
		}
		feed wms {
			url {$FEED_URL}
			` + feedOptions + `
		}
		feed push
	}
}

http://127.0.0.1:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route /api/fulfilment/* {
		fulfilment_auth
		fulfilment_subscriptions
		respond 404
	}
}

http://127.0.0.1:{$INGEST_PORT} {
	bind 127.0.0.1
	fulfilment_ingest push {
		secret {env.INGEST_SECRET}
	}
}

` + simSite
}

// simSite serves the WMS simulator on WMS_PORT.
const simSite = `
http://127.0.0.1:{$WMS_PORT} {
	wms_simulator {
		name {$WMS_NAME}
	}
}
`

// feedEnv is one test's gateway, simulator and receivers.
type feedEnv struct {
	t               *testing.T
	g               *gateway
	gw, wms, ingest string
	cons, plain     *goReceiver
}

// startFeedEnv runs the gateway with feedOptions; feedURL "" reads the
// built-in simulator.
func startFeedEnv(t *testing.T, feedURL, feedOptions string) *feedEnv {
	return startFeedEnvSim(t, feedURL, feedOptions, false, nil)
}

// startFeedEnvSim is startFeedEnv; with separateSim the simulator runs in a
// process of its own (so that killing the gateway does not wipe the WMS).
// With feedURL "" and via not nil, the gateway reads the URL via returns
// for the simulator's feed (a test's proxy in front of it).
func startFeedEnvSim(t *testing.T, feedURL, feedOptions string, separateSim bool, via func(simFeed string) string) *feedEnv {
	t.Helper()
	gp, wp, ip := freePort(t), freePort(t), freePort(t)
	e := &feedEnv{t: t,
		gw: fmt.Sprintf("http://127.0.0.1:%d", gp), wms: fmt.Sprintf("http://127.0.0.1:%d", wp),
		ingest: fmt.Sprintf("http://127.0.0.1:%d", ip)}
	if feedURL == "" {
		feedURL = e.wms + "/wms/changes"
		if via != nil {
			feedURL = via(feedURL)
		}
	}
	cf := feedCaddyfile(feedOptions)
	if separateSim {
		cf = strings.TrimSuffix(cf, simSite)
		startGateway(t, "{\n\tadmin {$ADMIN}\n}\n"+simSite, fmt.Sprintf("WMS_PORT=%d", wp), "WMS_NAME=sim")
	}
	e.g = startGateway(t, cf,
		fmt.Sprintf("GW_PORT=%d", gp), fmt.Sprintf("WMS_PORT=%d", wp), fmt.Sprintf("INGEST_PORT=%d", ip),
		"FEED_URL="+feedURL, "INGEST_SECRET="+feedIngestKey, "WMS_NAME="+t.Name())
	waitHTTP(t, e.wms+"/wms")
	e.cons = startGoReceiver(t, feedKeyCons)
	e.plain = startGoReceiver(t, feedKeyPlain)
	e.subscribeAll("cons-client", e.cons.URL)
	e.subscribeAll("plain-client", e.plain.URL)
	return e
}

// subscribeAll subscribes the client's partner to all seven events.
func (e *feedEnv) subscribeAll(client, target string) {
	t := e.t
	t.Helper()
	basic := base64.StdEncoding.EncodeToString([]byte(client + ":" + feedSecret))
	status, _, body := do(t, "POST", e.gw+"/api/auth/token", nil, "Authorization", "Basic "+basic)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != 200 || json.Unmarshal(body, &tok) != nil {
		t.Fatalf("token for %s: %d %s\n%s", client, status, body, e.g.Logs)
	}
	for _, ev := range webhooks.EventNames {
		status, _, body := do(t, "POST", e.gw+"/api/fulfilment/v4/subscriptions",
			strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, target+"/hook", ev)),
			"Authorization", "Bearer "+tok.AccessToken, "Content-Type", "application/json")
		if status != 201 {
			t.Fatalf("subscribe %s to %s: %d %s", client, ev, status, body)
		}
	}
}

// control calls the simulator's control surface and returns the record.
func (e *feedEnv) control(path, body string) map[string]any {
	e.t.Helper()
	status, _, b := do(e.t, "POST", e.wms+"/wms/_control/"+path, strings.NewReader(body), "Content-Type", "application/json")
	var rec map[string]any
	if status/100 != 2 || json.Unmarshal(b, &rec) != nil {
		e.t.Fatalf("control %s: %d %s", path, status, b)
	}
	return rec
}

func (e *feedEnv) controlID(path, body string) string {
	e.t.Helper()
	id, _ := e.control(path, body)["id"].(string)
	if id == "" {
		e.t.Fatalf("control %s: no id", path)
	}
	return id
}

// feedStatus reads one feed's state from the admin API.
func (e *feedEnv) feedStatus(name string) map[string]any {
	e.t.Helper()
	status, _, b := do(e.t, "GET", "http://"+e.g.Admin+"/fulfilment/feeds/"+name, nil)
	var st map[string]any
	if status != 200 || json.Unmarshal(b, &st) != nil {
		e.t.Fatalf("admin feed %s: %d %s", name, status, b)
	}
	return st
}

// goReceiver is a webhook receiver on 127.0.0.1 that checks every signature
// with the partner's key (answering 401 to a bad one) and records the events.
type goReceiver struct {
	URL string
	mu  sync.Mutex
	got []gotHook
	bad []string
}

type gotHook struct {
	HookID, Type, Resource, Identifier string
}

func startGoReceiver(t *testing.T, key string) *goReceiver {
	r := &goReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var p webhooks.Payload
		ok := webhooks.Verify([]byte(key), body, req.Header.Get("x-hook-signature")) && json.Unmarshal(body, &p) == nil
		r.mu.Lock()
		defer r.mu.Unlock()
		if !ok {
			r.bad = append(r.bad, string(body))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.got = append(r.got, gotHook{req.Header.Get("x-hook-id"), p.Type, p.Resource, p.Identifier})
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// events returns the distinct events received as "type identifier", sorted,
// with how many different x-hook-ids each came with, and the bad requests.
func (r *goReceiver) events() (map[string]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := map[string]map[string]bool{}
	for _, h := range r.got {
		k := h.Type + " " + h.Identifier
		if ids[k] == nil {
			ids[k] = map[string]bool{}
		}
		ids[k][h.HookID] = true
	}
	out := map[string]int{}
	for k, v := range ids {
		out[k] = len(v)
	}
	return out, append([]string(nil), r.bad...)
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// changeIDs returns the ids of every change in the simulator's feed, oldest
// first. The simulator numbers each run's changes from its start time, so
// tests compare cursors with these ids rather than with counts.
func (e *feedEnv) changeIDs() []string {
	e.t.Helper()
	status, _, b := do(e.t, "GET", e.wms+"/wms/changes?limit=1000", nil)
	var page struct {
		Changes []struct {
			ID string `json:"id"`
		} `json:"changes"`
	}
	if status != 200 || json.Unmarshal(b, &page) != nil {
		e.t.Fatalf("reading the simulator's feed: %d %s", status, b)
	}
	ids := make([]string, len(page.Changes))
	for i, c := range page.Changes {
		ids[i] = c.ID
	}
	return ids
}

// position returns how many of the simulator's changes a cursor covers.
func (e *feedEnv) position(cursor any) int {
	e.t.Helper()
	for i, id := range e.changeIDs() {
		if id == fmt.Sprint(cursor) {
			return i + 1
		}
	}
	return 0
}
