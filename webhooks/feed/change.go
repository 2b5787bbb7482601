// Package feed reads the warehouse system's change feed and turns its changes
// into partner events (decisions §7). A Reader polls the feed over HTTP; the
// same Processor also serves pushed changes. Events are queued durably through
// a Publisher (webhooks.Service) in the transaction that also records which
// changes are done (Store.PageWrites), so a change is never turned into
// events twice. The package imports neither Caddy nor a database driver.
package feed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Change is one decoded upstream change. Fields are the canonical ones of
// decisions §7; Mapping.Fields says which JSON names they are read from.
type Change struct {
	ID       string
	Partner  string
	Kind     string
	Entity   string
	Change   string
	Status   string
	Shipment string
	Products []string
	At       time.Time // zero when absent or unparseable

	// Raw is the change as received (for the rejected list).
	Raw json.RawMessage
	// Invalid, if not empty, says why the change could not be decoded
	// (a field of the wrong type, not an object); such a change is
	// rejected, never a reason to fail the whole page.
	Invalid string
}

// Page is one decoded answer of the feed.
type Page struct {
	Changes []Change
	Next    string
	HasNext bool // the page carried a "next" cursor
}

// ErrMalformedPage wraps every reason a page as a whole cannot be used.
var ErrMalformedPage = errors.New("malformed feed page")

// WrongURLHint ends the errors of answers that are not a feed at all: a
// JSON object without "changes", an HTML or XML document, a 404.
const WrongURLHint = `the feed URL is probably wrong: it must answer {"changes":[...],"next":"<cursor>"}`

// maxIDLen bounds change ids (they become storage keys).
const maxIDLen = 512

// DecodePage decodes a feed answer. It fails (ErrMalformedPage) only when the
// page itself is unusable: not JSON, not an object, "changes" missing, null
// or not an array, "next" neither string nor number, or changes without a
// next cursor. A change
// that cannot be decoded is returned with Invalid set.
func DecodePage(body []byte, m *Mapping) (Page, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return Page{}, fmt.Errorf("%w: %v", ErrMalformedPage, err)
	}
	if top == nil {
		return Page{}, fmt.Errorf("%w: not a JSON object", ErrMalformedPage)
	}
	raw, ok := top["changes"]
	if !ok || isNull(raw) {
		return Page{}, fmt.Errorf("%w: no \"changes\" array; %s", ErrMalformedPage, WrongURLHint)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return Page{}, fmt.Errorf("%w: \"changes\" is not an array", ErrMalformedPage)
	}
	p := Page{Changes: make([]Change, len(items))}
	for i, it := range items {
		p.Changes[i] = DecodeChange(it, m)
	}
	if raw, ok := top["next"]; ok && !isNull(raw) {
		next, err := decodeCursor(raw)
		if err != nil {
			return Page{}, fmt.Errorf("%w: %v", ErrMalformedPage, err)
		}
		p.Next, p.HasNext = next, next != ""
	}
	if len(p.Changes) > 0 && !p.HasNext {
		return Page{}, fmt.Errorf("%w: %d changes but no \"next\" cursor", ErrMalformedPage, len(p.Changes))
	}
	return p, nil
}

func decodeCursor(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", err
		}
		return n.String(), nil
	}
	return "", fmt.Errorf("\"next\" is not a string")
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// DecodeChange decodes one change leniently: unknown fields are ignored and a
// wrong type sets Invalid instead of failing.
func DecodeChange(raw json.RawMessage, m *Mapping) Change {
	c := Change{Raw: raw}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		c.Invalid = "not a JSON object"
		return c
	}
	f := &m.fields
	var bad []string
	str := func(name string, dst *string) {
		v, ok := obj[name]
		if !ok || isNull(v) {
			return
		}
		if err := json.Unmarshal(v, dst); err != nil {
			bad = append(bad, fmt.Sprintf("field %q: want a string", name))
		}
	}
	str(f.ID, &c.ID)
	str(f.Partner, &c.Partner)
	str(f.Kind, &c.Kind)
	str(f.Entity, &c.Entity)
	str(f.Change, &c.Change)
	str(f.Status, &c.Status)
	str(f.Shipment, &c.Shipment)
	if v, ok := obj[f.Products]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &c.Products); err != nil {
			bad = append(bad, fmt.Sprintf("field %q: want an array of strings", f.Products))
			c.Products = nil
		}
	}
	var at string
	str(f.At, &at)
	if at != "" {
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			c.At = t
		}
	}
	if len(bad) > 0 {
		c.Invalid = bad[0]
	}
	return c
}
