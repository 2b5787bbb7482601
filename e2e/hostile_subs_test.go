package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// subsClient posts and reads subscriptions with one partner's token.
type subsClient struct {
	t   *testing.T
	g   *repoGateway
	tok string
}

func (c subsClient) post(body string, header ...string) (int, http.Header, []byte) {
	c.t.Helper()
	h := append([]string{"Authorization", "Bearer " + c.tok, "Content-Type", "application/json"}, header...)
	return do(c.t, http.MethodPost, c.g.Base+"/api/fulfilment/v4/subscriptions", strings.NewReader(body), h...)
}

func (c subsClient) list() string {
	c.t.Helper()
	status, _, body := do(c.t, http.MethodGet, c.g.Base+"/api/fulfilment/v4/subscriptions", nil, "Authorization", "Bearer "+c.tok)
	if status != http.StatusOK {
		c.t.Fatalf("listing subscriptions: %d %s", status, body)
	}
	return string(body)
}

// badField asserts a 400 problem+json naming field ("" for none).
func badField(t testing.TB, what string, status int, h http.Header, body []byte, field string) {
	t.Helper()
	p := isProblem(t, what, status, h, body, http.StatusBadRequest)
	if p != nil && field != "" && p["field"] != field {
		t.Errorf("%s: problem names field %v, want %q: %s", what, p["field"], field, body)
	}
}

func subBody(url, event string) string {
	b, _ := json.Marshal(map[string]string{"notificationUrl": url, "event": event})
	return string(b)
}

// SSRF at registration, with the demo's allow_networks lines removed (plain
// http stays allowed, so every refusal below is the address policy's).
func TestHostileSubscriptionSSRF(t *testing.T) {
	t.Parallel()
	cf := repoCaddyfile(t)
	const allow = "\t\t\tallow_networks 127.0.0.1 {\n\t\t\t\tports {$FULFILGATE_RECEIVER_PORTS:9090}\n\t\t\t}\n"
	if !strings.Contains(cf, allow) {
		t.Fatalf("the demo Caddyfile no longer has %q", allow)
	}
	g := startRepoGateway(t, strings.Replace(cf, allow, "", 1))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	for _, target := range []string{
		"http://127.0.0.1:9/hook",
		"http://[::ffff:127.0.0.1]/hook",
		"http://[::ffff:7f00:1]/hook",
		"http://[0:0:0:0:0:ffff:127.0.0.1]/hook",
		"http://0x7f000001/hook",
		"http://0x7f.0.0.1/hook",
		"http://2130706433/hook",
		"http://017700000001/hook",
		"http://0177.0.0.1/hook",
		"http://127.1/hook",
		"http://127.000.000.001/hook",
		"http://localhost/hook",
		"http://LOCALHOST./hook",
		"http://[::1]/hook",
		"http://[::]/hook",
		"http://0.0.0.0/hook",
		"http://0/hook",
		"https://169.254.169.254/latest/meta-data/",
		"https://[::ffff:169.254.169.254]/latest/meta-data/",
		"https://[::ffff:a9fe:a9fe]/",
		"https://[fe80::1]/",
		"https://[fe80::1%25lo]/",
		"https://10.0.0.1/",
		"https://172.16.0.1/",
		"https://192.168.1.1/",
		"https://100.64.0.1/",
		"https://[fd00::1]/",
		"https://[fc00::1]/",
		"https://224.0.0.1/",
		"https://[ff02::1]/",
		"https://255.255.255.255/",
		"https://192.0.2.1/",
		"https://[64:ff9b::a9fe:a9fe]/",
		"https://[::127.0.0.1]/",
		"https://[2002:7f00:1::]/",
	} {
		status, h, body := c.post(subBody(target, "label-status"))
		badField(t, "SSRF "+target, status, h, body, "notificationUrl")
	}
	if l := c.list(); strings.Contains(l, `"id"`) {
		t.Errorf("refused targets were stored: %s", l)
	}
	g.noPanic(t)
	g.stillHealthy(t, c.tok)
}

// Malformed subscription requests: each a 400 naming the field, 413, 415 or
// 409 as documented, and nothing stored that should not be.
func TestHostileSubscriptionValidation(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	okURL := "http://127.0.0.1:9/hook"
	long := okURL + "/" + strings.Repeat("a", 2048-len(okURL)-1)
	for _, tc := range []struct{ what, body, field string }{
		{"user info", subBody("http://user:pass@127.0.0.1:9/hook", "label-status"), "notificationUrl"},
		{"user only", subBody("http://admin@127.0.0.1:9/hook", "label-status"), "notificationUrl"},
		{"2049 characters", subBody(long+"b", "label-status"), "notificationUrl"},
		{"javascript:", subBody("javascript:alert(1)", "label-status"), "notificationUrl"},
		{"data:", subBody("data:text/html,<script>alert(1)</script>", "label-status"), "notificationUrl"},
		{"file:", subBody("file:///etc/passwd", "label-status"), "notificationUrl"},
		{"gopher:", subBody("gopher://127.0.0.1:9/_x", "label-status"), "notificationUrl"},
		{"relative", subBody("/hook", "label-status"), "notificationUrl"},
		{"scheme-relative", subBody("//127.0.0.1:9/hook", "label-status"), "notificationUrl"},
		{"no host", subBody("http:///hook", "label-status"), "notificationUrl"},
		{"fragment", subBody(okURL+"#x", "label-status"), "notificationUrl"},
		{"CRLF", subBody(okURL+"\r\nX-Injected: 1", "label-status"), "notificationUrl"},
		{"empty", subBody("", "label-status"), "notificationUrl"},
		{"number", `{"notificationUrl":1,"event":"label-status"}`, "notificationUrl"},
		{"event ../x", subBody(okURL, "../x"), "event"},
		{"event upper-case", subBody(okURL, "LABEL-STATUS"), "event"},
		{"event with NUL", subBody(okURL, "label-status\x00"), "event"},
		{"event array", `{"notificationUrl":"` + okURL + `","event":["label-status"]}`, "event"},
		{"missing event", `{"notificationUrl":"` + okURL + `"}`, "event"},
		{"unknown field", `{"notificationUrl":"` + okURL + `","event":"label-status","partner":"partner-globex"}`, "partner"},
		{"null", `null`, ""},
		{"array", `[]`, ""},
		{"two objects", subBody(okURL, "label-status") + subBody(okURL, "inbound-status"), ""},
		{"truncated", `{"notificationUrl":"` + okURL, ""},
		{"deeply nested", `{"notificationUrl":` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + `,"event":"label-status"}`, ""},
		{"deeply nested unknown field", `{"x":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + `}`, ""},
	} {
		status, h, body := c.post(tc.body)
		badField(t, tc.what, status, h, body, tc.field)
	}
	// Duplicate keys: whatever the decoder keeps must be what was validated.
	for _, body := range []string{
		`{"notificationUrl":"` + okURL + `","notificationUrl":"https://10.0.0.1/","event":"label-status"}`,
		`{"notificationUrl":"https://10.0.0.1/","notificationUrl":"` + okURL + `/dup","event":"label-status"}`,
		`{"notificationUrl":"` + okURL + `/dup2","event":"label-status","event":"../x"}`,
	} {
		status, _, b := c.post(body)
		if status/100 == 2 && (strings.Contains(string(b), "10.0.0.1") || strings.Contains(string(b), "../x")) {
			t.Errorf("duplicate keys slipped a refused value through: %d %s", status, b)
		}
		if status/100 != 2 && status != http.StatusBadRequest {
			t.Errorf("duplicate keys %s: %d %s", body, status, b)
		}
	}
	if l := c.list(); strings.Contains(l, "10.0.0.1") || strings.Contains(l, "../x") {
		t.Errorf("a refused value was stored: %s", l)
	}
	// Exactly 2048 characters is fine.
	if status, _, body := c.post(subBody(long, "label-status")); status != http.StatusCreated {
		t.Errorf("2048-character url: %d %s, want 201", status, body)
	}
	// Size and content type.
	big := `{"notificationUrl":"` + okURL + `","event":"label-status","pad":"` + strings.Repeat("x", 65<<10) + `"}`
	if status, h, body := c.post(big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("65 KiB body: %d %q %s, want 413", status, h.Get("Content-Type"), body)
	}
	host := hostport(g.Base)
	r := rawHTTP(t, host, "POST /api/fulfilment/v4/subscriptions HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+c.tok+
		"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big))
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("65 KiB chunked body: %d %s, want 413", r.Status, r.Body)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", "multipart/form-data; boundary=x", ""} {
		status, h, body := do(t, http.MethodPost, g.Base+"/api/fulfilment/v4/subscriptions", strings.NewReader(subBody(okURL+"/ct", "label-status")),
			"Authorization", "Bearer "+c.tok, "Content-Type", ct)
		isProblem(t, "Content-Type "+ct, status, h, body, http.StatusUnsupportedMediaType)
	}
	for _, m := range []string{http.MethodPut, http.MethodPatch} {
		status, h, _ := do(t, m, g.Base+"/api/fulfilment/v4/subscriptions", strings.NewReader(subBody(okURL, "label-status")),
			"Authorization", "Bearer "+c.tok, "Content-Type", "application/json")
		if status != http.StatusMethodNotAllowed || h.Get("Allow") == "" {
			t.Errorf("%s on the collection: %d Allow %q", m, status, h.Get("Allow"))
		}
	}
	if l := c.list(); strings.Count(l, `"id"`) != 2 {
		t.Errorf("want the 2048-character and the one valid duplicate-key subscription stored, got %s", l)
	}
	g.stillHealthy(t, c.tok)
}

// The per-partner limit: 100 subscriptions, the 101st is 409; another
// partner is unaffected; deleting one makes room again.
func TestHostileSubscriptionLimit(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	var first string
	for i := range 100 {
		status, _, body := c.post(subBody(fmt.Sprintf("http://127.0.0.1:9/h/%d", i), "label-status"))
		if status != http.StatusCreated {
			t.Fatalf("subscription %d: %d %s", i+1, status, body)
		}
		if i == 0 {
			var s struct{ ID string }
			_ = json.Unmarshal(body, &s)
			first = s.ID
		}
	}
	status, h, body := c.post(subBody("http://127.0.0.1:9/h/100", "label-status"))
	isProblem(t, "101st subscription", status, h, body, http.StatusConflict)
	// Re-posting an existing one is still the idempotent 200, not 409.
	if status, _, body := c.post(subBody("http://127.0.0.1:9/h/5", "label-status")); status != http.StatusOK {
		t.Errorf("re-posting an existing subscription at the limit: %d %s", status, body)
	}
	other := subsClient{t, g, hostileToken(t, g.Base, globexClientID, globexClientSecret)}
	if status, _, body := other.post(subBody("http://127.0.0.1:9/g", "label-status")); status != http.StatusCreated {
		t.Errorf("globex while acme is at its limit: %d %s", status, body)
	}
	if status, _, body := do(t, http.MethodDelete, g.Base+"/api/fulfilment/v4/subscriptions/"+first, nil, "Authorization", "Bearer "+c.tok); status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, _, body := c.post(subBody("http://127.0.0.1:9/h/100", "label-status")); status != http.StatusCreated {
		t.Errorf("after deleting one: %d %s, want 201", status, body)
	}
	g.stillHealthy(t, c.tok)
}

// Field names are exact and strings are valid UTF-8: "NotificationUrl" is an
// unknown field, not notificationUrl (encoding/json matches names without
// regard to case), and a notificationUrl with an invalid UTF-8 byte is
// refused rather than stored with U+FFFD in its place (then delivered to a
// URL the partner never sent).
func TestHostileSubscriptionStrictJSON(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	var bugs []string
	for _, tc := range []struct{ what, body, field string }{
		{"case-folded key", `{"NotificationUrl":"http://127.0.0.1:9/a","event":"label-status"}`, "NotificationUrl"},
		{"upper-case key", `{"notificationUrl":"http://127.0.0.1:9/b","EVENT":"label-status"}`, "EVENT"},
		{"invalid UTF-8", "{\"notificationUrl\":\"http://127.0.0.1:9/c\xff\",\"event\":\"label-status\"}", "notificationUrl"},
	} {
		status, h, body := c.post(tc.body)
		if status == http.StatusCreated {
			bugs = append(bugs, fmt.Sprintf("%s: POST %s -> %d %s", tc.what, tc.body, status, body))
			continue
		}
		badField(t, tc.what, status, h, body, tc.field)
	}
	g.stillHealthy(t, c.tok)
	if len(bugs) > 0 {
		t.Errorf("subscription JSON decoded case-insensitively or lossily (not 400):\n%s", strings.Join(bugs, "\n"))
	}
}

// Races: 30 concurrent creations when 90 of 100 slots are used must create
// exactly 10; 20 concurrent identical posts must create exactly one
// subscription (one 201, the rest 200 with the same id).
func TestHostileSubscriptionRaces(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	for i := range 90 {
		if status, _, body := c.post(subBody(fmt.Sprintf("http://127.0.0.1:9/r/%d", i), "receipt-received")); status != http.StatusCreated {
			t.Fatalf("subscription %d: %d %s", i+1, status, body)
		}
	}
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _, _ = c.post(subBody(fmt.Sprintf("http://127.0.0.1:9/race/%d", i), "receipt-received"))
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 10 || count[http.StatusConflict] != 20 {
		t.Errorf("30 racing creations at 90/100: %v, want 10 x 201 and 20 x 409", count)
	}
	if n := strings.Count(c.list(), `"id"`); n != 100 {
		t.Errorf("the partner holds %d subscriptions, limit 100", n)
	}

	other := subsClient{t, g, hostileToken(t, g.Base, globexClientID, globexClientSecret)}
	ids := make([]string, 20)
	statuses = make([]int, 20)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body []byte
			statuses[i], _, body = other.post(subBody("http://127.0.0.1:9/same", "inbound-status"))
			var s struct{ ID string }
			_ = json.Unmarshal(body, &s)
			ids[i] = s.ID
		}()
	}
	wg.Wait()
	count = map[int]int{}
	for i, s := range statuses {
		count[s]++
		if ids[i] == "" || ids[i] != ids[0] {
			t.Errorf("racing identical post %d: %d id %q, want the one id %q", i, s, ids[i], ids[0])
		}
	}
	if count[http.StatusCreated] != 1 || count[http.StatusOK] != 19 {
		t.Errorf("20 racing identical posts: %v, want one 201 and 19 x 200", count)
	}
	if n := strings.Count(other.list(), `"id"`); n != 1 {
		t.Errorf("20 racing identical posts stored %d subscriptions", n)
	}
	g.stillHealthy(t, c.tok)
}

// A subscription whose URL is stored in another form than it is compared
// in (an upper-case scheme, a non-ASCII path) can be deleted and created
// again, cycle after cycle: each create is a 201, never a 404 left by the
// delete.
func TestHostileSubscriptionDeleteAndCreateAgain(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	for _, u := range []string{"HTTP://127.0.0.1:9/upper", "http://127.0.0.1:9/ünïcödé"} {
		for cycle := 1; cycle <= 3; cycle++ {
			status, _, body := c.post(subBody(u, "label-status"))
			if status != http.StatusCreated {
				t.Fatalf("%s, cycle %d: create %d %s, want 201", u, cycle, status, body)
			}
			var s struct{ ID string }
			_ = json.Unmarshal(body, &s)
			if status, _, body := do(t, http.MethodDelete, g.Base+"/api/fulfilment/v4/subscriptions/"+s.ID, nil,
				"Authorization", "Bearer "+c.tok); status != http.StatusNoContent {
				t.Fatalf("%s, cycle %d: delete %d %s", u, cycle, status, body)
			}
		}
	}
	if l := c.list(); strings.Contains(l, `"id"`) {
		t.Fatalf("subscriptions left: %s", l)
	}
}

// Registration does not tell which host names exist: a name that does not
// resolve gets the very same 400 as an address the policy refuses.
func TestHostileRegistrationDoesNotRevealHostNames(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	c := subsClient{t, g, hostileToken(t, g.Base, demoClientID, demoClientSecret)}
	details := map[string]string{}
	for _, u := range []string{"https://no-such-host.invalid/h", "https://10.0.0.1/h", "https://localhost/h"} {
		status, h, body := c.post(subBody(u, "label-status"))
		badField(t, u, status, h, body, "notificationUrl")
		details[problemDetail(body)] = u
	}
	if len(details) != 1 {
		t.Fatalf("refusals differ: %v; want one answer for a name that does not resolve and refused addresses", details)
	}
}
