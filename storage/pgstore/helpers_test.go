package pgstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openPool opens a pool on dsn, closed when t ends.
func openPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatalf("opening %s: %v", dsn, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// migratedPool is a pool on a fresh, migrated database.
func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := openPool(t, pgtest.Database(t))
	if _, err := Migrate(context.Background(), pool, false); err != nil {
		t.Fatalf("migrating a fresh database: %v", err)
	}
	return pool
}

// tableExists reports whether the table name exists in pool's database.
func tableExists(t *testing.T, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(context.Background(), "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok); err != nil {
		t.Fatalf("looking for table %s: %v", name, err)
	}
	return ok
}

// t0 is the tests' "now"; claims take it as an argument, never the clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// due makes a queue entry for delivery id of partner p due at t.
func due(id, p string, t time.Time) webhooks.QueueEntry {
	return webhooks.QueueEntry{Pos: webhooks.SchedulePos(t, id), ID: id, PartnerID: p,
		SubscriptionID: "sub_" + p, Record: []byte("record of " + id)}
}

// instance is one gateway instance's stores on a pool of its own.
func instance(t *testing.T, dsn string) *Store {
	t.Helper()
	return New(openPool(t, dsn))
}

// ids lists the ids of es.
func ids(es []webhooks.QueueEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// claim claims up to n deliveries due at now (n of one partner at most),
// failing t on error.
func claim(t *testing.T, s *Store, now time.Time, n int, lease time.Duration) []webhooks.QueueEntry {
	t.Helper()
	return claimReq(t, s, webhooks.ClaimRequest{Now: now, Lease: lease, Max: n, PerPartner: n})
}

// claimReq claims as req asks, failing t on error.
func claimReq(t *testing.T, s *Store, req webhooks.ClaimRequest) []webhooks.QueueEntry {
	t.Helper()
	es, _, err := s.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return es
}

// coherentWithin bounds the wait for one instance to see another's change:
// a bound on a hang, not a measure of speed (the 1 s promise is checked
// end to end against the built binary).
const coherentWithin = 20 * time.Second

// waitUntil polls cond until it holds, failing t after coherentWithin.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	pollUntil(t, coherentWithin, what, cond)
}

// pollUntil polls cond until it holds, failing t after bound.
func pollUntil(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tokenInstance opens a token service on its own pool of dsn's database,
// configured with cfg, closed when t ends. refresh is its periodic reload
// interval (0: the default).
func tokenInstance(t *testing.T, dsn string, cfg tokens.Config, refresh time.Duration) *tokens.Service {
	t.Helper()
	svc, err := tokens.Open(tokens.Options{Store: instance(t, dsn).Tokens(), RefreshInterval: refresh})
	if err != nil {
		t.Fatalf("opening a token service: %v", err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := svc.Configure(cfg); err != nil {
		t.Fatalf("configuring a token service: %v", err)
	}
	return svc
}

// currentKID is the kid of svc's current signing key.
func currentKID(svc *tokens.Service) string {
	for _, k := range svc.Keys() {
		if k.Current {
			return k.KID
		}
	}
	return ""
}

// issue authenticates creds on svc and returns a token for them.
func issue(t *testing.T, svc *tokens.Service, creds tokens.Credentials) string {
	t.Helper()
	c, ok := svc.Authenticate(creds.ClientID, creds.ClientSecret)
	if !ok {
		t.Fatalf("client %s does not authenticate", creds.ClientID)
	}
	tok, err := svc.Token(c)
	if err != nil {
		t.Fatalf("issuing a token: %v", err)
	}
	return tok.AccessToken
}

// killListeners ends the LISTEN connections on dsn's database, as a
// network failure or a server restart would.
func killListeners(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("terminating the listeners: %d ended, %v; want at least one", n, err)
	}
}

// webhookInstance opens a webhook service (dispatcher not started: the
// test drives it with RunDue) on its own pool of dsn's database, allowing
// plain http to loopback receivers, closed when t ends. refresh is its
// periodic reload interval (0: the default).
func webhookInstance(t *testing.T, dsn string, refresh time.Duration) *webhooks.Service {
	t.Helper()
	svc, err := webhooks.New(webhooks.Options{
		Storage: instance(t, dsn).Webhooks(), AllowHTTP: true, Timeout: 5 * time.Second, RefreshInterval: refresh,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return []byte("partner-webhook-key-0123456789abcdef"), nil },
	})
	if err != nil {
		t.Fatalf("opening a webhook service: %v", err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// countingReceiver is an HTTP server on 127.0.0.1 that answers 200 and
// counts the requests it gets.
type countingReceiver struct {
	*httptest.Server
	n atomic.Int64
}

func newCountingReceiver(t *testing.T) *countingReceiver {
	t.Helper()
	r := &countingReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { r.n.Add(1) }))
	t.Cleanup(r.Close)
	return r
}

// runDue has svc attempt every due delivery and returns how many it
// attempted.
func runDue(t *testing.T, svc *webhooks.Service) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := svc.RunDue(ctx)
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	return n
}
