package webhooks

import "testing"

// A user agent is sent as one header line on every delivery: a line break,
// another control character or DEL is refused; printable text, spaces and
// non-ASCII letters are not.
func TestCheckUserAgent(t *testing.T) {
	for ua, refused := range map[string]bool{
		"Fulfilgate-Webhooks/1":   false,
		"Acme Hooks/2 (ops@acme)": false,
		"Läger/1":                 false,
		"":                        false,
		"a\r\nX-Evil: 1":          true,
		"a\nb":                    true,
		"bad\x01agent":            true,
		"tab\tin":                 true,
		"a\x7fb":                  true,
	} {
		if err := CheckUserAgent(ua); (err != nil) != refused {
			t.Errorf("CheckUserAgent(%q) = %v; want refused %v", ua, err, refused)
		}
	}
}
