// Command fleet benchmarks durable webhook delivery through the built
// gateway on PostgreSQL (a local server with fsync and synchronous_commit
// on) beside Badger, with one gateway instance and with three on one
// database:
//
//	go run ./bench/fleet
//
// For each set-up it measures
//
//   - deliveries/s end to end: changes pushed to the gateways' ingest
//     endpoints (round robin), each an adjustment of 100 products, so 100
//     events, each delivered to every receiver (8 on 127.0.0.1): from the
//     first push until every delivery (counted once per x-hook-id) has
//     been answered 200; target on PostgreSQL ≥ 2,500/s;
//   - change → first delivery attempt at 500 changes/s: a feed in this
//     process gains 500 changes/s for 10 s, read by the gateways with the
//     default settings; the time from a change entering the feed to its
//     event's first arrival at a receiver; target p99 ≤ 1 s.
//
// PostgreSQL figures are also printed as ratios to Badger's in the same run.
// It exits 1 when a target is missed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
	"github.com/fulfilgate/fulfilgate/bench/internal/procstat"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

var (
	caddyBin   = flag.String("caddy", "", "the gateway binary (default: build ./cmd/fulfilgate)")
	changes    = flag.Int("changes", 50, "changes pushed in the throughput run (each 100 events)")
	receivers  = flag.Int("receivers", 8, "receivers (distinct notification URLs) in the throughput run")
	rate       = flag.Int("rate", 500, "changes per second in the latency run")
	seconds    = flag.Int("seconds", 10, "length of the latency run in seconds")
	setupList  = flag.String("setups", "badger,postgres,postgres3", "set-ups to run: badger, postgres (one instance), postgres3 (three)")
	profile    = flag.String("profile", "", "directory for a CPU profile of the first gateway during each PostgreSQL throughput run")
	durable    = flag.Bool("pg-durable", true, "PostgreSQL with fsync and full-page writes (false: neither, to see what flushing costs)")
	perPartner = flag.Int("per-partner", 0, "webhooks per_partner_concurrency (0: the default), for experiments")
	rounds     = flag.Int("rounds", 3, "rounds of every set-up, in alternating order (forward, then backward); figures are medians and ratios are per round")
)

// Targets.
const (
	targetRate = 2500
	targetP99  = time.Second
)

// setup is one configuration measured.
type setup struct {
	name      string
	postgres  bool
	instances int
}

// result is what one set-up measured.
type result struct {
	setup
	round      int
	err        error
	rate       float64       // deliveries/s
	acked      time.Duration // until the queue was empty
	cpu        float64       // gateway CPU µs per delivery, all instances
	p50, p99   time.Duration
	max        time.Duration
	deliveries int
}

func main() {
	flag.Parse()
	root, err := os.MkdirTemp("", "fleetbench-")
	check(err)
	defer os.RemoveAll(root)
	bin := *caddyBin
	if bin == "" {
		bin = filepath.Join(root, "caddy")
		fmt.Println("fleet: building the gateway (./cmd/fulfilgate) ...")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/fulfilgate")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}
	var cluster *pgtest.Cluster
	if strings.Contains(*setupList, "postgres") {
		cluster, err = pgtest.Start(pgtest.Options{Durable: *durable})
		check(err)
		defer cluster.Stop()
	}
	var setups []setup
	for _, name := range strings.Split(*setupList, ",") {
		s := setup{name: name, postgres: strings.HasPrefix(name, "postgres"), instances: 1}
		if name == "postgres3" {
			s.instances = 3
		}
		setups = append(setups, s)
	}
	results := map[string][]result{}
	for round := range *rounds {
		order := slices.Clone(setups)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			fmt.Printf("== round %d: %s\n", round+1, describe(s))
			r := run(bin, filepath.Join(root, fmt.Sprintf("%s-%d", s.name, round)), cluster, s, round)
			if r.err != nil {
				fmt.Printf("   not measured: %v\n", r.err)
			}
			results[s.name] = append(results[s.name], r)
		}
	}
	if !summary(setups, results) {
		fmt.Println("RESULT: a target was missed")
		os.Exit(1)
	}
	fmt.Println("RESULT: all targets met")
}

func describe(s setup) string {
	backend := "Badger"
	if s.postgres {
		backend = "PostgreSQL (fsync, synchronous_commit on)"
		if !*durable {
			backend = "PostgreSQL (fsync OFF: not durable, an experiment)"
		}
	}
	return fmt.Sprintf("%s, %d instance(s)", backend, s.instances)
}

// run measures one set-up on fresh gateways (and a fresh database).
func run(bin, dir string, cluster *pgtest.Cluster, s setup, round int) (r result) {
	r.setup, r.round = s, round
	src := newFeedSource()
	defer src.close()
	sinks := make([]*sink, *receivers)
	var targets []string
	for i := range sinks {
		sinks[i] = newSink()
		defer sinks[i].close()
		targets = append(targets, sinks[i].url)
	}
	lat := newSink()
	defer lat.close()

	dsn := ""
	if s.postgres {
		var err error
		if dsn, err = cluster.CreateDatabase(fmt.Sprintf("bench_%s_%d", s.name, round)); err != nil {
			r.err = err
			return r
		}
	}
	var gws []*gateway
	defer func() {
		for _, g := range gws {
			g.stop()
		}
	}()
	for i := range s.instances {
		g, err := startGateway(bin, dir, string(rune('A'+i)), dsn, src.url())
		if err != nil {
			r.err = fmt.Errorf("instance %c did not start: %w", 'A'+i, err)
			return r
		}
		gws = append(gws, g)
		if i == 0 { // the others load the subscriptions at start
			if err := g.subscribe(webhooks.EventAdjustmentPosted, targets); err != nil {
				r.err = err
				return r
			}
			if err := g.subscribe(webhooks.EventOutboundStatus, []string{lat.url}); err != nil {
				r.err = err
				return r
			}
		}
	}
	for _, g := range gws { // every instance's push feed runs before the clock starts
		if r.err = g.waitIngest(); r.err != nil {
			return r
		}
	}
	var before int64
	dbname := fmt.Sprintf("bench_%s_%d", s.name, round)
	if s.postgres {
		before, _ = cluster.Commits(dbname)
	}
	if r.err = throughput(&r, gws, sinks); r.err != nil {
		return r
	}
	if s.postgres {
		time.Sleep(1500 * time.Millisecond) // the sessions' statistics are flushed about every second
		if after, err := cluster.Commits(dbname); err == nil {
			fmt.Printf("   PostgreSQL: %d commits, %.3f per delivery\n", after-before, float64(after-before)/float64(r.deliveries))
		}
	}
	r.err = latency(&r, src, lat)
	return r
}

// throughput pushes the changes and waits for every delivery.
func throughput(r *result, gws []*gateway, sinks []*sink) error {
	const products = 100
	want := *changes * products * len(sinks)
	r.deliveries = want
	var cpu0 []time.Duration
	for _, g := range gws {
		c, _ := procstat.ProcessCPU(g.Pid()).Read()
		cpu0 = append(cpu0, c)
	}
	var prof chan error
	if *profile != "" && r.postgres {
		prof = make(chan error, 1)
		go func() {
			prof <- cpuProfile(gws[0], filepath.Join(*profile, fmt.Sprintf("%s-%d.cpu.pprof", r.name, r.round)), 5)
		}()
	}
	client := &http.Client{Timeout: time.Minute}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	t0 := time.Now()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > *changes {
					return
				}
				p := make([]string, products)
				for j := range p {
					p[j] = fmt.Sprintf(`"P-%03d"`, j)
				}
				change := fmt.Sprintf(`{"id":"c%d","partner":"partner-bench","kind":"adjustment","entity":"ADJ-%d","change":"posted","products":[%s]}`,
					i, i, strings.Join(p, ","))
				if err := gws[(i+w)%len(gws)].push(client, []string{change}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	total := func() int64 {
		var n int64
		for _, s := range sinks {
			n += s.unique()
		}
		return n
	}
	if !benchgw.WaitFor(total, int64(want)) {
		return fmt.Errorf("stalled: %d of %d deliveries after a minute without progress", total(), want)
	}
	el := time.Since(t0)
	r.rate = float64(want) / el.Seconds()
	for {
		q, err := gws[0].queued()
		if err != nil {
			return err
		}
		if q == 0 {
			break
		}
		if time.Since(t0) > el+time.Minute {
			return fmt.Errorf("%d deliveries still queued a minute after the last arrived", q)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.acked = time.Since(t0)
	var cpu time.Duration
	for i, g := range gws {
		c, err := procstat.ProcessCPU(g.Pid()).Read()
		if err == nil {
			cpu += c - cpu0[i]
		}
	}
	r.cpu = float64(cpu.Microseconds()) / float64(want)
	var dup int64
	for _, s := range sinks {
		dup += s.requests() - s.unique()
	}
	fmt.Printf("   throughput: %d deliveries in %v: %.0f deliveries/s (queue empty after %v); gateway CPU %.1f µs per delivery; %d repeated deliveries\n",
		want, el.Round(time.Millisecond), r.rate, r.acked.Round(time.Millisecond), r.cpu, dup)
	if prof != nil {
		if err := <-prof; err != nil {
			fmt.Printf("   profile: %v\n", err)
		}
	}
	return nil
}

// latency feeds changes at the rate and measures change → first attempt.
func latency(r *result, src *feedSource, lat *sink) error {
	total := *rate * *seconds
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	for i := 1; i <= total; i++ {
		<-tick.C
		src.add(fmt.Sprintf("OB-%d", i))
	}
	tick.Stop()
	if !benchgw.WaitFor(lat.unique, int64(total)) {
		return fmt.Errorf("latency run stalled at %d of %d changes", lat.unique(), total)
	}
	var d []time.Duration
	for id, at := range lat.firstArrivals() {
		if added, ok := src.addedAt(id); ok {
			d = append(d, at.Sub(added))
		}
	}
	slices.Sort(d)
	if len(d) != total {
		return fmt.Errorf("latency run: %d of %d changes matched", len(d), total)
	}
	q := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))] }
	r.p50, r.p99, r.max = q(0.5), q(0.99), d[len(d)-1]
	fmt.Printf("   latency: %d changes at %d/s: change → first attempt p50 %v, p99 %v, max %v\n",
		total, *rate, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.max.Round(time.Millisecond))
	return nil
}

// summary prints each set-up's medians, its ratios to Badger in the same
// rounds, and whether the targets are met (by the medians).
func summary(setups []setup, results map[string][]result) bool {
	ok := true
	fmt.Printf("== summary over %d round(s): medians; ratios to Badger per round\n", *rounds)
	base := results["badger"]
	for _, s := range setups {
		var rates, cpus []float64
		var p50s, p99s []time.Duration
		var rateRatios, p99Ratios []string
		for i, r := range results[s.name] {
			if r.err != nil {
				continue
			}
			rates, cpus = append(rates, r.rate), append(cpus, r.cpu)
			p50s, p99s = append(p50s, r.p50), append(p99s, r.p99)
			if s.postgres && i < len(base) && base[i].err == nil {
				rateRatios = append(rateRatios, fmt.Sprintf("%.2f", r.rate/base[i].rate))
				p99Ratios = append(p99Ratios, fmt.Sprintf("%.2f", float64(r.p99)/float64(base[i].p99)))
			}
		}
		if len(rates) < len(results[s.name]) {
			fmt.Printf("%-10s not measured in %d of %d rounds\n", s.name, len(results[s.name])-len(rates), len(results[s.name]))
			if s.postgres {
				ok = false
			}
			if len(rates) == 0 {
				continue
			}
		}
		rate, p99 := median(rates), median(p99s)
		line := fmt.Sprintf("%-10s %6.0f deliveries/s (rounds %s), %5.1f µs gateway CPU/delivery; change→first attempt p50 %dms, p99 %dms (rounds %s)",
			s.name, rate, join(rates, "%.0f"), median(cpus), median(p50s).Milliseconds(), p99.Milliseconds(), join(p99s, "%v"))
		if len(rateRatios) > 0 {
			line += fmt.Sprintf("; vs Badger: rate ×%s, p99 ×%s", strings.Join(rateRatios, " "), strings.Join(p99Ratios, " "))
		}
		if s.postgres {
			met := rate >= targetRate && p99 <= targetP99
			line += fmt.Sprintf("; targets (≥ %d/s, p99 ≤ %v): %s", targetRate, targetP99, metStr(met))
			ok = ok && met
		}
		fmt.Println(line)
	}
	return ok
}

// median returns the middle value (the upper one of an even count).
func median[T float64 | time.Duration](v []T) T {
	c := slices.Clone(v)
	slices.Sort(c)
	return c[len(c)/2]
}

// join formats each value with format, comma-separated.
func join[T any](v []T, format string) string {
	out := make([]string, len(v))
	for i, x := range v {
		if d, ok := any(x).(time.Duration); ok {
			out[i] = d.Round(time.Millisecond).String()
		} else {
			out[i] = fmt.Sprintf(format, x)
		}
	}
	return strings.Join(out, ", ")
}

func metStr(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// cpuProfile saves a CPU profile of seconds from the gateway's admin API.
func cpuProfile(g *gateway, path string, seconds int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", g.admin, seconds))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// sink is a receiver on 127.0.0.1 that answers 200 and records each
// x-hook-id's first arrival, and the identifier it carried.
type sink struct {
	srv   *httptest.Server
	url   string
	mu    sync.Mutex
	first map[string]time.Time // identifier → first arrival
	ids   map[string]bool
	n     atomic.Int64
	uniq  atomic.Int64
}

func newSink() *sink {
	s := &sink{first: map[string]time.Time{}, ids: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		body, _ := io.ReadAll(r.Body)
		var p webhooks.Payload
		_ = json.Unmarshal(body, &p) // a body that does not decode has no identifier
		id := r.Header.Get("x-hook-id")
		s.n.Add(1)
		s.mu.Lock()
		if !s.ids[id] {
			s.ids[id] = true
			s.uniq.Add(1)
		}
		if _, ok := s.first[p.Identifier]; !ok {
			s.first[p.Identifier] = now
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	s.url = s.srv.URL + "/hook"
	return s
}

func (s *sink) close()          { s.srv.Close() }
func (s *sink) unique() int64   { return s.uniq.Load() }
func (s *sink) requests() int64 { return s.n.Load() }

func (s *sink) firstArrivals() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Time, len(s.first))
	for k, v := range s.first {
		out[k] = v
	}
	return out
}

// feedSource is a change feed in this process (the feed contract) whose
// changes are outbound status changes of the benchmark partner.
type feedSource struct {
	srv     *httptest.Server
	mu      sync.Mutex
	changes []string
	added   map[string]time.Time // entity → when it entered the feed
}

func newFeedSource() *feedSource {
	f := &feedSource{added: map[string]time.Time{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var after, limit int
		fmt.Sscan(r.URL.Query().Get("after"), &after)
		fmt.Sscan(r.URL.Query().Get("limit"), &limit)
		f.mu.Lock()
		after = min(max(after, 0), len(f.changes))
		end := min(after+max(limit, 1), len(f.changes))
		body := `{"changes":[` + strings.Join(f.changes[after:end], ",") + fmt.Sprintf(`],"next":"%d"}`, end)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	return f
}

func (f *feedSource) url() string { return f.srv.URL + "/changes" }
func (f *feedSource) close()      { f.srv.Close() }

// add appends a status change of outbound entity.
func (f *feedSource) add(entity string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changes = append(f.changes, fmt.Sprintf(`{"id":"%d","partner":"partner-bench","kind":"outbound","entity":%q,"change":"status-changed","status":"picking"}`,
		len(f.changes)+1, entity))
	f.added[entity] = time.Now()
}

func (f *feedSource) addedAt(entity string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.added[entity]
	return t, ok
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
