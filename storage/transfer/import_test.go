package transfer_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/storage/transfer"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// sampleExport is the export of a Badger store holding a pepper and one
// partner.
func sampleExport(t *testing.T) []byte {
	t.Helper()
	b := openBadger(t, t.TempDir())
	if _, err := b.Tokens.Pepper(func() ([]byte, error) { return []byte("a pepper"), nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: "partner-a", WebhookKey: "k"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := transfer.Export(&out, storagetest.Stores(b), "badger", time.Now()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// withVersion is stream with its header's version set to v.
func withVersion(stream string, v int) string {
	return strings.Replace(stream, fmt.Sprintf(`"version":%d`, transfer.Version), fmt.Sprintf(`"version":%d`, v), 1)
}

// importInto imports stream into a fresh Badger store and returns the
// error and how many partners the store holds after.
func importInto(t *testing.T, stream []byte) (error, int) {
	t.Helper()
	b := openBadger(t, t.TempDir())
	_, _, err := transfer.Import(bytes.NewReader(stream), storagetest.Stores(b))
	ps, perr := b.Tokens.Partners()
	if perr != nil {
		t.Fatal(perr)
	}
	return err, len(ps)
}

func TestImportRefusesADamagedStreamAndWritesNothing(t *testing.T) {
	good := sampleExport(t)
	lines := strings.SplitAfter(string(good), "\n")
	cut := strings.Join(lines[:len(lines)-2], "") // without the end line
	for name, c := range map[string]struct{ stream, want string }{
		"cut short":     {cut, "no end line"},
		"a line lost":   {strings.Replace(string(good), lines[2], "", 1), "counts"},
		"newer format":  {withVersion(string(good), transfer.Version+1), fmt.Sprintf("format version %d", transfer.Version+1)},
		"not an export": {`{"type":"partner","id":"x"}` + "\n", "want the header"},
		"unknown line":  {strings.Replace(string(good), lines[2], `{"type":"wormhole"}`+"\n", 1), `unknown line type "wormhole"`},
		"not JSON":      {strings.Replace(string(good), lines[2], "partner-a\n", 1), "not a JSON object"},
		"empty":         {"", "empty"},
	} {
		err, partners := importInto(t, []byte(c.stream))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Import = %v, want an error saying %q", name, err, c.want)
		}
		if partners != 0 {
			t.Errorf("%s: the refused import stored %d partners, want none", name, partners)
		}
	}
	if err, partners := importInto(t, good); err != nil || partners != 1 {
		t.Fatalf("the undamaged stream: Import = %v with %d partners, want it imported", err, partners)
	}
}

func TestExportNeverCreatesAPepper(t *testing.T) {
	b := openBadger(t, t.TempDir())
	var out bytes.Buffer
	if _, err := transfer.Export(&out, storagetest.Stores(b), "badger", time.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), `"type":"pepper"`) {
		t.Errorf("the export of an empty store has a pepper line:\n%s", out.String())
	}
	if _, err := b.Tokens.Pepper(func() ([]byte, error) { return []byte("generated now"), nil }); err != nil {
		t.Fatal(err)
	}
	if p, _ := b.Tokens.Pepper(nil); string(p) != "generated now" {
		t.Errorf("after the export the store's pepper is %q, want none stored by the export", p)
	}
}

func TestImportRefusesAuditRecordsNoGatewayWrites(t *testing.T) {
	good := sampleExport(t)
	lines := strings.SplitAfter(string(good), "\n")
	endAt := len(lines) - 2 // the end line; the last element is empty
	with := func(stream, line string) string {
		return strings.Replace(stream, lines[endAt], line+"\n"+lines[endAt], 1)
	}
	const valid = `{"type":"portal_audit","at":"2026-11-01T10:00:00Z","partner":"partner-a","actor":"operator","action":"create_link","outcome":"ok"}`
	for name, c := range map[string]struct{ stream, want string }{
		"audit in a version 1 export": {with(withVersion(string(good), 1), valid), "version 1 export holds no audit records"},
		"no time":                     {with(string(good), strings.Replace(valid, `"at":"2026-11-01T10:00:00Z",`, "", 1)), "without a time"},
		"no partner":                  {with(string(good), strings.Replace(valid, `"partner":"partner-a",`, "", 1)), "without a partner"},
		"unknown actor":               {with(string(good), strings.Replace(valid, `"actor":"operator"`, `"actor":"root"`, 1)), `actor "root"`},
		"no action":                   {with(string(good), strings.Replace(valid, `"action":"create_link",`, "", 1)), "without an action"},
		"not an audit record":         {with(string(good), `{"type":"portal_audit","at":"yesterday"}`), "portal_audit"},
	} {
		err, partners := importInto(t, []byte(c.stream))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Import = %v, want an error saying %q", name, err, c.want)
		}
		if partners != 0 {
			t.Errorf("%s: the refused import stored %d partners, want none", name, partners)
		}
	}
}

func TestOlderVersionOneStreamsStillImport(t *testing.T) {
	v1 := withVersion(string(sampleExport(t)), 1)
	if err, partners := importInto(t, []byte(v1)); err != nil || partners != 1 {
		t.Fatalf("a version 1 stream: Import = %v with %d partners, want it imported", err, partners)
	}
}
