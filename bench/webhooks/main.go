// Command webhooks benchmarks the webhook queue and dispatcher on a real
// Badger database (synced writes, as the gateway opens it):
//
//	go run ./bench/webhooks -mode e2e -deliveries 20000
//	go run ./bench/webhooks -mode backlog -n 1000000
//	go run ./bench/webhooks -mode tombstones -n 1000000
//	go run ./bench/webhooks -mode all -n 1000000
//
// Every figure is a ratio against a baseline measured in the same run. The
// program exits 1 when a target is missed (e2e ≥ 5000/s, backlog and
// tombstone rates within 20 % of a fresh queue, peak RSS ≤ 300 MiB).
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	bopts "github.com/dgraph-io/badger/v4/options"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"go.uber.org/zap"
)

var (
	mode       = flag.String("mode", "all", "e2e, backlog, tombstones or all")
	n          = flag.Int("n", 1000000, "backlog size / insert-then-delete count")
	deliveries = flag.Int("deliveries", 20000, "deliveries per measured dispatch run")
	receivers  = flag.Int("receivers", 8, "receiver listeners (distinct targets) in the e2e run")
	dir        = flag.String("dir", "", "data directory (default: a temporary one, removed afterwards)")
	memprofile = flag.String("memprofile", "", "write a heap profile to this file at the end")
	memtableMB = flag.Int("memtable-mb", 64, "Badger MemTableSize in MiB (the gateway's default: 64)")
	memtables  = flag.Int("memtables", 5, "Badger NumMemtables (the gateway's default: 5)")
	blockMB    = flag.Int("blockcache-mb", 256, "Badger BlockCacheSize in MiB (the gateway's default: 256)")
	lean       = flag.Bool("lean", false, "Badger tuned for memory: no compression, 2 compactors (use with -memtable-mb 16 -memtables 3 -blockcache-mb 32)")
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile to this file")
	transport  = flag.String("transport", "local", "backlog/tombstones: local (in-process 200, isolates the queue) or http (a receiver on 127.0.0.1)")
)

func main() {
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	ok := true
	if *mode == "e2e" || *mode == "all" {
		ok = e2e() && ok
	}
	if *mode == "backlog" || *mode == "all" {
		ok = backlog() && ok
	}
	if *mode == "tombstones" || *mode == "all" {
		ok = tombstones() && ok
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		check(err)
		check(pprof.WriteHeapProfile(f))
		f.Close()
	}
	hwm := peakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("go heap: sys %.1f MiB, in use %.1f MiB; total sys %.1f MiB\n",
		float64(ms.HeapSys)/(1<<20), float64(ms.HeapInuse)/(1<<20), float64(ms.Sys)/(1<<20))
	fmt.Printf("peak RSS (VmHWM): %.1f MiB (target ≤ 300 MiB)\n", float64(hwm)/(1<<20))
	if *mode != "e2e" && hwm > 300<<20 {
		ok = false
	}
	if !ok {
		fmt.Println("RESULT: a target was missed")
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	fmt.Println("RESULT: all targets met")
}

// openDB opens Badger with the gateway's settings (caddymodule/state.go).
func openDB(name string) (*badger.DB, func()) {
	d := *dir
	if d == "" {
		var err error
		d, err = os.MkdirTemp("", "whbench-")
		check(err)
	} else {
		d += "/" + name
		os.RemoveAll(d)
	}
	o := badger.DefaultOptions(d)
	if *lean {
		o = o.WithCompression(bopts.None).WithNumCompactors(2)
	}
	db, err := badger.Open(o.WithSyncWrites(true).WithLogger(nil).
		WithIndexCacheSize(0).WithNumVersionsToKeep(1).WithMetricsEnabled(false).
		WithMemTableSize(int64(*memtableMB) << 20).WithNumMemtables(*memtables).WithBlockCacheSize(int64(*blockMB) << 20))
	check(err)
	return db, func() { db.Close(); os.RemoveAll(d) }
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

var key = []byte("bench-webhook-key-0123456789abcdef")

func options(db *badger.DB, clock func() time.Time, client *http.Client) webhooks.Options {
	return webhooks.Options{DB: db, Logger: zap.NewNop(), AllowHTTP: true,
		Policy:     &webhooks.NetPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		WebhookKey: func(string) ([]byte, error) { return key, nil },
		Clock:      clock, HTTPClient: client, MaxSubscriptionsPerPartner: 1000}
}

// countingHandler answers 200 and counts requests.
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	h.n.Add(1)
	w.WriteHeader(http.StatusOK)
}

// localTransport answers 200 in-process: it isolates the queue's cost.
type localTransport struct{ n atomic.Int64 }

func (t *localTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	t.n.Add(1)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// publish queues count events for partner in pages of 500 from 4
// goroutines (like feed readers), each page one durable transaction.
func publish(s *webhooks.Service, partner, event string, count int) {
	const page = 500
	var wg sync.WaitGroup
	pages := make(chan int, 64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range pages {
				evs := make([]webhooks.Event, 0, page)
				for i := start; i < min(start+page, count); i++ {
					evs = append(evs, webhooks.Event{Name: event, Identifier: "id-" + strconv.Itoa(i)})
				}
				_, err := s.Publish(partner, evs, nil)
				check(err)
			}
		}()
	}
	for start := 0; start < count; start += page {
		pages <- start
	}
	close(pages)
	wg.Wait()
}

// waitFor waits until count() reaches want; it returns false after a minute
// without progress.
func waitFor(count func() int64, want int64) bool {
	last, lastChange := count(), time.Now()
	for {
		c := count()
		if c >= want {
			return true
		}
		if c != last {
			last, lastChange = c, time.Now()
		} else if time.Since(lastChange) > time.Minute {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
