package e2e

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tests named TestBuilt* depend on how the binary was built; CI runs
// them again against the binary that xcaddy's build steps make
// (FULFILGATE_CADDY, see .ci/run).

// releaseOrDev is what a webhook's User-Agent names: a released version of
// the gateway module or "dev", never a pseudo-version such as the
// v0.0.0-00010101000000-000000000000 that Go records for a module that
// xcaddy takes from a local directory.
var releaseOrDev = regexp.MustCompile(`^Fulfilgate-Webhooks/(dev|v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$`)

func TestBuiltGatewayNamesAReleaseOrDevInTheWebhookUserAgent(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8")
	tok := g.token(t, "acme-client", whAcmeSecret)
	agents := make(chan string, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case agents <- r.Header.Get("User-Agent"):
		default:
		}
	}))
	t.Cleanup(rcv.Close)
	g.sendTest(t, g.subscribe(t, tok, rcv.URL+"/hooks", "label-status"))
	select {
	case ua := <-agents:
		if !releaseOrDev.MatchString(ua) || strings.Contains(ua, "00010101000000") {
			t.Fatalf("webhook User-Agent %q, want Fulfilgate-Webhooks/ and a release version or \"dev\"", ua)
		}
	case <-time.After(whTimeout):
		t.Fatalf("no webhook delivery within %s\n%s", whTimeout, g.Logs)
	}
}
