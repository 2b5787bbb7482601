// Package docs holds the gateway's OpenAPI document, openapi.yaml beside the
// partners' and operators' guides, embedded so that the gateway serves the
// very document that is published.
package docs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

// OpenAPIYAML is openapi.yaml: the OpenAPI 3.1 description of the Fulfilment
// Partner Interface as the gateway serves it (token endpoint, subscriptions,
// resource paths, errors, webhooks).
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON returns the document as JSON, converted once.
var OpenAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("parsing openapi.yaml: %w", err)
	}
	b, err := json.Marshal(jsonValue(doc))
	if err != nil {
		return nil, fmt.Errorf("converting openapi.yaml to JSON: %w", err)
	}
	return b, nil
})

// jsonValue turns what the YAML decoder produced into values encoding/json
// accepts: mappings with non-string keys (a YAML key such as 200) get string
// keys.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonValue(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonValue(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonValue(e)
		}
		return v
	default:
		return v
	}
}
