package caddyfileargs

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// parse runs read on every option of a block "b { ... }" and returns the
// first error.
func parse(src string, read func(d *caddyfile.Dispenser) error) error {
	d := caddyfile.NewTestDispenser(src)
	d.Next()
	for d.NextBlock(0) {
		if err := read(d); err != nil {
			return err
		}
	}
	return nil
}

func TestOptionsTakeTheirValueOnce(t *testing.T) {
	var s string
	var dur caddy.Duration
	var n int
	var f bool
	for _, tc := range []struct {
		name, src string
		read      func(d *caddyfile.Dispenser) error
		wantErr   string // "" : accepted
	}{
		{"string", "b {\n s x\n}", func(d *caddyfile.Dispenser) error { s = ""; return String(d, &s) }, ""},
		{"string twice", "b {\n s x\n s y\n}", func(d *caddyfile.Dispenser) error { return String(d, &s) }, "s given twice"},
		{"string empty", "b {\n s \"\"\n}", func(d *caddyfile.Dispenser) error { s = ""; return String(d, &s) }, "must not be empty"},
		{"string two values", "b {\n s x y\n}", func(d *caddyfile.Dispenser) error { s = ""; return String(d, &s) }, "wrong argument count"},
		{"duration", "b {\n t 5s\n}", func(d *caddyfile.Dispenser) error { dur = 0; return Duration(d, &dur) }, ""},
		{"duration twice", "b {\n t 5s\n t 6s\n}", func(d *caddyfile.Dispenser) error { return Duration(d, &dur) }, "t given twice"},
		{"duration zero", "b {\n t 0s\n}", func(d *caddyfile.Dispenser) error { dur = 0; return Duration(d, &dur) }, "t must be positive"},
		{"duration nonsense", "b {\n t soon\n}", func(d *caddyfile.Dispenser) error { dur = 0; return Duration(d, &dur) }, "invalid duration"},
		{"int", "b {\n n 3\n}", func(d *caddyfile.Dispenser) error { n = 0; return PositiveInt(d, &n) }, ""},
		{"int twice", "b {\n n 3\n n 4\n}", func(d *caddyfile.Dispenser) error { return PositiveInt(d, &n) }, "n given twice"},
		{"int negative", "b {\n n -3\n}", func(d *caddyfile.Dispenser) error { n = 0; return PositiveInt(d, &n) }, "n must be a positive integer"},
		{"flag", "b {\n f\n}", func(d *caddyfile.Dispenser) error { f = false; return Flag(d, &f) }, ""},
		{"flag twice", "b {\n f\n f\n}", func(d *caddyfile.Dispenser) error { return Flag(d, &f) }, "f given twice"},
		{"flag with a value", "b {\n f yes\n}", func(d *caddyfile.Dispenser) error { f = false; return Flag(d, &f) }, "wrong argument count"},
	} {
		s, dur, n, f = "", 0, 0, false
		err := parse(tc.src, tc.read)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}
