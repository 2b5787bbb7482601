package transfer_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/storage/transfer"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

var deliveredAt = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// deliveredRecord is a delivered delivery's record (JSON, which every
// gateway reads), due at the time it was delivered.
func deliveredRecord(id, partner, sub string, at time.Time) []byte {
	return fmt.Appendf(nil, `{"id":%q,"sub":%q,"partner":%q,"ev":{"event":"shipment-shipped","identifier":"S-%s"},`+
		`"url":"https://receiver.example/hooks","n":1,"created":%q,"due":%q,"log":[{"at":%q,"attempt":1,"status":204,"latencyNs":1200000}]}`,
		id, sub, partner, id, at.Add(-time.Second).Format(time.RFC3339Nano), at.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
}

// deliveredExport is the export of a Badger store holding partners a and
// b, a subscription of each, and two delivered deliveries of sub_a.
func deliveredExport(t *testing.T) []byte {
	t.Helper()
	b := openBadger(t, t.TempDir())
	for _, p := range []string{"partner-a", "partner-b"} {
		if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: p, WebhookKey: "k"}); err != nil {
			t.Fatal(err)
		}
		_, _, err := b.Webhooks.CreateSubscription(t.Context(), webhooks.Subscription{ID: "sub_" + p[len(p)-1:], PartnerID: p,
			NotificationURL: "https://receiver.example/hooks", Event: "shipment-shipped", CreatedAt: deliveredAt}, 10)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range []string{"whd_1", "whd_2"} {
		at := deliveredAt.Add(time.Duration(i) * time.Minute)
		queued := webhooks.QueueEntry{Pos: webhooks.SchedulePos(deliveredAt, id), ID: id, PartnerID: "partner-a", SubscriptionID: "sub_a",
			Record: deliveredRecord(id, "partner-a", "sub_a", deliveredAt)}
		if err := b.Webhooks.Enqueue([]webhooks.QueueEntry{queued}, nil); err != nil {
			t.Fatal(err)
		}
		kept := queued
		kept.Pos, kept.Record = webhooks.SchedulePos(at, id), deliveredRecord(id, "partner-a", "sub_a", at)
		done := []bool{false}
		if err := b.Webhooks.Settle([]webhooks.Settlement{{Pos: queued.Pos, Kind: webhooks.SettleDone, Entry: kept, Keep: 10}}, done); err != nil || !done[0] {
			t.Fatalf("settling %s: %v", id, err)
		}
	}
	var out bytes.Buffer
	if _, err := transfer.Export(&out, storagetest.Stores(b), "badger", time.Now()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// deliveredLines are the indexes of stream's delivered lines.
func deliveredLines(lines []string) []int {
	var at []int
	for i, l := range lines {
		if strings.HasPrefix(l, `{"type":"delivered"`) {
			at = append(at, i)
		}
	}
	return at
}

// editDelivered is stream with its first delivered line changed by edit
// (the end line's counts still hold).
func editDelivered(t *testing.T, stream []byte, edit func(l map[string]any)) string {
	t.Helper()
	lines := strings.SplitAfter(string(stream), "\n")
	at := deliveredLines(lines)
	if len(at) == 0 {
		t.Fatalf("the export has no delivered line:\n%s", stream)
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(lines[at[0]]), &l); err != nil {
		t.Fatal(err)
	}
	edit(l)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	lines[at[0]] = string(b) + "\n"
	return strings.Join(lines, "")
}

// importCounting imports stream into a fresh Badger store and returns the
// error and how many partners and subscriptions with delivered records
// the store holds after.
func importCounting(t *testing.T, stream string) (err error, partners, delivered int) {
	t.Helper()
	b := openBadger(t, t.TempDir())
	_, _, err = transfer.Import(strings.NewReader(stream), storagetest.Stores(b))
	ps, perr := b.Tokens.Partners()
	subs, serr := b.Webhooks.DeliveredSubscriptions()
	if perr != nil || serr != nil {
		t.Fatal(perr, serr)
	}
	return err, len(ps), len(subs)
}

func TestExportWritesTheDeliveredLogSortedAndImportRestoresIt(t *testing.T) {
	stream := deliveredExport(t)
	lines := strings.SplitAfter(string(stream), "\n")
	at := deliveredLines(lines)
	if len(at) != 2 {
		t.Fatalf("the export has %d delivered lines, want the 2 delivered deliveries:\n%s", len(at), stream)
	}
	if !strings.Contains(lines[at[0]], `"id":"whd_1"`) || !strings.Contains(lines[at[1]], `"id":"whd_2"`) {
		t.Errorf("delivered lines out of order: want the earlier delivery (whd_1) first:\n%s%s", lines[at[0]], lines[at[1]])
	}
	b := openBadger(t, t.TempDir())
	if _, _, err := transfer.Import(bytes.NewReader(stream), storagetest.Stores(b)); err != nil {
		t.Fatalf("Import: %v", err)
	}
	var got []string
	err := b.Webhooks.ScanDelivered("sub_a", func(v []byte) (bool, error) { got = append(got, string(v)); return true, nil })
	want := []string{string(deliveredRecord("whd_2", "partner-a", "sub_a", deliveredAt.Add(time.Minute))),
		string(deliveredRecord("whd_1", "partner-a", "sub_a", deliveredAt))}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the imported delivery log of sub_a = %q, %v; want the records as delivered, latest first: %q", got, err, want)
	}
}

func TestVersionTwoStreamsStillImport(t *testing.T) {
	stream := string(sampleExport(t))
	if !strings.Contains(stream, `"version":3`) {
		t.Fatalf("the export's header is not version 3 (the version that carries the delivery log):\n%s", stream)
	}
	if err, partners := importInto(t, []byte(withVersion(stream, 2))); err != nil || partners != 1 {
		t.Fatalf("a version 2 stream: Import = %v with %d partners, want it imported", err, partners)
	}
}

func TestImportRefusesDeliveredLinesNoGatewayWrites(t *testing.T) {
	good := deliveredExport(t)
	b64 := base64.StdEncoding.EncodeToString
	otherPartners := deliveredRecord("whd_1", "partner-b", "sub_a", deliveredAt)
	lines := strings.SplitAfter(string(good), "\n")
	at := deliveredLines(lines)
	if len(at) != 2 {
		t.Fatalf("the export has %d delivered lines, want 2:\n%s", len(at), good)
	}
	twice := strings.Replace(string(good), lines[at[1]], lines[at[0]], 1)
	for name, c := range map[string]struct{ stream, want string }{
		"delivered in a version 2 export": {withVersion(string(good), 2), "version 2 export holds no delivered records"},
		"unknown subscription": {editDelivered(t, good, func(l map[string]any) {
			l["subscription"] = "sub_x"
			l["record"] = b64(deliveredRecord("whd_1", "partner-a", "sub_x", deliveredAt))
		}), `subscription "sub_x"`},
		"empty id": {editDelivered(t, good, func(l map[string]any) {
			l["id"] = ""
			l["pos"] = b64(webhooks.SchedulePos(deliveredAt, ""))
			l["record"] = b64(deliveredRecord("", "partner-a", "sub_a", deliveredAt))
		}), "no id"},
		"short position":   {editDelivered(t, good, func(l map[string]any) { l["pos"] = b64([]byte{1, 2, 3}) }), "position"},
		"another position": {editDelivered(t, good, func(l map[string]any) { l["pos"] = b64(webhooks.SchedulePos(deliveredAt.Add(time.Hour), "whd_1")) }), "position"},
		"no position":      {editDelivered(t, good, func(l map[string]any) { delete(l, "pos") }), "position"},
		"line names another subscription than its record": {editDelivered(t, good, func(l map[string]any) { l["subscription"] = "sub_b" }), "sub_b"},
		"line names another partner than its record":      {editDelivered(t, good, func(l map[string]any) { l["partner"] = "partner-b" }), "partner-b"},
		"another partner's delivery in the log": {editDelivered(t, good, func(l map[string]any) {
			l["partner"] = "partner-b"
			l["record"] = b64(otherPartners)
		}), "partner-b"},
		"a record that does not decode": {editDelivered(t, good, func(l map[string]any) { l["record"] = b64([]byte("garbage")) }), "malformed delivery record"},
		"the same record twice":         {twice, "twice"},
	} {
		err, partners, delivered := importCounting(t, c.stream)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Import = %v, want an error saying %q", name, err, c.want)
		}
		if partners != 0 || delivered != 0 {
			t.Errorf("%s: the refused import stored %d partners and delivered records of %d subscriptions, want none", name, partners, delivered)
		}
	}
	if err, partners, delivered := importCounting(t, string(good)); err != nil || partners != 2 || delivered != 1 {
		t.Fatalf("the undamaged stream: Import = %v with %d partners and delivered records of %d subscriptions, want it imported", err, partners, delivered)
	}
}
