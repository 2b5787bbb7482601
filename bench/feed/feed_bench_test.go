// Package feed benchmarks the change feed: changes converted and durably
// queued per second (real Badger with synced writes, real webhooks.Service),
// and change-to-first-delivery-attempt latency at 1,000 changes/s with the
// default settings. Run:
//
//	go test ./bench/feed/ -run '^$' -bench . -benchtime 5x
package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/storage/badgerstore"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

var partners = []string{"partner-a", "partner-b", "partner-c", "partner-d"}

func kind(id string) (bool, bool, error) { return id == "partner-a" || id == "partner-c", true, nil }

func openDB(b *testing.B) *badger.DB {
	db, err := badger.Open(badger.DefaultOptions(b.TempDir()).WithLogger(nil).WithSyncWrites(true).
		WithIndexCacheSize(0).WithNumVersionsToKeep(1).WithMetricsEnabled(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// newService makes a real webhook service with every partner subscribed to
// every event at target.
func newService(b *testing.B, db *badger.DB, target string) *webhooks.Service {
	svc, err := webhooks.New(webhooks.Options{
		Storage: badgerstore.New(db).Webhooks(), AllowHTTP: true,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return []byte(strings.Repeat("k", 32)), nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close() })
	for _, p := range partners {
		for _, ev := range webhooks.EventNames {
			if _, _, err := svc.Subscriptions().Create(context.Background(), p, target, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	return svc
}

// page makes n changes starting at id next: outbound status changes spread
// over the partners (one event each).
func page(next, n int) []feed.Change {
	out := make([]feed.Change, n)
	for i := range out {
		id := next + i
		out[i] = feed.Change{ID: fmt.Sprint(id), Partner: partners[id%len(partners)], Kind: "outbound",
			Entity: fmt.Sprint("OB-", id), Change: "status-changed"}
	}
	return out
}

// BenchmarkQueueChanges: pages of 100 (the default) and 1000 changes through Feed.Process into the
// real queue, cursor included; compared with the floor cost measured in the
// same run: one synced Badger transaction per page writing 100 small keys.
func BenchmarkQueueChanges(b *testing.B) {
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprintf("page=%d", size), func(b *testing.B) { queueChanges(b, size, 5000/size) })
	}
}

func queueChanges(b *testing.B, pageSize, pages int) {
	db := openDB(b)
	svc := newService(b, db, "http://127.0.0.1:9/hook") // not started: nothing is sent
	f, err := feed.New(feed.Options{Name: "bench", Store: badgerstore.New(db).Feed("bench")}, feed.Settings{Publisher: svc, Partners: kind})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()

	// Baseline: the raw cost of a synced transaction of 100 keys.
	start := time.Now()
	for p := 0; p < pages; p++ {
		if err := db.Update(func(txn *badger.Txn) error {
			for i := 0; i < pageSize; i++ {
				if err := txn.Set([]byte(fmt.Sprintf("base/%d/%d", p, i)), []byte("x")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	baseline := float64(pages*pageSize) / time.Since(start).Seconds()

	b.ResetTimer()
	next := 0
	var total time.Duration
	for n := 0; n < b.N; n++ {
		t0 := time.Now()
		for p := 0; p < pages; p++ {
			cursor := fmt.Sprint(next + pageSize)
			res, err := f.Process(page(next, pageSize), &cursor, "poll")
			if err != nil || res.Deliveries != pageSize {
				b.Fatalf("%+v %v", res, err)
			}
			next += pageSize
		}
		total += time.Since(t0)
	}
	rate := float64(next) / total.Seconds()
	b.ReportMetric(rate, "changes/s")
	b.ReportMetric(rate/baseline, "x-baseline")
	b.Logf("queued %d changes: %.0f changes/s; baseline (synced txn of %d keys per page) %.0f keys/s; ratio %.2f",
		next, rate, pageSize, baseline, rate/baseline)
}

// BenchmarkChangeToFirstAttempt: a feed that gains 1,000 changes per second,
// read with the default settings (500ms interval, 100 per page), queued and
// dispatched by the real service to a receiver on 127.0.0.1. Latency is from
// the moment a change enters the feed to the first delivery attempt's
// arrival at the receiver.
func BenchmarkChangeToFirstAttempt(b *testing.B) {
	const rate, seconds = 1000, 5
	for n := 0; n < b.N; n++ {
		lat := runLatency(b, rate, seconds)
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
		b.ReportMetric(float64(p(0.5).Milliseconds()), "p50-ms")
		b.ReportMetric(float64(p(0.99).Milliseconds()), "p99-ms")
		b.Logf("%d changes at %d/s: p50 %v, p99 %v, max %v", len(lat), rate, p(0.5), p(0.99), lat[len(lat)-1])
	}
}

func runLatency(b *testing.B, rate, seconds int) []time.Duration {
	var (
		mu      sync.Mutex
		created = map[string]time.Time{} // identifier → when it entered the feed
		first   = map[string]time.Time{}
		changes []string
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p webhooks.Payload
		buf := make([]byte, 512)
		n, _ := r.Body.Read(buf)
		_ = jsonUnmarshal(buf[:n], &p)
		mu.Lock()
		if _, ok := first[p.Identifier]; !ok {
			first[p.Identifier] = time.Now()
		}
		mu.Unlock()
	}))
	defer rcv.Close()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var after, limit int
		fmt.Sscan(r.URL.Query().Get("after"), &after)
		fmt.Sscan(r.URL.Query().Get("limit"), &limit)
		mu.Lock()
		end := min(after+limit, len(changes))
		body := `{"changes":[` + strings.Join(changes[after:end], ",") + fmt.Sprintf(`],"next":"%d"}`, end)
		mu.Unlock()
		_, _ = w.Write([]byte(body))
	}))
	defer src.Close()

	db := openDB(b)
	svc := newService(b, db, rcv.URL+"/hook")
	svc.Start()
	f, err := feed.New(feed.Options{Name: "lat", Store: badgerstore.New(db).Feed("lat")}, feed.Settings{Publisher: svc, Partners: kind,
		Poll: feed.PollConfig{URL: src.URL}}) // defaults otherwise
	if err != nil {
		b.Fatal(err)
	}
	f.Start()
	defer f.Close()

	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	total := rate * seconds
	for i := 1; i <= total; i++ {
		<-tick.C
		id := fmt.Sprint("OB-", i)
		mu.Lock()
		changes = append(changes, fmt.Sprintf(`{"id":"%d","partner":"partner-b","kind":"outbound","entity":%q,"change":"status-changed"}`, i, id))
		created[id] = time.Now()
		mu.Unlock()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := len(first)
		mu.Unlock()
		if got >= total {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d changes reached the receiver", got, total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	lat := make([]time.Duration, 0, total)
	for id, t := range first {
		lat = append(lat, t.Sub(created[id]))
	}
	return lat
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
