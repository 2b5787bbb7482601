package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cliIn runs `caddy <args>` in dir with the environment env added to this
// process's (without any FULFILGATE_ADMIN of its own), as an operator would
// in a shell, and returns its combined output and exit status.
func cliIn(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FULFILGATE_ADMIN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("caddy %v: %v\n%s", args, err, out)
	}
	return string(out), 0
}

// The CLI finds the admin API as Caddy's own commands do: from
// $FULFILGATE_ADMIN (which the demo Caddyfile reads too), and from the
// Caddyfile in the current directory, without --address.
func TestCLIFindsTheAdminAPIWithoutFlags(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	out, code := cliIn(t, t.TempDir(), []string{"FULFILGATE_ADMIN=" + g.Admin}, "fulfilment", "webhooks", "depth")
	if code != 0 || !strings.Contains(out, `"queued"`) {
		t.Errorf("with FULFILGATE_ADMIN=%s in a directory without a Caddyfile: exit %d\n%s", g.Admin, code, out)
	}
	// In the gateway's directory: its Caddyfile names the admin address
	// (admin {$FULFILGATE_ADMIN:...}, resolved from the environment as
	// `caddy run` resolved it).
	out, code = cliIn(t, g.Dir, g.Env, "fulfilment", "partner", "list")
	if code != 0 || !strings.Contains(out, "partner-acme") {
		t.Errorf("in the directory of the gateway's Caddyfile: exit %d\n%s", code, out)
	}
}

// When nothing answers, the CLI says what to check instead of Go's dial
// error alone.
func TestCLISaysWhenNoGatewayAnswers(t *testing.T) {
	t.Parallel()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	out, code := cliIn(t, t.TempDir(), nil, "fulfilment", "feeds", "--address", addr)
	if code == 0 || !contains(out, "is the gateway running?", "use --address or --config", addr) {
		t.Fatalf("caddy fulfilment feeds against %s (nothing there): exit %d\n%s\nwant a failure asking whether the gateway runs", addr, code, out)
	}
}

// An error answer of the admin API is printed as the sentence it carries,
// not as raw JSON.
func TestCLIPrintsErrorsAsSentences(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "partner", "show", "partner-nobody")
	if code == 0 || strings.Contains(out, `{"error"`) || !contains(out, "Partner partner-nobody not found", "HTTP 404") {
		t.Fatalf("caddy fulfilment partner show partner-nobody: exit %d\n%s\nwant the sentence \"Partner partner-nobody not found.\" without JSON", code, out)
	}
}

// Wrong or missing arguments print the usage; a mistyped subcommand fails
// (before, cobra printed the group's help and exited 0).
func TestCLIUsageAndUnknownSubcommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"fulfilment", "partner", "show"}, []string{"accepts 1 arg(s), received 0", "Usage:", "partner show <partner-id>"}},
		{[]string{"fulfilment", "webhooks", "depth", "extra"}, []string{"unknown command", "Usage:"}},
		{[]string{"fulfilment", "fedds"}, []string{`unknown command "fedds"`, `did you mean "feeds"?`, "Usage:"}},
		{[]string{"fulfilment", "webhooks", "deth"}, []string{`unknown command "deth"`, "Usage:"}},
		{[]string{"fulfilment", "partner"}, []string{"needs a subcommand", "Usage:"}},
		{[]string{"fulfilment", "webhooks", "dead", "--since", "yesterday"}, []string{"RFC 3339", "Usage:"}},
	} {
		out, code := cliIn(t, dir, nil, c.args...)
		if code == 0 || !contains(out, c.want...) {
			t.Errorf("caddy %s: exit %d\n%s\nwant a failure saying %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}

// --limit 0 is refused as the admin API refuses ?limit=0 (before, the CLI
// sent no limit and listed 100); dead takes --since as replay does.
func TestCLIWebhookListFlags(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n max_attempts 1")
	tok := g.token(t, "acme-client", whAcmeSecret)
	gr := newWhGoReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
	id := g.sendTest(t, g.subscribe(t, tok, gr.URL+"/gone", "label-status"))
	whEventually(t, whTimeout, "delivery dead", func() bool { return len(g.deliveries(t, "dead", "")) == 1 })

	out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "webhooks", "dead", "--limit", "0")
	if code == 0 || !strings.Contains(out, "Limit must be an integer from 1 to 10000") {
		t.Errorf("webhooks dead --limit 0: exit %d\n%s\nwant the admin API's refusal", code, out)
	}
	before := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	after := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "webhooks", "dead", "--since", before); code != 0 || !strings.Contains(out, id) {
		t.Errorf("webhooks dead --since an hour ago: exit %d\n%s\nwant the dead delivery %s", code, out, id)
	}
	if out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "webhooks", "dead", "--since", after); code != 0 || strings.Contains(out, id) {
		t.Errorf("webhooks dead --since in an hour: exit %d\n%s\nwant no delivery", code, out)
	}
}

// --output table prints rows with a header for people.
func TestCLIOutputTable(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "partner", "list", "--output", "table")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 3 || !contains(lines[0], "ID", "CONSOLIDATION", "DISABLED") ||
		!strings.HasPrefix(lines[1], "partner-acme ") || strings.Contains(out, "{") {
		t.Fatalf("partner list --output table: exit %d\n%s\nwant a header and one row per partner", code, out)
	}
	out, code = cliIn(t, g.Dir, g.Env, "fulfilment", "feeds", "wms", "-o", "table")
	if code != 0 || !contains(out, "name ", "wms", "mode ", "poll", "poll_errors ") {
		t.Fatalf("feeds wms -o table: exit %d\n%s\nwant one field per line", code, out)
	}
}

// A partner created through the admin API can be disabled (its tokens are
// refused at once, enabling brings access back) and deleted with its
// subscriptions; deleting asks for confirmation.
func TestCLIPartnerDisableAndDelete(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	var created struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-initech")
	tok, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	if s := shipmentsStatus(t, g, tok); s != http.StatusOK {
		t.Fatalf("a new partner's token: %d, want 200", s)
	}
	subscribeStatus, _, body := do(t, "POST", g.Base+"/api/fulfilment/v4/subscriptions",
		strings.NewReader(`{"notificationUrl":"http://127.0.0.1:9/hooks","event":"label-status"}`),
		"Authorization", "Bearer "+tok, "Content-Type", "application/json")
	if subscribeStatus != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", subscribeStatus, body)
	}

	cliJSON(t, g, nil, "partner", "disable", "partner-initech")
	if s := shipmentsStatus(t, g, tok); s != http.StatusUnauthorized {
		t.Fatalf("a disabled partner's token: %d, want 401 at once", s)
	}
	if _, err := tokenFor(t, g, created.ClientID, created.ClientSecret); err == nil {
		t.Fatal("a disabled partner got a token")
	}
	cliJSON(t, g, nil, "partner", "enable", "partner-initech")
	tok2, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil || shipmentsStatus(t, g, tok2) != http.StatusOK {
		t.Fatalf("after enable: token %v, want access again", err)
	}

	out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "partner", "delete", "partner-initech")
	if code == 0 || !strings.Contains(out, "--yes") {
		t.Fatalf("partner delete without --yes (no terminal): exit %d\n%s\nwant a refusal asking for --yes", code, out)
	}
	var deleted struct {
		Deleted       bool `json:"deleted"`
		Subscriptions int  `json:"subscriptions_deleted"`
	}
	cliJSON(t, g, &deleted, "partner", "delete", "partner-initech", "--yes")
	if !deleted.Deleted || deleted.Subscriptions != 1 {
		t.Fatalf("partner delete --yes answered %+v, want deleted with its 1 subscription", deleted)
	}
	if s := shipmentsStatus(t, g, tok2); s != http.StatusUnauthorized {
		t.Fatalf("a deleted partner's token: %d, want 401 at once", s)
	}
	if out, code := cliIn(t, g.Dir, g.Env, "fulfilment", "partner", "delete", "partner-acme", "--yes"); code == 0 || !strings.Contains(out, "configuration") {
		t.Fatalf("deleting a partner of the Caddyfile: exit %d\n%s\nwant a refusal naming the configuration", code, out)
	}
}

// A reset that forgets the done changes asks for confirmation, and the
// events it sends again reach the partners with the x-hook-ids they had:
// a receiver that de-duplicates on x-hook-id processes each event once.
func TestCLIFeedResetForgetSeenKeepsHookIDs(t *testing.T) {
	t.Parallel()
	e := startFeedEnv(t, "", "interval 100ms")
	want := countOf(driveLife(e, "partner-cons", true))
	waitExact(t, e.cons, "before the reset", want, 20*time.Second)
	e.cons.mu.Lock()
	before := len(e.cons.got)
	e.cons.mu.Unlock()

	out, code := cliIn(t, e.g.Dir, e.g.Env, "fulfilment", "feeds", "reset", "wms", "--forget-seen", "--address", e.g.Admin)
	if code == 0 || !strings.Contains(out, "--yes") {
		t.Fatalf("feeds reset --forget-seen without --yes: exit %d\n%s\nwant a refusal asking for --yes", code, out)
	}
	out, code = cliIn(t, e.g.Dir, e.g.Env, "fulfilment", "feeds", "reset", "wms", "--forget-seen", "--yes", "--address", e.g.Admin)
	if code != 0 {
		t.Fatalf("feeds reset --forget-seen --yes: exit %d\n%s", code, out)
	}
	whEventually(t, 20*time.Second, "the events sent again", func() bool {
		e.cons.mu.Lock()
		defer e.cons.mu.Unlock()
		return len(e.cons.got) >= 2*before
	})
	waitExact(t, e.cons, "after the reset", want, time.Second) // each event still has one x-hook-id
	var st struct {
		EventsProduced int `json:"events_produced"`
	}
	b, _ := json.Marshal(e.feedStatus("wms"))
	if err := json.Unmarshal(b, &st); err != nil || st.EventsProduced < 2*before {
		t.Fatalf("feed status %s, want the events produced again: %v", b, fmt.Sprint(err))
	}
}
