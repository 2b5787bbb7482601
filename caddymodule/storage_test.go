package caddymodule

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// `storage <backend>` in the fulfilment option becomes the backend's module
// object under "storage", named by "backend"; mistakes are refused with the
// reason.
func TestParseStorageOption(t *testing.T) {
	for _, tt := range []struct {
		input, want, wantErr string
	}{
		{input: "fulfilment {\n storage badger\n}", want: `{"backend":"badger"}`},
		{input: "fulfilment {\n data_dir /d\n}", want: ``},
		{input: "fulfilment {\n storage\n}", wantErr: "wrong argument count"},
		{input: "fulfilment {\n storage badger /d\n}", wantErr: "wrong argument count"},
		{input: "fulfilment {\n storage badger {\n dir /d\n }\n}", wantErr: "takes no options"},
		{input: "fulfilment {\n storage nosuch\n}", wantErr: "fulfilment.storage.nosuch"},
		{input: "fulfilment {\n storage badger\n storage badger\n}", wantErr: "storage given twice"},
	} {
		v, err := parseGlobalOption(caddyfile.NewTestDispenser(tt.input), nil)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tt.input, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.input, err)
			continue
		}
		var got App
		if err := json.Unmarshal(v.(httpcaddyfile.App).Value, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.StorageRaw) != tt.want {
			t.Errorf("%q: storage %s, want %s", tt.input, got.StorageRaw, tt.want)
		}
	}
}

// The app loads the storage module its configuration names, Badger by
// default, and refuses a backend that does not exist.
func TestProvisionStorage(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	for raw, want := range map[string]string{
		"":                         "",
		`{"backend":"badger"}`:     "",
		`{"backend":"postgresql"}`: "fulfilment.storage.postgresql",
	} {
		a := &App{}
		if raw != "" {
			a.StorageRaw = json.RawMessage(raw)
		}
		err := a.provisionStorage(ctx)
		if want != "" {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("storage %s: %v, want an error naming %s", raw, err, want)
			}
			continue
		}
		if _, ok := a.storage.(*BadgerStorage); err != nil || !ok {
			t.Errorf("storage %q: %v, backend %T; want Badger", raw, err, a.storage)
		}
	}
}
