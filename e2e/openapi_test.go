package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/golang-jwt/jwt/v5"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// The OpenAPI document (docs/openapi.yaml) against the real gateway: every
// exchange below is checked against it, the request (where it is a valid
// one) and the gateway's answer (always; an answer whose status the document
// does not list fails too). Webhook deliveries are checked against the
// document's webhooks section, their signature included.

// spec checks exchanges with a gateway against the OpenAPI document.
type spec struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	client *http.Client
}

func newSpec(t *testing.T) *spec {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPIYAML)
	if err != nil {
		t.Fatalf("loading the OpenAPI document: %v", err)
	}
	doc.Servers = nil // routes are found by the request path alone, on any gateway address
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing the OpenAPI document: %v", err)
	}
	return &spec{t: t, doc: doc, router: router, client: &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// authenticate accepts a request that carries what the named security
// scheme asks for; webhook signatures are checked by the receiver.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	auth := in.RequestValidationInput.Request.Header.Get("Authorization")
	switch in.SecuritySchemeName {
	case "partnerToken":
		if !strings.HasPrefix(auth, "Bearer ") {
			return errors.New("no Bearer token")
		}
	case "clientBasic":
		if !strings.HasPrefix(auth, "Basic ") {
			return errors.New("no Basic credentials")
		}
	case "hookSignature":
		if in.RequestValidationInput.Request.Header.Get("x-hook-signature") == "" {
			return errors.New("no x-hook-signature")
		}
	default:
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	return nil
}

// exchange is one request and the gateway's answer.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// call sends the request and checks it and the answer against the
// document. validRequest says whether the request itself follows the
// document; a hostile request is sent anyway and only the answer is checked.
func (s *spec) call(validRequest bool, method, rawURL, body string, header ...string) exchange {
	s.t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		s.t.Fatalf("%s %s: the document has no such operation: %v", method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req.Clone(context.Background()), PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: authenticate}}
	in.Request.Body = io.NopCloser(strings.NewReader(body))
	if validRequest {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			s.t.Errorf("%s %s: the test's request does not follow the document: %v", method, req.URL.Path, err)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: reading the answer: %v", method, rawURL, err)
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body:    io.NopCloser(bytes.NewReader(got)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		s.t.Errorf("%s %s: the gateway's answer %d %s does not follow the document: %v",
			method, req.URL.Path, resp.StatusCode, got, err)
	}
	return exchange{resp.StatusCode, resp.Header, got}
}

// problemType returns the fragment of a problem answer's type URI.
func problemType(t *testing.T, e exchange) string {
	t.Helper()
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(e.body, &p); err != nil {
		t.Fatalf("not a problem body: %s", e.body)
	}
	_, kind, _ := strings.Cut(p.Type, "#")
	return kind
}

// specGateway runs the demo Caddyfile with a configured signing key (so that
// the test can make an expired token), at most maxSubs subscriptions per
// partner (so that the limit is reachable) and Standard Webhooks headers (so
// that their description is checked too).
func specGateway(t *testing.T, maxSubs int) *repoGateway {
	t.Helper()
	cf := keyedCaddyfile(t)
	old := "\t\t\tallow_http\n"
	if !strings.Contains(cf, old) {
		t.Fatalf("demo Caddyfile lacks %q", old)
	}
	cf = strings.Replace(cf, old, old+fmt.Sprintf("\t\t\tmax_subscriptions_per_partner %d\n\t\t\tstandard_webhooks\n", maxSubs), 1)
	g := newRepoGateway(t, cf)
	g.Env = append(g.Env, "FULFILGATE_SIGNING_KEY="+e2eSeed)
	g.run(t)
	return g
}

// expiredToken is a genuine token of partner-acme whose exp has passed,
// signed with the configured key.
func expiredToken(t *testing.T, base string) string {
	t.Helper()
	genuine := strings.TrimPrefix(tokensDemoBearer(t, base)[1], "Bearer ")
	seed, _ := base64.StdEncoding.DecodeString(e2eSeed)
	claims := decodeClaims(t, genuine)
	claims["iat"] = time.Now().Add(-2 * time.Hour).Unix()
	claims["exp"] = time.Now().Add(-time.Hour).Unix()
	claims["jti"] = "e2e-openapi-expired"
	tk := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tk.Header["typ"], tk.Header["kid"] = "at+jwt", "e2e-1"
	s, err := tk.SignedString(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The token endpoint's answers, successful and not, follow the document,
// for both client authentication styles.
func TestOpenAPITokenEndpointConforms(t *testing.T) {
	t.Parallel()
	g := specGateway(t, 100)
	s := newSpec(t)
	tokenURL := g.Base + "/api/auth/token"
	form := "application/x-www-form-urlencoded"

	for _, tc := range []struct {
		name   string
		valid  bool
		body   string
		header []string
		status int
		error  string
	}{
		{"Basic", true, "grant_type=client_credentials", []string{"Authorization", basicAuth(demoAcmeID, demoAcmeSecret), "Content-Type", form}, 200, ""},
		{"Basic without a body", true, "", []string{"Authorization", basicAuth(demoAcmeID, demoAcmeSecret)}, 200, ""},
		{"form body", true, "grant_type=client_credentials&client_id=" + demoGlobexID + "&client_secret=" + demoGlobexSecret, []string{"Content-Type", form}, 200, ""},
		{"wrong secret, Basic", true, "grant_type=client_credentials", []string{"Authorization", basicAuth(demoAcmeID, "wrong"), "Content-Type", form}, 401, "invalid_client"},
		{"wrong secret, form", true, "grant_type=client_credentials&client_id=" + demoGlobexID + "&client_secret=wrong", []string{"Content-Type", form}, 401, "invalid_client"},
		{"no credentials", true, "", nil, 401, "invalid_client"},
		{"both styles", true, "grant_type=client_credentials&client_id=" + demoAcmeID + "&client_secret=" + demoAcmeSecret, []string{"Authorization", basicAuth(demoAcmeID, demoAcmeSecret), "Content-Type", form}, 400, "invalid_request"},
		{"form without grant_type", true, "client_id=" + demoAcmeID + "&client_secret=" + demoAcmeSecret, []string{"Content-Type", form}, 400, "invalid_request"},
		{"another grant type", false, "grant_type=password", []string{"Authorization", basicAuth(demoAcmeID, demoAcmeSecret), "Content-Type", form}, 400, "unsupported_grant_type"},
		{"a body over 8 KiB", false, "grant_type=client_credentials&x=" + strings.Repeat("a", 9000), []string{"Authorization", basicAuth(demoAcmeID, demoAcmeSecret), "Content-Type", form}, 413, "invalid_request"},
	} {
		e := s.call(tc.valid, http.MethodPost, tokenURL, tc.body, tc.header...)
		var got struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(e.body, &got) != nil || e.status != tc.status || got.Error != tc.error {
			t.Errorf("%s: %d %s; want %d with error %q", tc.name, e.status, e.body, tc.status, tc.error)
		}
	}

	// Failed attempts for one client id end in 429 slow_down with Retry-After.
	var last exchange
	for range 12 {
		last = s.call(true, http.MethodPost, tokenURL, "grant_type=client_credentials",
			"Authorization", basicAuth("guessed-client", "guess"), "Content-Type", form)
	}
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
		t.Errorf("after 12 failed attempts: %d %s, want 429 with Retry-After", last.status, last.body)
	}
}

// The subscriptions API's answers follow the document: every operation,
// idempotent creation, partner isolation, validation, size, media type, the
// limit, and the guard's 401 and 403.
func TestOpenAPISubscriptionsConform(t *testing.T) {
	t.Parallel()
	g := specGateway(t, 2)
	s := newSpec(t)
	acme := tokensDemoBearer(t, g.Base)
	globexToken, err := tokenFor(t, g, demoGlobexID, demoGlobexSecret)
	if err != nil {
		t.Fatal(err)
	}
	globex := []string{"Authorization", "Bearer " + globexToken}
	subs := g.Base + "/api/fulfilment/v4/subscriptions"
	asJSON := func(h []string) []string { return append([]string{"Content-Type", "application/json"}, h...) }

	create := `{"notificationUrl":"http://127.0.0.1:9/hooks","event":"shipment-shipped"}`
	e := s.call(true, http.MethodPost, subs, create, asJSON(acme)...)
	var sub struct{ ID string }
	if e.status != http.StatusCreated || json.Unmarshal(e.body, &sub) != nil || sub.ID == "" {
		t.Fatalf("creating a subscription: %d %s", e.status, e.body)
	}
	if e = s.call(true, http.MethodPost, subs, create, asJSON(acme)...); e.status != http.StatusOK {
		t.Errorf("creating it again: %d %s, want 200 with the existing one", e.status, e.body)
	}
	if e = s.call(true, http.MethodGet, subs, "", acme...); e.status != http.StatusOK || !strings.Contains(string(e.body), sub.ID) {
		t.Errorf("listing: %d %s, want 200 listing %s", e.status, e.body, sub.ID)
	}
	if e = s.call(true, http.MethodGet, subs+"/"+sub.ID, "", acme...); e.status != http.StatusOK {
		t.Errorf("showing: %d %s, want 200", e.status, e.body)
	}
	if e = s.call(true, http.MethodGet, subs+"/"+sub.ID, "", globex...); e.status != http.StatusNotFound || problemType(t, e) != "not-found" {
		t.Errorf("another partner showing it: %d %s, want 404 not-found", e.status, e.body)
	}
	if e = s.call(true, http.MethodDelete, subs+"/"+sub.ID, "", globex...); e.status != http.StatusNotFound {
		t.Errorf("another partner deleting it: %d %s, want 404", e.status, e.body)
	}

	for _, tc := range []struct {
		name, body, ctype string
		status            int
		kind              string
	}{
		{"an unknown event", `{"notificationUrl":"http://127.0.0.1:9/hooks","event":"order-created"}`, "application/json", 400, "invalid-request"},
		{"an unknown field", `{"url":"http://127.0.0.1:9/hooks","event":"label-status"}`, "application/json", 400, "invalid-request"},
		{"a private address", `{"notificationUrl":"http://10.0.0.1/hooks","event":"label-status"}`, "application/json", 400, "invalid-request"},
		{"malformed JSON", `{"notificationUrl":`, "application/json", 400, "invalid-request"},
		{"a form body", `notificationUrl=x`, "application/x-www-form-urlencoded", 415, "unsupported-media-type"},
		{"a body over 64 KiB", `{"notificationUrl":"http://127.0.0.1:9/` + strings.Repeat("a", 70000) + `","event":"label-status"}`, "application/json", 413, "payload-too-large"},
	} {
		e := s.call(false, http.MethodPost, subs, tc.body, append([]string{"Content-Type", tc.ctype}, acme...)...)
		if e.status != tc.status || problemType(t, e) != tc.kind {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.status, e.body, tc.status, tc.kind)
		}
	}

	// The limit (two per partner in this configuration).
	for i, event := range []string{"label-status", "inbound-status"} {
		e := s.call(true, http.MethodPost, subs, fmt.Sprintf(`{"notificationUrl":"http://127.0.0.1:9/h%d","event":%q}`, i, event), asJSON(acme)...)
		if i == 0 && e.status != http.StatusCreated {
			t.Fatalf("second subscription: %d %s", e.status, e.body)
		}
		if i == 1 && (e.status != http.StatusConflict || problemType(t, e) != "subscription-limit") {
			t.Errorf("third subscription: %d %s, want 409 subscription-limit", e.status, e.body)
		}
	}

	if e = s.call(true, http.MethodDelete, subs+"/"+sub.ID, "", acme...); e.status != http.StatusNoContent {
		t.Errorf("deleting: %d %s, want 204", e.status, e.body)
	}
	if e = s.call(true, http.MethodGet, subs+"/"+sub.ID, "", acme...); e.status != http.StatusNotFound {
		t.Errorf("showing a deleted subscription: %d %s, want 404", e.status, e.body)
	}

	// The guard, on the subscriptions API.
	if e = s.call(false, http.MethodGet, subs, ""); e.status != http.StatusUnauthorized || problemType(t, e) != "unauthorized" {
		t.Errorf("without a token: %d %s, want 401 unauthorized", e.status, e.body)
	}
	if e = s.call(true, http.MethodGet, subs, "", "Authorization", "Bearer not.a.token"); e.status != http.StatusUnauthorized || problemType(t, e) != "invalid-token" {
		t.Errorf("an invalid token: %d %s, want 401 invalid-token", e.status, e.body)
	}
	if e = s.call(true, http.MethodGet, subs, "", "Authorization", "Bearer "+expiredToken(t, g.Base)); e.status != http.StatusForbidden || problemType(t, e) != "token-expired" {
		t.Errorf("an expired token: %d %s, want 403 token-expired", e.status, e.body)
	}
}

// The resource paths' answers follow the document: the warehouse's answers
// through both versions and the short label, and the gateway's errors.
func TestOpenAPIResourcesAndErrorsConform(t *testing.T) {
	t.Parallel()
	g := specGateway(t, 100)
	s := newSpec(t)
	acme := tokensDemoBearer(t, g.Base)

	for _, tc := range []struct {
		name   string
		valid  bool
		path   string
		status int
		kind   string
	}{
		{"a v4 collection", true, "/api/fulfilment/v4/products?page_size=1", 200, ""},
		{"a v4 record", true, "/api/fulfilment/v4/products/ITM-000001", 200, ""},
		{"a v3 collection (deprecated)", true, "/api/fulfilment/v3/shipments", 200, ""},
		{"the short label", true, "/v3/products", 200, ""},
		{"a record the warehouse does not have", true, "/api/fulfilment/v4/products/ITM-999999", 404, "not-found"},
		{"a version not served", false, "/api/fulfilment/v5/products", 404, "unknown-version"},
		{"a resource not served", false, "/api/fulfilment/v4/changes", 404, "not-found"},
		{"an encoded backslash", true, "/api/fulfilment/v4/products/a%5Cb", 400, "invalid-path"},
		{"the OpenAPI document", true, "/api/fulfilment/v4/openapi.json", 200, ""},
	} {
		e := s.call(tc.valid, http.MethodGet, g.Base+tc.path, "", acme...)
		if e.status != tc.status || (tc.kind != "" && problemType(t, e) != tc.kind) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.status, e.body, tc.status, tc.kind)
		}
		if strings.Contains(tc.path, "v3") && e.header.Get("Deprecation") == "" {
			t.Errorf("%s: no Deprecation header", tc.name)
		}
	}
	if e := s.call(false, http.MethodGet, g.Base+"/api/fulfilment/v4/products", ""); e.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d %s, want 401", e.status, e.body)
	}
	if e := s.call(true, http.MethodGet, g.Base+"/v4/products", "", "Authorization", "Bearer "+expiredToken(t, g.Base)); e.status != http.StatusForbidden {
		t.Errorf("an expired token: %d %s, want 403", e.status, e.body)
	}

	// The warehouse in maintenance: 503 upstream-unavailable with its Retry-After.
	if status, _, b := do(t, http.MethodPost, g.WMS+"/wms/_control/outage", strings.NewReader(`{"seconds":60}`)); status != http.StatusOK {
		t.Fatalf("starting an outage: %d %s", status, b)
	}
	e := s.call(true, http.MethodGet, g.Base+"/api/fulfilment/v4/products", "", acme...)
	if e.status != http.StatusServiceUnavailable || problemType(t, e) != "upstream-unavailable" || e.header.Get("Retry-After") == "" {
		t.Errorf("during an outage: %d %v %s, want 503 upstream-unavailable with Retry-After", e.status, e.header, e.body)
	}
	do(t, http.MethodPost, g.WMS+"/wms/_control/outage", strings.NewReader(`{"seconds":0}`))
}

// hookChecker is a webhook receiver that checks every delivery against the
// document's webhook for the event its URL names (/<event>), signature
// included.
type hookChecker struct {
	t    *testing.T
	doc  *openapi3.T
	key  []byte
	mu   sync.Mutex
	seen map[string]int // event → deliveries that followed the document
	bad  []string
}

func (c *hookChecker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	event := strings.TrimPrefix(r.URL.Path, "/")
	fail := func(format string, args ...any) {
		c.mu.Lock()
		c.bad = append(c.bad, fmt.Sprintf("%s: ", event)+fmt.Sprintf(format, args...))
		c.mu.Unlock()
		w.WriteHeader(http.StatusOK) // no retries of a bad delivery: it is reported once
	}
	if err != nil {
		fail("reading: %v", err)
		return
	}
	item := c.doc.Webhooks[event]
	if item == nil || item.Post == nil {
		fail("no webhook %q in the document", event)
		return
	}
	route := &routers.Route{Spec: c.doc, Path: "/" + event, PathItem: item, Method: http.MethodPost, Operation: item.Post}
	r.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: r, Route: route, Options: &openapi3filter.Options{
		AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			if in.SecuritySchemeName != "hookSignature" {
				return fmt.Errorf("unexpected scheme %q", in.SecuritySchemeName)
			}
			if !webhooks.Verify(c.key, body, r.Header.Get("x-hook-signature")) {
				return errors.New("x-hook-signature is not HMAC-SHA256 of the body with the webhook key")
			}
			return nil
		}}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		fail("the delivery %v %s does not follow the document: %v", r.Header, body, err)
		return
	}
	c.mu.Lock()
	c.seen[event]++
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Real deliveries of every event, produced by warehouse changes (and one
// operator test delivery), follow the document's webhooks section: payload,
// headers and signature.
func TestOpenAPIWebhookDeliveriesConform(t *testing.T) {
	t.Parallel()
	g := specGateway(t, 100)
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &hookChecker{t: t, doc: doc, key: []byte("DEMO-ONLY-acme-webhook-key-0123456789abcdef"), seen: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)

	acme := append([]string{"Content-Type", "application/json"}, tokensDemoBearer(t, g.Base)...)
	var labelStatusSub string
	for _, event := range webhooks.EventNames {
		status, _, b := do(t, http.MethodPost, g.Base+"/api/fulfilment/v4/subscriptions",
			strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, srv.URL+"/"+event, event)), acme...)
		if status != http.StatusCreated {
			t.Fatalf("subscribing to %s: %d %s", event, status, b)
		}
		if event == webhooks.EventLabelStatus {
			var sub struct{ ID string }
			json.Unmarshal(b, &sub)
			labelStatusSub = sub.ID
		}
	}

	control := func(path, body string) string {
		t.Helper()
		status, _, b := do(t, http.MethodPost, g.WMS+"/wms/_control/"+path, strings.NewReader(body))
		var rec struct{ ID string }
		if status >= 300 || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("POST /wms/_control/%s: %d %s", path, status, b)
		}
		return rec.ID
	}
	ob := control("outbounds", `{"partner":"partner-acme"}`)                       // outbound-status
	shp := control("outbounds/"+ob+"/shipments", "")                               // shipment-created
	lbl := control("shipments/"+shp+"/labels", "")                                 // nothing for a consolidation partner
	control("shipments/"+shp+"/dispatch", "")                                      // shipment-shipped
	control("labels/"+lbl+"/status", `{"status":"in-transit"}`)                    // label-status
	ib := control("inbounds", `{"partner":"partner-acme"}`)                        // inbound-status
	control("inbounds/"+ib+"/receipts", `{"products":["ITM-000001"]}`)             // receipt-received
	control("adjustments", `{"partner":"partner-acme","products":["ITM-000001"]}`) // adjustment-posted
	if out, err := g.CLI("fulfilment", "webhooks", "test", labelStatusSub, "--address", g.Admin); err != nil {
		t.Fatalf("a test delivery: %v\n%s", err, out)
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		rcv.mu.Lock()
		missing := []string{}
		for _, event := range webhooks.EventNames {
			if rcv.seen[event] == 0 {
				missing = append(missing, event)
			}
		}
		bad := append([]string(nil), rcv.bad...)
		rcv.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("deliveries that do not follow the document:\n%s", strings.Join(bad, "\n"))
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no conforming delivery of %v within 20s\n%s", missing, g.Logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
