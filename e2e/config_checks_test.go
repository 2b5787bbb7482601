package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// validate runs `caddy validate` on caddyfile and returns the output and
// whether the configuration was accepted.
func validate(t *testing.T, caddyfile string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, "validate", "--config", "Caddyfile", "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"), "DATA="+filepath.Join(dir, "data"))
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("caddy validate did not finish: %s", out)
	}
	return string(out), err == nil && strings.Contains(string(out), "Valid configuration")
}

// fulfilmentWarnings returns the warnings about the fulfilment handlers in
// validate's output.
func fulfilmentWarnings(out string) []string {
	var ws []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "fulfilment") {
			ws = append(ws, line)
		}
	}
	return ws
}

// A minimal gateway configuration around the site block body: the
// fulfilment app with a data dir, and the site.
func gatewayConfig(site string) string {
	return "{\n\tadmin off\n\tfulfilment {\n\t\tdata_dir {$DATA}\n\t}\n}\n\nhttp://127.0.0.1:9 {\n" + site + "}\n"
}

const (
	versionBlock = "\tfulfilment_version {\n\t\texpose shipments\n\t\tversion v4 {\n\t\t\tupstream_prefix /wms\n\t\t}\n\t}\n"
	proxyLine    = "\treverse_proxy 127.0.0.1:8\n"
	tokenLines   = "\t@token path /api/auth/token\n\tfulfilment_token @token\n"
)

// What `caddy validate` says of gateway configurations: it refuses a version
// handler that no guard runs before (it could only answer 500), and warns
// of the shapes that are wrong but send nothing to the WMS without an
// identity: a guard that runs only for some requests, no handler after the
// version handler, a token endpoint without a path matcher, no fulfilment
// app configured.
func TestValidateChecksTheGatewayRoutes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		caddyfile string
		refused   string // part of the refusal; "" when accepted
		warning   string // part of the one warning; "" for none
	}{
		{name: "the demo", caddyfile: repoCaddyfile(t)},
		{name: "guard, version, proxy", caddyfile: gatewayConfig(tokenLines + "\tfulfilment_auth\n" + versionBlock + proxyLine)},
		{name: "version and proxy, no guard", caddyfile: gatewayConfig(versionBlock + proxyLine),
			refused: "fulfilment_version has no fulfilment_auth before it"},
		{name: "no guard, no fulfilment app", caddyfile: "{\n\tadmin off\n}\n\nhttp://127.0.0.1:9 {\n" + versionBlock + proxyLine + "}\n",
			refused: "fulfilment_version has no fulfilment_auth before it", warning: "the fulfilment app is not configured"},
		{name: "guard after the version handler",
			caddyfile: gatewayConfig("\troute {\n" + indentLines(versionBlock) + "\t\tfulfilment_auth\n" + indentLines(proxyLine) + "\t}\n"),
			refused:   "fulfilment_version has no fulfilment_auth before it"},
		{name: "guard in another handle block",
			caddyfile: gatewayConfig("\thandle /api/auth/* {\n\t\tfulfilment_auth\n\t}\n\thandle {\n" + indentLines(versionBlock+proxyLine) + "\t}\n"),
			refused:   "fulfilment_version has no fulfilment_auth before it"},
		{name: "guard for some paths only", caddyfile: gatewayConfig("\tfulfilment_auth /api/fulfilment/v4/*\n" + versionBlock + proxyLine),
			warning: "runs after fulfilment_auth only for some requests"},
		{name: "guard in the enclosing route",
			caddyfile: gatewayConfig("\troute /api/* {\n\t\tfulfilment_auth\n\t\troute {\n" + indentLines(indentLines(versionBlock+proxyLine)) + "\t\t}\n\t}\n")},
		{name: "guard in an earlier route without matchers",
			caddyfile: gatewayConfig("\troute {\n\t\tfulfilment_auth\n\t}\n\troute {\n" + indentLines(versionBlock+proxyLine) + "\t}\n")},
		{name: "nothing after the version handler", caddyfile: gatewayConfig("\tfulfilment_auth\n" + versionBlock),
			warning: "has no handler after it that answers the request"},
		{name: "proxy in a later route", caddyfile: gatewayConfig("\tfulfilment_auth\n" + versionBlock + "\treverse_proxy /api/* 127.0.0.1:8\n")},
		{name: "token endpoint without a matcher", caddyfile: gatewayConfig("\tfulfilment_token\n"),
			warning: "fulfilment_token has no path matcher"},
		{name: "token endpoint matched by method only", caddyfile: gatewayConfig("\t@post method POST\n\tfulfilment_token @post\n"),
			warning: "fulfilment_token has no path matcher"},
		{name: "token endpoint in a handle block", caddyfile: gatewayConfig("\thandle /api/auth/token {\n\t\tfulfilment_token\n\t}\n")},
		{name: "token endpoint with a path of its own", caddyfile: gatewayConfig("\tfulfilment_token {\n\t\tpath /api/auth/token\n\t}\n")},
		{name: "no fulfilment app", caddyfile: "{\n\tadmin off\n}\n\nhttp://127.0.0.1:9 {\n\tfulfilment_auth\n" + versionBlock + proxyLine + "}\n",
			warning: "the fulfilment app is not configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := validate(t, tc.caddyfile)
			switch {
			case tc.refused == "" && !ok:
				t.Errorf("refused, want it accepted:\n%s\n%s", tc.caddyfile, out)
			case tc.refused != "" && (ok || !strings.Contains(out, tc.refused)):
				t.Errorf("accepted or refused for another reason, want a refusal saying %q:\n%s\n%s", tc.refused, tc.caddyfile, out)
			}
			ws := fulfilmentWarnings(out)
			switch {
			case tc.warning == "" && len(ws) > 0:
				t.Errorf("warned, want no warning:\n%s\n%s", tc.caddyfile, strings.Join(ws, "\n"))
			case tc.warning != "" && (len(ws) != 1 || !strings.Contains(ws[0], tc.warning)):
				t.Errorf("want one warning saying %q, got:\n%s\n%s", tc.warning, tc.caddyfile, strings.Join(ws, "\n"))
			}
		})
	}
}

// indentLines puts one more tab before every line of s.
func indentLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "\t" + l
		}
	}
	return strings.Join(lines, "")
}

// The demo's gateway written as its five directives, with the guard
// narrowed to v4: a warned, not refused, configuration. A v3 request reaches the version handler without the
// guard: it answers 500 problem+json naming the misconfiguration, the
// caller's own X-Partner-Id notwithstanding, and nothing reaches the WMS.
func TestMisconfiguredSiteFailsClosed(t *testing.T) {
	t.Parallel()
	narrowed := withSeparateDirectives(t, repoCaddyfile(t), "\tfulfilment_auth /api/fulfilment/v4/*\n")
	g := startRepoGateway(t, narrowed)
	g.clearLog(t)
	for _, path := range []string{"/api/fulfilment/v3/products", "/v3/products", "/v4/products"} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			status, h, body := do(t, method, g.Base+path, nil, "X-Partner-Id", demoPartner)
			p := isProblem(t, method+" "+path+" without the guard", status, h, body, http.StatusInternalServerError)
			if p != nil && (!strings.HasSuffix(p["type"].(string), "#misconfigured") || strings.Contains(string(body), ".go:")) {
				t.Errorf("%s %s: problem %s, want type misconfigured and no stack", method, path, body)
			}
		}
	}
	if got := g.logged(t); len(got) != 0 {
		t.Errorf("requests without the guard reached the WMS: %+v", got)
	}
	// The v4 paths still need a token, and work with one.
	if status, _, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil, "X-Partner-Id", demoPartner); status != http.StatusUnauthorized {
		t.Errorf("v4 without a token: %d %s, want 401", status, body)
	}
	partners, _ := listItems(t, g.Base, "/api/fulfilment/v4/products", hostileToken(t, g.Base, globexClientID, globexClientSecret))
	for _, p := range partners {
		if p != globexPartner {
			t.Errorf("globex's v4 list holds an item of %q", p)
		}
	}
	g.noPanic(t)
}

// withSeparateDirectives is the demo Caddyfile cf with its gateway written
// as the five directives of its jobs, guard being the guard's line.
func withSeparateDirectives(t *testing.T, cf, guard string) string {
	t.Helper()
	const open, closing, version, versionEnd = "\tfulfilment_gateway {\n", "\n\t}\n", "\t\tversion {\n", "\n\t\t}\n"
	start := strings.Index(cf, open)
	end := strings.Index(cf[max(start, 0):], closing)
	vStart := strings.Index(cf, version)
	vEnd := strings.Index(cf[max(vStart, 0):], versionEnd)
	if start < 0 || end < 0 || vStart < start || vEnd < 0 || vStart+vEnd > start+end {
		t.Fatal("the demo Caddyfile has no fulfilment_gateway block with a version block: adapt this test")
	}
	var mapping strings.Builder
	for _, line := range strings.Split(cf[vStart+len(version):vStart+vEnd], "\n") {
		mapping.WriteString(strings.TrimPrefix(line, "\t") + "\n")
	}
	return cf[:start] + "\tfulfilment_portal {\n\t\tprefix /portal\n\t}\n" +
		"\tfulfilment_token {\n\t\tpath /api/auth/token\n\t}\n" + guard + "\tfulfilment_subscriptions\n" +
		"\tfulfilment_version {\n" + mapping.String() + "\t}\n" + cf[start+end+len(closing):]
}
