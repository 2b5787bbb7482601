package adminapi

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestAdminErrorIsASentence(t *testing.T) {
	for _, c := range []struct {
		in, want, not string
	}{
		{`caddy responded with error: HTTP 409: {"error":"partner partner-acme is defined in the configuration; change it there"}`,
			"Partner partner-acme is defined in the configuration; change it there. (HTTP 409 from the admin API at localhost:2019)", `{"error"`},
		{`caddy responded with error: HTTP 502: <html>bad gateway</html>`,
			"the admin API at localhost:2019 answered HTTP 502: <html>bad gateway</html>", ""},
		{`performing request: dial tcp 127.0.0.1:2019: connect: connection refused`,
			"nothing answers at localhost:2019 (the default): is the gateway running? use --address or --config to name its admin address", "dial tcp"},
	} {
		got := adminError(errors.New(c.in), "localhost:2019", "the default").Error()
		if got != c.want || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("adminError(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestPrintTableListsItemsUnderAHeader(t *testing.T) {
	var out bytes.Buffer
	err := printTable(&out, []byte(`{"deliveries":[
		{"id":"whd_1","event":"label-status","attempts":3,"test":true,"log":[{"attempt":1},{"attempt":2}]},
		{"id":"whd_2","event":"shipment-shipped","attempts":1,"deadAt":"2026-11-22T03:09:38Z"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID EVENT ATTEMPTS TEST LOG DEADAT" ||
		strings.Join(strings.Fields(lines[1]), " ") != "whd_1 label-status 3 true [2] -" ||
		strings.Join(strings.Fields(lines[2]), " ") != "whd_2 shipment-shipped 1 - - 2026-11-22T03:09:38Z" {
		t.Fatalf("table:\n%s\nwant a header of the fields in order, one row per delivery, - for a missing field, [n] for a list", out.String())
	}
}

func TestPrintTableShowsAnObjectFieldPerLine(t *testing.T) {
	var out bytes.Buffer
	if err := printTable(&out, []byte(`{"name":"wms","last_error":"feed answered 404:\tnot found","rejected":[],"lag_seconds":0.5}`)); err != nil {
		t.Fatal(err)
	}
	want := "name        wms\nlast_error  feed answered 404: not found\nrejected    [0]\nlag_seconds 0.5\n"
	if strings.Join(strings.Fields(out.String()), " ") != strings.Join(strings.Fields(want), " ") {
		t.Fatalf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}
