package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Config reloads under continuous traffic: while clients keep calling both
// versions through the gateway, `caddy reload` loads a changed demo
// Caddyfile several times. No request fails, every reload takes effect, the
// data dir is opened once and never hits Badger's directory lock, and data
// written before the reloads is still there after them: a key in the
// fulfilment app's Badger dir and an outbound in the simulator.
func TestReloadUnderTraffic(t *testing.T) {
	t.Parallel()
	const sunset = "sunset 2027-06-30T00:00:00Z"
	cf := repoCaddyfile(t)
	if !strings.Contains(cf, sunset) {
		t.Fatalf("the demo Caddyfile no longer has %q; adapt this test", sunset)
	}
	g := newRepoGateway(t, cf)

	// A marker in the data dir before the gateway first opens it.
	marker := []byte(fmt.Sprintf("written before the reloads at %d", time.Now().UnixNano()))
	writeBadger(t, g.DataDir, "e2e/reload-marker", marker)
	g.run(t)

	status, _, body := do(t, http.MethodPost, g.WMS+"/wms/_control/outbounds", strings.NewReader(`{"partner":"partner-acme"}`))
	var outbound string
	if status != http.StatusCreated {
		t.Fatalf("creating an outbound: %d %s", status, body)
	}
	if i := strings.Index(string(body), `"id":"`); i >= 0 {
		outbound, _, _ = strings.Cut(string(body)[i+len(`"id":"`):], `"`)
	}
	if outbound == "" {
		t.Fatalf("no id in %s", body)
	}

	// Clients: keep-alive connections, both versions, until stopped.
	headers := gatewayHeaders(t, g.Base)
	var (
		stop     atomic.Bool
		sent     atomic.Int64
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	// Each worker keeps its connection alive (4 idle conns per host), as a
	// partner's client pool does.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths := []string{"/api/fulfilment/v4/products?page_size=1", "/api/fulfilment/v3/outbounds", "/v4/products"}
			for i := w; !stop.Load(); i++ {
				url := g.Base + paths[i%len(paths)]
				if err := getOK(client, url, headers); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
				sent.Add(1)
			}
		}()
	}

	for i := 1; i <= 5; i++ {
		time.Sleep(200 * time.Millisecond)
		next := fmt.Sprintf("sunset %d-06-30T00:00:00Z", 2027+i)
		g.Reload(strings.Replace(cf, sunset, next, 1))
		want := time.Date(2027+i, 6, 30, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
		status, h, body := gatewayGet(t, g.Base+"/api/fulfilment/v3/products")
		if status != http.StatusOK || h.Get("Sunset") != want {
			t.Errorf("after reload %d: %d Sunset %q, want %q (%s)", i, status, h.Get("Sunset"), want, body)
		}
	}
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed during reloads; first: %s", len(failures), sent.Load(), failures[0])
	}
	mu.Unlock()
	if sent.Load() < 50 {
		t.Errorf("only %d requests were sent during the reloads", sent.Load())
	}
	t.Logf("%d requests during 5 reloads, %d failed", sent.Load(), len(failures))

	// The simulator's warehouse survived the reloads.
	if status, _, body := gatewayGet(t, g.Base+"/api/fulfilment/v4/outbounds/"+outbound); status != http.StatusOK ||
		!strings.Contains(string(body), outbound) {
		t.Errorf("outbound %s after the reloads: %d %s", outbound, status, body)
	}

	logs := g.Logs.String()
	if strings.Contains(logs, "Cannot acquire directory lock") {
		t.Fatalf("Badger lock error during reloads:\n%s", logs)
	}
	if n := strings.Count(logs, "data directory opened"); n != 1 {
		t.Errorf("data directory opened %d times over 5 reloads, want once (kept across reloads)", n)
	}
	if strings.Contains(logs, "data directory closed") {
		t.Errorf("data directory closed during a reload")
	}

	// After a graceful stop the data dir opens again and the marker is there.
	g.Stop()
	if got := readBadger(t, g.DataDir, "e2e/reload-marker"); string(got) != string(marker) {
		t.Fatalf("marker after the reloads = %q, want %q", got, marker)
	}
}

// getOK GETs url with headers and drains the body; any transport error or
// a status other than 200 is a failure.
func getOK(client *http.Client, url string, headers []string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: reading body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %.300s", url, resp.StatusCode, body)
	}
	return nil
}

// writeBadger sets key in the Badger dir (not in use by a gateway).
func writeBadger(t testing.TB, dir, key string, value []byte) {
	t.Helper()
	err := withBadger(dir, func(db *badger.DB) error {
		return db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), value) })
	})
	if err != nil {
		t.Fatalf("writing %s into the data dir: %v", key, err)
	}
}

// readBadger returns key's value from the Badger dir (not in use by a
// gateway), or nil when it is missing.
func readBadger(t testing.TB, dir, key string) []byte {
	t.Helper()
	var v []byte
	err := withBadger(dir, func(db *badger.DB) error {
		err := db.View(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte(key))
			if err != nil {
				return err
			}
			v, err = item.ValueCopy(nil)
			return err
		})
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading %s from the data dir after stop: %v", key, err)
	}
	return v
}

// withBadger opens the Badger dir in this process, runs f and closes it,
// holding syscall.ForkLock for reading throughout (as code that creates
// descriptors children must not inherit does), so that no process started
// meanwhile inherits Badger's directory lock. That lock is an flock on a
// descriptor Badger closes without unlocking: it stays held while any copy
// of the descriptor is open, and a child forked meanwhile (a gateway or a
// CLI another parallel test starts) keeps its copy until it execs, which
// on a loaded machine can be after this test's gateway tries to open the
// directory and finds it locked.
func withBadger(dir string, f func(*badger.DB) error) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return err
	}
	return errors.Join(f(db), db.Close())
}
