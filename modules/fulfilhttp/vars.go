package fulfilhttp

import "fmt"

// Text is a variable's text, stored in Caddy's vars map by pointer: a
// pointer in an interface value needs no allocation of its own, so a
// handler can keep a request's variables in one allocation with the rest
// of its per-request state. Placeholders ({http.vars.*}) and the vars
// matcher read it through String, as they read any fmt.Stringer.
type Text string

// String returns the text.
func (t *Text) String() string { return string(*t) }

// VarText returns a variable's value as text: the string itself, or what
// a fmt.Stringer (Text, VerifiedPartner) prints; "" for anything else.
func VarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return ""
}
