package docs_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/internal/errorregistrytest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

func loadOpenAPI(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("loading the OpenAPI document: %v", err)
	}
	return doc
}

// The document is a valid OpenAPI 3.1 document.
func TestOpenAPIDocumentIsValidOpenAPI31(t *testing.T) {
	doc := loadOpenAPI(t, docs.OpenAPIYAML)
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi: %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document does not validate: %v", err)
	}
}

// The JSON the gateway serves is the YAML document, converted: it loads,
// validates, and has every path and webhook of the YAML.
func TestOpenAPIJSONIsTheYAMLDocument(t *testing.T) {
	b, err := docs.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatal("OpenAPIJSON is not valid JSON")
	}
	fromJSON := loadOpenAPI(t, b)
	if err := fromJSON.Validate(context.Background()); err != nil {
		t.Fatalf("the JSON form does not validate: %v", err)
	}
	fromYAML := loadOpenAPI(t, docs.OpenAPIYAML)
	if got, want := fromJSON.Paths.InMatchingOrder(), fromYAML.Paths.InMatchingOrder(); !slices.Equal(got, want) {
		t.Fatalf("JSON paths %v, want the YAML's %v", got, want)
	}
	if len(fromJSON.Webhooks) != len(fromYAML.Webhooks) || len(fromJSON.Webhooks) == 0 {
		t.Fatalf("JSON has %d webhooks, the YAML %d", len(fromJSON.Webhooks), len(fromYAML.Webhooks))
	}
}

// The document describes every operation the gateway serves itself.
func TestOpenAPIDocumentCoversTheGatewaysOperations(t *testing.T) {
	doc := loadOpenAPI(t, docs.OpenAPIYAML)
	for _, op := range []struct{ path, method string }{
		{"/api/auth/token", "POST"},
		{"/api/fulfilment/v4/subscriptions", "GET"},
		{"/api/fulfilment/v4/subscriptions", "POST"},
		{"/api/fulfilment/v4/subscriptions/{id}", "GET"},
		{"/api/fulfilment/v4/subscriptions/{id}", "DELETE"},
		{"/api/fulfilment/v4/openapi.json", "GET"},
		{"/api/fulfilment/{version}/{resource}", "GET"},
		{"/api/fulfilment/{version}/{resource}/{id}", "GET"},
		{"/{version}/products", "GET"},
	} {
		item := doc.Paths.Value(op.path)
		if item == nil || item.GetOperation(op.method) == nil {
			t.Errorf("the document has no %s %s", op.method, op.path)
		}
	}
	token := doc.Paths.Value("/api/auth/token").Post
	if token.Security == nil || len(*token.Security) != 2 {
		t.Errorf("the token endpoint should allow two client authentication styles (Basic, or the form body), got %v", token.Security)
	}
}

// Every event a partner can subscribe to has a webhook whose payload schema
// accepts the body the gateway sends for it, and refuses another event's.
func TestOpenAPIWebhooksDescribeEveryEventsPayload(t *testing.T) {
	doc := loadOpenAPI(t, docs.OpenAPIYAML)
	if len(doc.Webhooks) != len(webhooks.EventNames) {
		t.Errorf("%d webhooks in the document, want one per event name (%d)", len(doc.Webhooks), len(webhooks.EventNames))
	}
	for i, name := range webhooks.EventNames {
		item := doc.Webhooks[name]
		if item == nil || item.Post == nil {
			t.Errorf("no webhook %q with a post operation", name)
			continue
		}
		schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
		body := webhooks.Event{Name: name, Identifier: "X-1"}.Payload().Body()
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("webhook %q: the gateway's body %s does not match the schema: %v", name, body, err)
		}
		other := webhooks.EventNames[(i+1)%len(webhooks.EventNames)]
		json.Unmarshal(webhooks.Event{Name: other, Identifier: "X-1"}.Payload().Body(), &v)
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err == nil {
			t.Errorf("webhook %q's schema accepts the payload of %q", name, other)
		}
		for _, header := range []string{"x-hook-signature", "x-hook-id", "x-hook-attempt", "x-hook-timestamp"} {
			if p := item.Post.Parameters.GetByInAndName("header", header); p == nil || !p.Required {
				t.Errorf("webhook %q does not declare the required header %s", name, header)
			}
		}
	}
	events := doc.Components.Schemas["EventName"].Value.Enum
	if len(events) != len(webhooks.EventNames) {
		t.Errorf("EventName lists %v, want %v", events, webhooks.EventNames)
	}
	for i, e := range events {
		if i < len(webhooks.EventNames) && e != webhooks.EventNames[i] {
			t.Errorf("EventName[%d] = %v, want %q", i, e, webhooks.EventNames[i])
		}
	}
}

// The ProblemType enumeration is exactly the entries of the error registry
// (docs/partners/errors.md), whose entries the modules/fulfilhttp tests hold to the
// kinds the code emits.
func TestOpenAPIProblemTypesAreTheRegistry(t *testing.T) {
	doc := loadOpenAPI(t, docs.OpenAPIYAML)
	var inDoc []string
	for _, v := range doc.Components.Schemas["ProblemType"].Value.Enum {
		s, _ := v.(string)
		kind, ok := strings.CutPrefix(s, errorregistrytest.TypeBase)
		if !ok {
			t.Errorf("problem type %q does not point at the registry %s", s, errorregistrytest.TypeBase)
		}
		inDoc = append(inDoc, kind)
	}
	registry := errorregistrytest.Kinds(t, "partners/errors.md")
	slices.Sort(inDoc)
	slices.Sort(registry)
	if !slices.Equal(inDoc, registry) {
		t.Fatalf("ProblemType enumerates %v, the registry has %v", inDoc, registry)
	}
}
