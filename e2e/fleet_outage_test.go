package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// outageLength is how long the database is away.
const outageLength = 30 * time.Second

// The database server stops (a fast shutdown, as `pg_ctl stop -m fast`)
// for 30 s under load and starts again on the same socket and data: the
// instances keep running, answer what needs the database with 503
// problem+json (never a 500, a stack or a hang), work again without a
// restart once it is back, and lose no event of the changes made before,
// during and after.
func TestFleetSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t) // its own server: the others' tests keep theirs
	f := startFleet(t, fleetOptions{dsn: cluster.Database(t)})
	rcv := startFleetReceiver(t, f, fleetKeyCons)
	a := f.byName("A")
	a.subscribe(t, a.mustToken(t, "cons-client", fleetSecret), rcv.URL, webhooks.EventOutboundStatus)
	tokens := map[string]string{}
	for _, in := range f.inst {
		tokens[in.Name] = in.mustToken(t, "cons-client", fleetSecret)
	}

	stream := startChangeStream(f, 100*time.Millisecond, func() ([]string, error) {
		ob, err := f.tryControl("outbounds", `{"partner":"partner-cons"}`)
		return []string{"outbound.status-changed " + ob}, err
	})
	load := startFleetLoad(f, tokens, rcv.URL)
	time.Sleep(3 * time.Second)

	load.phase("outage")
	if err := cluster.Halt(); err != nil {
		t.Fatalf("stopping the database server: %v", err)
	}
	time.Sleep(outageLength)
	if err := cluster.Resume(); err != nil {
		t.Fatalf("starting the database server again: %v", err)
	}
	load.phase("after")
	resumed := time.Now()

	// Every instance takes subscriptions again, without a restart.
	for _, in := range f.inst {
		whEventually(t, 30*time.Second, "instance "+in.Name+" taking a subscription after the database came back", func() bool {
			return load.okSince(in.Name, resumed)
		})
	}
	time.Sleep(2 * time.Second)
	want := stream.finish(t)
	answers := load.finish()

	for _, in := range f.inst {
		select {
		case <-in.done:
			t.Errorf("instance %s exited during the outage: %v\n%s", in.Name, in.waitErr, in.Logs)
		default:
		}
		if contains(in.Logs.String(), "panic") {
			t.Errorf("instance %s logged a panic:\n%s", in.Name, in.Logs)
		}
	}
	var refusedInOutage int
	wrong := map[string]int{} // a kind of wrong answer → how many
	for _, ans := range answers {
		what := fmt.Sprintf("%s: %s %s on %s", ans.phase, ans.method, ans.path, ans.instance)
		switch {
		case ans.err != "":
			wrong[fmt.Sprintf("%s: no answer (%s), want an answer (503 problem+json while the database is away)", what, ans.err)]++
		case ans.status >= 500 && (ans.status != http.StatusServiceUnavailable || !strings.HasPrefix(ans.contentType, "application/problem+json")):
			wrong[fmt.Sprintf("%s: %d %q %.200s, want 503 application/problem+json", what, ans.status, ans.contentType, ans.body)]++
		case strings.Contains(ans.body, "goroutine ") || strings.Contains(ans.body, ".go:"):
			wrong[fmt.Sprintf("%s: the answer shows a stack: %.300s", what, ans.body)]++
		case ans.phase == "outage" && ans.status == http.StatusServiceUnavailable:
			refusedInOutage++
		}
	}
	for _, w := range sortedKeys(wrong) {
		t.Errorf("%s (%d times)", w, wrong[w])
	}
	if len(wrong) > 0 {
		for _, in := range f.inst {
			t.Logf("instance %s's first errors:\n%s", in.Name, errorLines(in.Logs.String(), 5))
		}
	}
	if refusedInOutage == 0 {
		t.Errorf("no request answered 503 while the database was away (%d answers): creating a subscription needs the database", len(answers))
	}
	t.Logf("%d requests, %d answered 503 during the outage; %d events", len(answers), refusedInOutage, len(want))
	waitDelivered(t, rcv, want, 90*time.Second, fmt.Sprintf("%d events made before, during and after the outage", len(want)))
}

// fleetLoad sends requests to the instances in turn until finished: a
// token, a subscription's creation (idempotent), the subscriptions list
// and a proxied resource; it records every answer.
type fleetLoad struct {
	mu      sync.Mutex
	now     string
	answers []loadAnswer
	stop    chan struct{}
	done    chan struct{}
}

// loadAnswer is one request's outcome; phase is the test's phase when it
// was answered, at the time it was sent.
type loadAnswer struct {
	phase, instance, method, path string
	at                            time.Time
	status                        int
	contentType, body, err        string
}

func startFleetLoad(f *fleet, tokens map[string]string, target string) *fleetLoad {
	l := &fleetLoad{now: "before", stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cons-client:"+fleetSecret))
	sub := fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, target, webhooks.EventOutboundStatus)
	go func() {
		defer close(l.done)
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			in := f.inst[i%len(f.inst)]
			select {
			case <-in.done:
				continue
			default:
			}
			bearer := "Bearer " + tokens[in.Name]
			var method, path, body, auth, ctype string
			switch i / len(f.inst) % 4 {
			case 0:
				method, path, body, auth, ctype = "POST", "/api/auth/token", "grant_type=client_credentials", basic, "application/x-www-form-urlencoded"
			case 1:
				method, path, body, auth, ctype = "POST", "/api/fulfilment/v4/subscriptions", sub, bearer, "application/json"
			case 2:
				method, path, auth = "GET", "/api/fulfilment/v4/subscriptions", bearer
			case 3:
				method, path, auth = "GET", "/api/fulfilment/v4/products", bearer
			}
			req, _ := http.NewRequest(method, in.Base+path, strings.NewReader(body)) // a valid method and URL
			req.Header.Set("Authorization", auth)
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			ans := loadAnswer{instance: in.Name, method: method, path: path, at: time.Now()}
			resp, err := client.Do(req)
			if err != nil {
				ans.err = err.Error()
			} else {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				ans.status, ans.contentType, ans.body = resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
			}
			l.mu.Lock()
			ans.phase = l.now // when it was answered: a request sent just before the outage meets it
			l.answers = append(l.answers, ans)
			l.mu.Unlock()
		}
	}()
	return l
}

// phase names the requests sent from now on.
func (l *fleetLoad) phase(name string) {
	l.mu.Lock()
	l.now = name
	l.mu.Unlock()
}

// okSince reports whether the instance took a subscription (2xx) in a
// request sent at or after since.
func (l *fleetLoad) okSince(instance string, since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.answers {
		if a.instance == instance && a.method == "POST" && strings.HasSuffix(a.path, "/subscriptions") &&
			!a.at.Before(since) && a.status/100 == 2 {
			return true
		}
	}
	return false
}

// finish stops the load and returns the answers.
func (l *fleetLoad) finish() []loadAnswer {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answers
}

// errorLines returns the first n lines of logs logged at error level.
func errorLines(logs string, n int) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"error"`) && len(out) < n {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
