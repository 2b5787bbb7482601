// Command webhooks benchmarks the webhook queue and dispatcher on a real
// Badger database (synced writes, as the gateway opens it):
//
//	go run ./bench/webhooks -mode e2e
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
	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
	"go.uber.org/zap"
)

var (
	mode       = flag.String("mode", "all", "e2e, backlog, tombstones or all")
	n          = flag.Int("n", 1000000, "backlog size / insert-then-delete count")
	deliveries = flag.Int("deliveries", 240000, "deliveries per measured dispatch run (long enough for a stable rate)")
	receivers  = flag.Int("receivers", 8, "receiver listeners (distinct targets) in the e2e run")
	dir        = flag.String("dir", "", "data directory (default: a temporary one, removed afterwards)")
	memprofile = flag.String("memprofile", "", "write a heap profile to this file at the end")
	// Badger overrides: each left at its zero value keeps the gateway's
	// setting (internal/datadir), so the default run measures production.
	memtableMB = flag.Int("memtable-mb", 0, "override Badger MemTableSize in MiB")
	memtables  = flag.Int("memtables", 0, "override Badger NumMemtables")
	blockMB    = flag.Int("blockcache-mb", -1, "override Badger BlockCacheSize in MiB (0 disables it)")
	baseKB     = flag.Int("basetable-kb", 0, "override Badger BaseTableSize in KiB")
	valueThr   = flag.Int("value-threshold", 0, "override Badger ValueThreshold in bytes")
	numL0      = flag.Int("l0-tables", 0, "override Badger NumLevelZeroTables (stall at twice it)")
	compactors = flag.Int("compactors", 0, "override Badger NumCompactors")
	compress   = flag.String("compression", "", "override Badger Compression: none, snappy or zstd")
	lean       = flag.Bool("lean", false, "shorthand for -compression none -compactors 2")
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
	if *memprofile != "" {
		go peakProfiles(*memprofile + ".peak")
	}
	go sampleRSS()
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
	mu.Lock()
	fmt.Printf("highest sample (every 250 ms): RSS %.1f MiB = anonymous %.1f MiB (Go heap in use %.1f MiB) + file-backed %.1f MiB (mmapped tables); highest anonymous %.1f MiB\n",
		mib(atPeak.rss), mib(atPeak.anon), mib(atPeak.heap), mib(atPeak.file), mib(maxAnon))
	mu.Unlock()
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

// openDB opens Badger with the gateway's settings (internal/datadir) and
// the overrides given on the command line.
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
	db, err := datadir.Open(d, badgerOptions(d))
	check(err)
	return db, func() { db.Close(); os.RemoveAll(d) }
}

func badgerOptions(d string) badger.Options {
	o := datadir.Options(d, nil)
	if *lean {
		*compress, *compactors = "none", 2
	}
	if *memtableMB > 0 {
		o = o.WithMemTableSize(int64(*memtableMB) << 20)
	}
	if *memtables > 0 {
		o = o.WithNumMemtables(*memtables)
	}
	if *blockMB >= 0 {
		o = o.WithBlockCacheSize(int64(*blockMB) << 20)
	}
	if *baseKB > 0 {
		o = o.WithBaseTableSize(int64(*baseKB) << 10)
	}
	if *valueThr > 0 {
		o = o.WithValueThreshold(int64(*valueThr))
	}
	if *numL0 > 0 {
		o = o.WithNumLevelZeroTables(*numL0).WithNumLevelZeroTablesStall(2 * *numL0)
	}
	if *compactors > 0 {
		o = o.WithNumCompactors(*compactors)
	}
	switch *compress {
	case "":
	case "none":
		o = o.WithCompression(bopts.None)
	case "snappy":
		o = o.WithCompression(bopts.Snappy)
	case "zstd":
		o = o.WithCompression(bopts.ZSTD)
	default:
		check(fmt.Errorf("unknown -compression %q", *compress))
	}
	return o
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

var key = []byte("bench-webhook-key-0123456789abcdef")

func options(db *badger.DB, clock func() time.Time, client *http.Client) webhooks.Options {
	return webhooks.Options{Storage: badgerstore.New(db).Webhooks(), Logger: zap.NewNop(), AllowHTTP: true,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
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

// peakProfiles writes a heap profile to path each time the process's RSS
// reaches a new high (checked every second), so the profile shows what
// was live at the peak rather than at the end.
func peakProfiles(path string) {
	var high int64
	for range time.Tick(time.Second) {
		if r := currentRSS(); r > high+16<<20 {
			high = r
			runtime.GC()
			if f, err := os.Create(path); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}
}

// rssSample is the process's memory at one moment.
type rssSample struct{ rss, anon, file, heap int64 }

var (
	mu      sync.Mutex
	atPeak  rssSample // the sample with the highest RSS
	maxAnon int64
)

// sampleRSS records, every 250 ms, what the resident set is made of: the
// anonymous part (Go heap, Badger's arenas and caches) and the file-backed
// part (pages of the memory-mapped table files that reads touched, which the
// kernel can drop at any time).
func sampleRSS() {
	for range time.Tick(250 * time.Millisecond) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		cur := rssSample{rss: currentRSS(), anon: statusKB("RssAnon:"), file: statusKB("RssFile:") + statusKB("RssShmem:"),
			heap: int64(ms.HeapInuse)}
		mu.Lock()
		if cur.rss > atPeak.rss {
			atPeak = cur
		}
		maxAnon = max(maxAnon, cur.anon)
		mu.Unlock()
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func currentRSS() int64 { return statusKB("VmRSS:") }

func peakRSS() int64 { return statusKB("VmHWM:") }

func statusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
