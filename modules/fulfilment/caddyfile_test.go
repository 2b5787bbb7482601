package fulfilment

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"go.uber.org/zap"
)

func TestParseGlobalOption(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantDir string
		wantErr string
	}{
		{name: "empty block", input: "fulfilment"},
		{name: "data dir", input: "fulfilment {\n data_dir /var/lib/fg\n}", wantDir: "/var/lib/fg"},
		{name: "data dir missing arg", input: "fulfilment {\n data_dir\n}", wantErr: "wrong argument count"},
		{name: "data dir extra arg", input: "fulfilment {\n data_dir a b\n}", wantErr: "wrong argument count"},
		{name: "argument on option", input: "fulfilment x", wantErr: "wrong argument count"},
		{name: "unknown option", input: "fulfilment {\n colour blue\n}", wantErr: `unknown fulfilment option "colour"`},
		{name: "encryption key missing arg", input: "fulfilment {\n encryption_key\n}", wantErr: "wrong argument count"},
		{name: "encryption key twice", input: "fulfilment {\n encryption_key {env.A}\n encryption_key {env.B}\n}", wantErr: "given twice"},
		{name: "data dir twice", input: "fulfilment {\n data_dir /a\n data_dir /b\n}", wantErr: "data_dir given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := caddyfile.NewTestDispenser(tt.input)
			v, err := parseGlobalOption(d, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			app := v.(httpcaddyfile.App)
			if app.Name != "fulfilment" {
				t.Fatalf("app name %q", app.Name)
			}
			var got App
			if err := json.Unmarshal(app.Value, &got); err != nil {
				t.Fatal(err)
			}
			if got.DataDir != tt.wantDir {
				t.Fatalf("data_dir = %q, want %q", got.DataDir, tt.wantDir)
			}
		})
	}
}

func TestParseGlobalOptionOnlyOnce(t *testing.T) {
	d := caddyfile.NewTestDispenser("fulfilment")
	if _, err := parseGlobalOption(d, httpcaddyfile.App{Name: "fulfilment"}); err == nil {
		t.Fatal("a second fulfilment option was accepted")
	}
}

// The app refuses an encryption key it cannot use, and one whose
// environment variable is unset: it would otherwise start unencrypted.
func TestProvisionEncryptionKey(t *testing.T) {
	t.Setenv("FG_TEST_ENC_KEY", "Ire2Jld7Pg7EREXaqqLtq9N2NcQRVR8a3yj-wlRXlO0")
	t.Setenv("FG_TEST_SHORT_KEY", "c2hvcnQ")
	for value, want := range map[string]string{
		"{env.FG_TEST_ENC_KEY}":     "",
		"{env.FG_TEST_UNSET_KEY}":   "environment variable",
		"{env.FG_TEST_SHORT_KEY}":   "16, 24 or 32",
		"not a key, just some text": "16, 24 or 32",
	} {
		a := &App{EncryptionKey: value, logger: zap.NewNop()}
		err := a.provisionEncryption()
		if want == "" {
			if err != nil || len(a.encKey) != 32 {
				t.Errorf("%q: %v, key of %d bytes; want a 32-byte key", value, err, len(a.encKey))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error about %q", value, err, want)
		}
	}
}
