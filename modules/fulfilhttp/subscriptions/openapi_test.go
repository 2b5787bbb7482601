package subscriptions

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// A partner's GET of /api/fulfilment/v4/openapi.json answers the embedded
// OpenAPI document as JSON.
func TestOpenAPIDocumentIsServedToAPartner(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	w := c.do("acme", http.MethodGet, openAPIPath, "", "")
	want, err := docs.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" || !bytes.Equal(w.Body.Bytes(), want) {
		t.Fatalf("GET %s: %d %q, %d bytes; want 200 application/json with the document's %d bytes",
			openAPIPath, w.Code, w.Header().Get("Content-Type"), w.Body.Len(), len(want))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("the served document's openapi field is %q (%v), want 3.1.0", doc.OpenAPI, err)
	}
}

// HEAD answers the headers of GET without the body.
func TestOpenAPIDocumentHeadHasNoBody(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	w := c.do("acme", http.MethodHead, openAPIPath, "", "")
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
		t.Fatalf("HEAD %s: %d, body %d bytes, Content-Length %q; want 200, no body, the length",
			openAPIPath, w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
}

// Without a partner named by the guard the document is refused, like every
// path under /api/fulfilment/.
func TestOpenAPIDocumentNeedsAToken(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	w := c.do("", http.MethodGet, openAPIPath, "", "")
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("GET %s without a partner: %d %s; want 401 with a challenge", openAPIPath, w.Code, w.Body)
	}
}

// Another method answers 405 method-not-allowed naming GET and HEAD.
func TestOpenAPIDocumentRefusesOtherMethods(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	w := c.do("acme", http.MethodPost, openAPIPath, "application/json", "{}")
	var p fulfilhttp.Problem
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" ||
		json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Type != fulfilhttp.ProblemTypeBase+"method-not-allowed" {
		t.Fatalf("POST %s: %d Allow %q %s; want 405 method-not-allowed with Allow: GET, HEAD",
			openAPIPath, w.Code, w.Header().Get("Allow"), w.Body)
	}
}

// Paths beside the document still go to the next handler.
func TestOpenAPIDocumentPathIsExact(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	for _, path := range []string{openAPIPath + "/x", openAPIPath + "x", "/api/fulfilment/v3/openapi.json"} {
		if w := c.do("acme", http.MethodGet, path, "", ""); w.Code != http.StatusTeapot {
			t.Errorf("GET %s: %d; want it passed on to the next handler", path, w.Code)
		}
	}
}
