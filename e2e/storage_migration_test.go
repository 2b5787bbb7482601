package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// migrationCaddyfile is the repository's Caddyfile with deliveries that
// die after three attempts.
func migrationCaddyfile(t *testing.T) string {
	t.Helper()
	const webhooksBlock = "webhooks {\n\t\t\tallow_http"
	cf := repoCaddyfile(t)
	if !strings.Contains(cf, webhooksBlock) {
		t.Fatalf("the repository's Caddyfile has no %q to add max_attempts to", webhooksBlock)
	}
	return strings.Replace(cf, webhooksBlock, "webhooks {\n\t\t\tmax_attempts 3\n\t\t\tallow_http", 1)
}

// withPostgres is cf with its state in the database of
// $FULFILGATE_DATABASE_URL.
func withPostgres(t *testing.T, cf string) string {
	t.Helper()
	const dataDir = "data_dir {$FULFILGATE_DATA:./data}\n"
	if !strings.Contains(cf, dataDir) {
		t.Fatalf("the Caddyfile has no line %q to add the storage option after", dataDir)
	}
	return strings.Replace(cf, dataDir, dataDir+"\t\tstorage postgres {env.FULFILGATE_DATABASE_URL}\n", 1)
}

// adminJSON calls the admin API at addr and decodes a 2xx answer into v.
func adminJSON(t *testing.T, addr, method, path, body string, v any) {
	t.Helper()
	status, _, b := do(t, method, "http://"+addr+path, strings.NewReader(body), "Content-Type", "application/json")
	if status/100 != 2 {
		t.Fatalf("admin %s %s: %d %s", method, path, status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("admin %s %s: %v: %s", method, path, err, b)
		}
	}
}

// portalAudit is the whole audit log `caddy fulfilment portal audit`
// shows on g.
func portalAudit(t *testing.T, g *repoGateway) []map[string]any {
	t.Helper()
	var audit []map[string]any
	cliJSON(t, g, &audit, "portal", "audit", "--limit", "1000")
	return audit
}

// subscribeAs subscribes the token's partner to event at url on g.
func subscribeAs(t *testing.T, g *repoGateway, token, url, event string) string {
	t.Helper()
	status, _, body := do(t, "POST", g.Base+"/api/fulfilment/v4/subscriptions",
		strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, url, event)),
		"Authorization", "Bearer "+token, "Content-Type", "application/json")
	var sub struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &sub) != nil || sub.ID == "" {
		t.Fatalf("subscribing %s: %d %s", url, status, body)
	}
	return sub.ID
}

// A Badger gateway's whole state moves to PostgreSQL: stopped, exported,
// imported into a new database, a gateway started on it delivers the
// deliveries that were queued, replays the dead ones, accepts the tokens
// issued before and the clients' old secrets, and signs with the partners'
// webhook keys.
func TestMigrateFromBadgerToPostgresKeepsTheState(t *testing.T) {
	t.Parallel()
	cf := migrationCaddyfile(t)
	b := newRepoGateway(t, cf)
	b.run(t)
	var created struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		WebhookKey   string `json:"webhook_key"`
	}
	cliJSON(t, b, &created, "partner", "create", "partner-moving")
	tokBefore, err := tokenFor(t, b, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	// A sign-in to the portal writes the audit log (the link, the sign-in).
	session := portalSignIn(t, b, "partner-moving")

	// /ok answers 204; /dead always fails; /queued fails once, then hangs
	// (the attempt in flight when the gateway stops stays queued). Every request's
	// signature is checked against the partner's generated webhook key.
	var badSignatures, goodSignatures atomic.Int32
	release := make(chan struct{})
	failing := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/queued" && r.Header.Get("x-hook-attempt") != "1" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	recv := newWhGoReceiver(t, failing)
	t.Cleanup(func() { close(release) }) // before the receiver's Close
	verifying := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if webhooks.Verify([]byte(created.WebhookKey), body, r.Header.Get("x-hook-signature")) {
				goodSignatures.Add(1)
			} else {
				badSignatures.Add(1)
			}
			next(w, r)
		}
	}
	recv.set(verifying(failing))
	subDead := subscribeAs(t, b, tokBefore, recv.URL+"/dead", "shipment-shipped")
	subQueued := subscribeAs(t, b, tokBefore, recv.URL+"/queued", "label-status")
	subOK := subscribeAs(t, b, tokBefore, recv.URL+"/ok", "shipment-shipped")

	var test struct{ Delivery string }
	adminJSON(t, b.Admin, "POST", "/fulfilment/webhooks/test", fmt.Sprintf(`{"subscription":%q}`, subDead), &test)
	deadID := test.Delivery
	whEventually(t, whTimeout, "the delivery to /dead dies after three attempts", func() bool {
		var dead struct{ Deliveries []whDelivery }
		adminJSON(t, b.Admin, "GET", "/fulfilment/webhooks/dead", "", &dead)
		return len(dead.Deliveries) == 1 && dead.Deliveries[0].ID == deadID
	})
	adminJSON(t, b.Admin, "POST", "/fulfilment/webhooks/test", fmt.Sprintf(`{"subscription":%q}`, subOK), &test)
	okID := test.Delivery
	session.waitState(t, url.Values{"subscription": {subOK}}, okID, webhooks.StateDelivered)
	adminJSON(t, b.Admin, "POST", "/fulfilment/webhooks/test", fmt.Sprintf(`{"subscription":%q}`, subQueued), &test)
	queuedID := test.Delivery
	whEventually(t, whTimeout, "the delivery to /queued fails once and is tried again", func() bool {
		return len(recv.attempts(queuedID)) == 2
	})

	// While the gateway runs, its data directory cannot be exported.
	export := filepath.Join(t.TempDir(), "state.ndjson")
	if out, err := b.CLI("fulfilment", "export", "--file", export, "--config", "Caddyfile", "--adapter", "caddyfile"); err == nil ||
		!strings.Contains(out, "another gateway runs with the same data_dir") {
		t.Fatalf("export while the gateway runs: %v, want it refused saying a gateway holds the data directory:\n%s", err, out)
	}
	if _, err := os.Stat(export); !os.IsNotExist(err) {
		t.Fatalf("the refused export left a file behind (%v)", err)
	}
	auditBefore := portalAudit(t, b)
	if len(auditBefore) < 2 {
		t.Fatalf("the Badger gateway's audit log holds %v, want the link and the sign-in", auditBefore)
	}
	b.Stop()
	out, err := b.CLI("fulfilment", "export", "--file", export, "--config", "Caddyfile", "--adapter", "caddyfile")
	if err != nil || !strings.Contains(out, `"delivery":1`) || !strings.Contains(out, `"dead_letter":1`) || !strings.Contains(out, `"delivered":1`) {
		t.Fatalf("export of the stopped gateway: %v, want one queued delivery, one dead letter and one delivered delivery exported:\n%s", err, out)
	}
	if fi, err := os.Stat(export); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the export file: %v, mode %v; want mode 0600 (it holds private keys)", err, fi.Mode().Perm())
	}
	if raw, _ := os.ReadFile(export); strings.Contains(string(raw), created.ClientSecret) {
		t.Fatalf("the export holds the client's secret; want only its hash")
	}

	p := newRepoGateway(t, withPostgres(t, cf))
	p.Env = append(p.Env, "FULFILGATE_DATABASE_URL="+pgtest.Database(t))
	if out, err := p.CLI("fulfilment", "import", "--file", export, "--config", "Caddyfile", "--adapter", "caddyfile"); err != nil ||
		!strings.Contains(out, `"from": "badger"`) || !strings.Contains(out, `"into": "postgres"`) {
		t.Fatalf("import into PostgreSQL: %v\n%s", err, out)
	}
	recv.set(verifying(whOK200))
	p.run(t)

	if s := shipmentsStatus(t, p, tokBefore); s != http.StatusOK {
		t.Errorf("a token issued by the Badger gateway, on the PostgreSQL one: %d, want 200 (same signing keys)", s)
	}
	if tok, err := tokenFor(t, p, created.ClientID, created.ClientSecret); err != nil || shipmentsStatus(t, p, tok) != http.StatusOK {
		t.Errorf("the client's old secret on the PostgreSQL gateway: %v, want a token (same pepper and hash)", err)
	}
	if tok, err := tokenFor(t, p, demoClientID, demoClientSecret); err != nil || shipmentsStatus(t, p, tok) != http.StatusOK {
		t.Errorf("the configuration's client on the PostgreSQL gateway: %v, want a token", err)
	}
	whEventually(t, whTimeout, "the queued delivery arrives from the PostgreSQL gateway", func() bool {
		return len(recv.attempts(queuedID)) == 3
	})
	if out, err := p.CLI("fulfilment", "webhooks", "replay", deadID, "--address", p.Admin); err != nil || !strings.Contains(out, `"replayed": 1`) {
		t.Fatalf("replaying the dead delivery on the PostgreSQL gateway: %v\n%s", err, out)
	}
	whEventually(t, whTimeout, "the replayed delivery arrives", func() bool { return len(recv.attempts(deadID)) == 4 })
	whEventually(t, whTimeout, "the queue is empty", func() bool {
		var depth struct{ Queued, Dead int64 }
		adminJSON(t, p.Admin, "GET", "/fulfilment/webhooks/depth", "", &depth)
		return depth.Queued == 0 && depth.Dead == 0
	})
	if got := portalAudit(t, p); !reflect.DeepEqual(got, auditBefore) {
		t.Errorf("portal audit on the PostgreSQL gateway shows\n%v\nwant the Badger gateway's entries, same times and order:\n%v", got, auditBefore)
	}
	var sessions []any
	cliJSON(t, p, &sessions, "portal", "sessions")
	if len(sessions) != 0 {
		t.Errorf("the PostgreSQL gateway lists portal sessions %v, want none (sessions are not carried)", sessions)
	}
	if st, _, _ := do(t, http.MethodGet, p.Base+"/portal/settings/integrations", nil, "Cookie", session.cookie.Name+"="+session.cookie.Value); st != http.StatusSeeOther {
		t.Errorf("the Badger gateway's portal session on the PostgreSQL gateway answered %d, want 303 to sign in again", st)
	}
	// The delivery log of the Badger gateway is there at once: imported,
	// not delivered again.
	pSession := portalSignIn(t, p, "partner-moving")
	if st, body := pSession.get(t, "/webhooks/deliveries?"+url.Values{"subscription": {subOK}}.Encode()); st != http.StatusOK ||
		logStates(body)[okID] != webhooks.StateDelivered {
		t.Errorf("the partner's delivery log on the PostgreSQL gateway answered %d with rows %v, want delivery %s delivered (carried by the export)",
			st, logStates(body), okID)
	}
	if n := len(recv.attempts(okID)); n != 1 {
		t.Errorf("the delivered delivery reached the receiver %d times, want once (before the move)", n)
	}
	if n := badSignatures.Load(); n != 0 || goodSignatures.Load() == 0 {
		t.Errorf("%d requests had a signature that the partner's webhook key does not verify (%d did); want all signed with the key made on the Badger gateway",
			n, goodSignatures.Load())
	}
}
