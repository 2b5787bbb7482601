package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// fleetReceiver is a webhook receiver on 127.0.0.1 for a fleet: it checks
// each request's signature with the partner's key (401 for a bad one),
// records the event with its x-hook-id and the instance that sent it (the
// gateway process owning the connection's other end), and answers 200,
// unless the test holds it: then requests wait until released (or until
// the connection goes, as when the sender is killed).
type fleetReceiver struct {
	URL   string
	fleet *fleet
	mu    sync.Mutex
	got   []fleetHit
	bad   int
	held  map[string]string // x-hook-id → sender, of the requests waiting now
	gate  chan struct{}     // nil: answer at once; else closed to release
}

// fleetHit is one request that was answered 200.
type fleetHit struct {
	HookID, Event, From string
}

type senderKey struct{}

func startFleetReceiver(t *testing.T, f *fleet, key string) *fleetReceiver {
	r := &fleetReceiver{fleet: f, held: map[string]string{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var p webhooks.Payload
		if !webhooks.Verify([]byte(key), body, req.Header.Get("x-hook-signature")) || json.Unmarshal(body, &p) != nil {
			r.mu.Lock()
			r.bad++
			r.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		from, _ := req.Context().Value(senderKey{}).(string)
		id := req.Header.Get("x-hook-id")
		r.mu.Lock()
		gate := r.gate
		if gate != nil {
			r.held[id] = from
		}
		r.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-req.Context().Done(): // the sender went away
				r.mu.Lock()
				delete(r.held, id)
				r.mu.Unlock()
				return
			}
			r.mu.Lock()
			delete(r.held, id)
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.got = append(r.got, fleetHit{HookID: id, Event: p.Type + " " + p.Identifier, From: from})
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	// The sender is looked up when the connection is accepted: its other
	// end then belongs to exactly one gateway process.
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, senderKey{}, socketOwner(c.RemoteAddr().String(), f.pids()))
	}
	srv.Start()
	t.Cleanup(func() {
		r.release()
		srv.Close()
	})
	r.URL = srv.URL + "/hook"
	return r
}

// hold makes requests wait from now on, until release.
func (r *fleetReceiver) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
}

// release answers the waiting requests and every later one at once.
func (r *fleetReceiver) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

// heldBy returns the x-hook-ids of the waiting requests by sender.
func (r *fleetReceiver) heldBy() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for id, from := range r.held {
		out[from] = append(out[from], id)
	}
	return out
}

// events returns, per event ("type identifier"), the distinct x-hook-ids
// it was delivered (answered 200) with.
func (r *fleetReceiver) events() map[string]map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]bool{}
	for _, h := range r.got {
		if out[h.Event] == nil {
			out[h.Event] = map[string]bool{}
		}
		out[h.Event][h.HookID] = true
	}
	return out
}

// deliveredBy counts the requests answered 200 per sender.
func (r *fleetReceiver) deliveredBy() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, h := range r.got {
		out[h.From]++
	}
	return out
}

// sendersOf returns the senders that delivered x-hook-id id (answered 200).
func (r *fleetReceiver) sendersOf(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range r.got {
		if h.HookID == id {
			out = append(out, h.From)
		}
	}
	return out
}

// badSignatures counts the requests refused for their signature.
func (r *fleetReceiver) badSignatures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// missing compares the delivered events with want: the events not
// delivered, and those delivered under more than one x-hook-id (at least
// once allows the same id twice, never two ids for one event).
func (r *fleetReceiver) missing(want []string) (missing, splitIDs []string) {
	got := r.events()
	for _, ev := range want {
		if len(got[ev]) == 0 {
			missing = append(missing, ev)
		}
	}
	for ev, ids := range got {
		if len(ids) > 1 {
			splitIDs = append(splitIDs, fmt.Sprintf("%s (%d ids)", ev, len(ids)))
		}
	}
	sort.Strings(splitIDs)
	return missing, splitIDs
}

// socketOwner names the process among pids (pid → name) holding the TCP
// socket whose local address is addr (host:port on 127.0.0.1), from
// /proc/net/tcp and /proc/<pid>/fd; "" when none does or /proc cannot
// tell (not Linux). It looks a few times: a connection's socket may be
// listed a moment after the server accepted it.
func socketOwner(addr string, pids map[int]string) string {
	for range 5 {
		if name := socketOwnerOnce(addr, pids); name != "" {
			return name
		}
		time.Sleep(2 * time.Millisecond)
	}
	return ""
}

func socketOwnerOnce(addr string, pids map[int]string) string {
	host, port, err := net.SplitHostPort(addr)
	p, err2 := strconv.Atoi(port)
	if err != nil || err2 != nil || host != "127.0.0.1" {
		return ""
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	// The same local port may also be listed for an earlier connection
	// in TIME_WAIT, which no process owns (inode 0).
	local := fmt.Sprintf("0100007F:%04X", p)
	owned := map[string]bool{}
	for _, line := range strings.Split(string(table), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == local && f[9] != "0" {
			owned["socket:["+f[9]+"]"] = true
		}
	}
	if len(owned) == 0 {
		return ""
	}
	for pid, name := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && owned[l] {
				return name
			}
		}
	}
	return ""
}
