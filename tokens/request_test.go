package tokens

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

const formCT = "application/x-www-form-urlencoded"

func TestParseTokenRequest(t *testing.T) {
	type want struct {
		status int
		code   string
		id     string
		secret string
		basic  bool
	}
	cases := []struct {
		name       string
		auth, ct   string
		body       string
		want       want
		challenged bool
	}{
		{"basic, empty body", basic("c1", "s e+c/r:t"), "", "", want{200, "", "c1", "s e+c/r:t", true}, false},
		{"basic, grant in body", basic("c1", "s"), formCT, "grant_type=client_credentials", want{200, "", "c1", "s", true}, false},
		{"basic, lower-case scheme", strings.Replace(basic("c1", "s"), "Basic", "basic", 1), "", "", want{200, "", "c1", "s", true}, false},
		{"basic, raw (unescaped) colon in secret", "Basic " + base64.StdEncoding.EncodeToString([]byte("c1:a:b")), "", "", want{200, "", "c1", "a:b", true}, false},
		{"form", "", formCT + "; charset=utf-8", "grant_type=client_credentials&client_id=c1&client_secret=s%2B1", want{200, "", "c1", "s+1", false}, false},
		{"both forms", basic("c1", "s"), formCT, "grant_type=client_credentials&client_id=c1&client_secret=s", want{400, "invalid_request", "", "", false}, false},
		{"both forms, id only", basic("c1", "s"), formCT, "grant_type=client_credentials&client_id=c1", want{400, "invalid_request", "", "", false}, false},
		{"neither", "", "", "", want{401, "invalid_client", "", "", false}, true},
		{"form without grant", "", formCT, "client_id=c1&client_secret=s", want{400, "invalid_request", "", "", false}, false},
		{"form, other grant", "", formCT, "grant_type=password&client_id=c1&client_secret=s", want{400, "unsupported_grant_type", "", "", false}, false},
		{"basic, other grant", basic("c1", "s"), formCT, "grant_type=authorization_code", want{400, "unsupported_grant_type", "", "", false}, false},
		{"empty grant", "", formCT, "grant_type=&client_id=c1&client_secret=s", want{400, "invalid_request", "", "", false}, false},
		{"repeated id", "", formCT, "grant_type=client_credentials&client_id=c1&client_id=c2&client_secret=s", want{400, "invalid_request", "", "", false}, false},
		{"json body", "", "application/json", `{"grant_type":"client_credentials"}`, want{400, "invalid_request", "", "", false}, false},
		{"bad form", "", formCT, "grant_type=%zz", want{400, "invalid_request", "", "", false}, false},
		{"form missing secret", "", formCT, "grant_type=client_credentials&client_id=c1", want{401, "invalid_client", "", "", false}, false},
		{"basic not base64", "Basic !!!", "", "", want{401, "invalid_client", "", "", false}, true},
		{"basic no colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("c1")), "", "", want{401, "invalid_client", "", "", false}, true},
		{"basic empty secret", basic("c1", ""), "", "", want{401, "invalid_client", "", "", false}, true},
		{"basic bad escape", "Basic " + base64.StdEncoding.EncodeToString([]byte("c%zz:s")), "", "", want{401, "invalid_client", "", "", false}, true},
		{"bearer at token endpoint", "Bearer abc", "", "", want{401, "invalid_client", "", "", false}, true},
	}
	for _, c := range cases {
		req, err := ParseTokenRequest(c.auth, c.ct, []byte(c.body))
		if c.want.status == 200 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if req.ClientID != c.want.id || req.ClientSecret != c.want.secret || req.Basic != c.want.basic {
				t.Errorf("%s: got %+v", c.name, req)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted as %+v", c.name, req)
			continue
		}
		if err.Status != c.want.status || err.Code != c.want.code || err.Challenge != c.challenged {
			t.Errorf("%s: got %d %s challenge=%v, want %d %s %v", c.name, err.Status, err.Code, err.Challenge, c.want.status, c.want.code, c.challenged)
		}
		if strings.Contains(err.Description, "s%2B1") {
			t.Errorf("%s: description echoes input", c.name)
		}
	}
}

func TestParseBearer(t *testing.T) {
	good := map[string]string{
		"Bearer abc.def.ghi":  "abc.def.ghi",
		"bearer abc":          "abc",
		"BEARER   a-b_c~d+/=": "a-b_c~d+/=",
		"Bearer abc==":        "abc==",
	}
	for h, want := range good {
		if got, ok := ParseBearer(h); !ok || got != want {
			t.Errorf("%q: %q %v", h, got, ok)
		}
	}
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer  ", "Basic abc", "Bearerabc", "Bearer a b", "Bearer a=b",
		"Bearer ===", "Bearer a\x00", "Bearer " + strings.Repeat("a", MaxTokenLength+1), "Token abc"} {
		if got, ok := ParseBearer(h); ok {
			t.Errorf("%q accepted as %q", h, got)
		}
	}
}

// FuzzParseTokenRequest: never panics; a success always names a client and
// a secret; errors are RFC 6749 codes with 400 or 401.
func FuzzParseTokenRequest(f *testing.F) {
	f.Add(basic("c1", "s"), "", []byte(""))
	f.Add("", formCT, []byte("grant_type=client_credentials&client_id=c1&client_secret=s"))
	f.Add(basic("c1", "s"), formCT, []byte("grant_type=client_credentials&client_id=c1"))
	f.Add("Basic Yzox", "text/plain", []byte("x"))
	f.Add("Basic", formCT, []byte("grant_type=%zz;"))
	f.Fuzz(func(t *testing.T, auth, ct string, body []byte) {
		req, err := ParseTokenRequest(auth, ct, body)
		if err != nil {
			switch err.Code {
			case "invalid_request", "unsupported_grant_type":
				if err.Status != 400 {
					t.Fatalf("%s with %d", err.Code, err.Status)
				}
			case "invalid_client":
				if err.Status != 401 {
					t.Fatalf("invalid_client with %d", err.Status)
				}
			default:
				t.Fatalf("unknown code %q", err.Code)
			}
			return
		}
		if req.ClientID == "" || req.ClientSecret == "" {
			t.Fatalf("success without credentials: %+v", req)
		}
	})
}

// FuzzParseBearer: never panics; a token it returns is non-empty token68,
// bounded in length, and a suffix of the header.
func FuzzParseBearer(f *testing.F) {
	f.Add("Bearer abc.def.ghi")
	f.Add("bearer  x==")
	f.Add("Bearer =")
	f.Add("Basic abc")
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := ParseBearer(h)
		if !ok {
			return
		}
		if tok == "" || len(tok) > MaxTokenLength || !strings.HasSuffix(h, tok) {
			t.Fatalf("bad token %q from %q", tok, h)
		}
		for i := 0; i < len(tok); i++ {
			if !isToken68(tok[i]) && tok[i] != '=' {
				t.Fatalf("byte %q in token", tok[i])
			}
		}
	})
}
