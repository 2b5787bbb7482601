package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
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
