package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/storage/transfer"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// RunTransfer is the contract of a copy between two backends: the state
// exported from a backend of from, imported into an empty backend of to,
// exports as the same lines (but for the header's time and source); an
// import into a store that is not empty is refused and changes nothing.
func RunTransfer(t *testing.T, from, to Opener) {
	t.Run("transfer/export, import, export again gives the same state", func(t *testing.T) {
		src := from(t)
		fill(t, src)
		first := export(t, src, "from")
		dst := to(t)
		if _, _, err := transfer.Import(bytes.NewReader(first), stores{dst}); err != nil {
			t.Fatalf("Import into an empty store: %v", err)
		}
		reopened := dst.Reopen(t)
		second := export(t, reopened, "to")
		if a, b := body(first), body(second); a != b {
			t.Fatalf("the export of the imported store differs from the original:\n--- original\n%s\n--- after import\n%s", a, b)
		}
		for _, typ := range []string{`"pepper"`, `"partner"`, `"client"`, `"signing_key"`, `"static_webhook_key"`, `"subscription"`,
			`"delivery"`, `"dead_letter"`, `"delivered"`, `"feed"`, `"feed_seen"`, `"feed_rejected"`, `"portal_audit"`} {
			if !strings.Contains(string(first), `{"type":`+typ) {
				t.Errorf("the export has no %s line: the sample state should hold every kind", typ)
			}
		}
		if got, want := auditOf(t, reopened), sampleAudit(); !slices.EqualFunc(got, want, sameAudit) {
			t.Errorf("the imported audit log is\n%v\nwant the source's, with its times and order:\n%v", got, want)
		}
		for _, sub := range []string{"sub_1", "sub_2"} {
			if err := sameStrings(deliveredRecords(t, reopened, sub), deliveredRecords(t, src, sub)); err != nil {
				t.Errorf("the imported delivery log of %s (latest first) differs from the source's: %v", sub, err)
			}
		}
	})
	t.Run("transfer/the delivered records of a deleted subscription are left out", func(t *testing.T) {
		src := from(t)
		fill(t, src)
		_, _, err := src.Webhooks.CreateSubscription(ctx, webhooks.Subscription{ID: "sub_gone", PartnerID: "partner-made",
			NotificationURL: "https://receiver.example/gone", Event: "shipment-shipped", CreatedAt: t0}, 100)
		if err != nil {
			t.Fatal(err)
		}
		settleDelivered(t, src, "whd_gone", "partner-made", "sub_gone", t0.Add(time.Minute))
		if _, err := src.Webhooks.DeleteSubscription("partner-made", "sub_gone"); err != nil {
			t.Fatal(err)
		}
		dump := export(t, src, "from")
		if strings.Contains(string(dump), "sub_gone") {
			t.Fatalf("the export holds a line of the deleted subscription sub_gone (no partner can see its log, and the next sweep drops it):\n%s", dump)
		}
		if !strings.Contains(string(dump), `{"type":"delivered"`) {
			t.Fatalf("the export has no delivered line: want the records of the subscriptions that exist:\n%s", dump)
		}
		if _, _, err := transfer.Import(bytes.NewReader(dump), stores{to(t)}); err != nil {
			t.Fatalf("Import: %v", err)
		}
	})
	t.Run("transfer/an empty audit log exports no audit line and imports as empty", func(t *testing.T) {
		src := from(t)
		if err := src.Tokens.CreatePartner(tokens.PartnerRecord{ID: "partner-a", WebhookKey: "whk-a", Created: t0}); err != nil {
			t.Fatal(err)
		}
		dump := export(t, src, "from")
		if strings.Contains(string(dump), `"portal_audit"`) {
			t.Fatalf("the export of a store without audit records has an audit line:\n%s", dump)
		}
		dst := to(t)
		if _, _, err := transfer.Import(bytes.NewReader(dump), stores{dst}); err != nil {
			t.Fatalf("Import: %v", err)
		}
		if got := auditOf(t, dst.Reopen(t)); len(got) != 0 {
			t.Errorf("after importing an empty audit log the target holds %v, want none", got)
		}
	})
	t.Run("transfer/an import into a store with audit records is refused", func(t *testing.T) {
		src := from(t)
		fill(t, src)
		dump := export(t, src, "from")
		dst := to(t)
		if err := dst.Portal.AppendAudit(portal.AuditRecord{At: t0, Partner: "p", Actor: portal.ActorOperator, Action: "create_link", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		_, _, err := transfer.Import(bytes.NewReader(dump), stores{dst})
		if !errors.Is(err, transfer.ErrNotEmpty) || !strings.Contains(err.Error(), "audit") {
			t.Fatalf("Import into a store with an audit record: %v, want ErrNotEmpty naming the audit log", err)
		}
		if got := auditOf(t, dst); len(got) != 1 {
			t.Errorf("the refused import left %d audit records, want the target's one", len(got))
		}
	})
	t.Run("transfer/an import into a store with delivered records is refused", func(t *testing.T) {
		src := from(t)
		fill(t, src)
		dump := export(t, src, "from")
		dst := to(t)
		settleDelivered(t, dst, "whd_mine", "partner-made", "sub_1", t0)
		_, _, err := transfer.Import(bytes.NewReader(dump), stores{dst})
		if !errors.Is(err, transfer.ErrNotEmpty) || !strings.Contains(err.Error(), "delivered") {
			t.Fatalf("Import into a store with a delivered record: %v, want ErrNotEmpty naming the delivered records", err)
		}
		if got := deliveredRecords(t, dst, "sub_1"); len(got) != 1 {
			t.Errorf("the refused import left %d delivered records of sub_1, want the target's one", len(got))
		}
	})
	t.Run("transfer/an import into a store that is not empty is refused", func(t *testing.T) {
		src := from(t)
		fill(t, src)
		dump := export(t, src, "from")
		dst := to(t)
		if _, err := dst.Tokens.Pepper(gen("the target's own pepper")); err != nil {
			t.Fatal(err)
		}
		_, _, err := transfer.Import(bytes.NewReader(dump), stores{dst})
		if !errors.Is(err, transfer.ErrNotEmpty) || !strings.Contains(err.Error(), "a pepper") {
			t.Fatalf("Import into a store with a pepper: %v, want ErrNotEmpty naming the pepper", err)
		}
		if ps, _ := dst.Tokens.Partners(); len(ps) != 0 {
			t.Fatalf("the refused import stored %d partners, want none", len(ps))
		}
	})
}

// Stores is b as transfer.Stores.
func Stores(b Backend) transfer.Stores { return stores{b} }

type stores struct{ b Backend }

func (s stores) Tokens() tokens.Store         { return s.b.Tokens }
func (s stores) Webhooks() webhooks.Storage   { return s.b.Webhooks }
func (s stores) Feed(name string) feed.Store  { return s.b.Feed(name) }
func (s stores) FeedNames() ([]string, error) { return s.b.FeedNames() }
func (s stores) Portal() portal.Store         { return s.b.Portal }

func export(t *testing.T, b Backend, source string) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := transfer.Export(&out, stores{b}, source, t0); err != nil {
		t.Fatalf("Export: %v", err)
	}
	return out.Bytes()
}

// body is an export without its header line.
func body(export []byte) string {
	_, rest, _ := strings.Cut(string(export), "\n")
	return rest
}

// record is a delivery record as earlier gateways wrote them (JSON, which
// every gateway reads), queued or dead.
func record(id, partner, sub string, due, exp time.Time) []byte {
	expField := ""
	if !exp.IsZero() {
		expField = fmt.Sprintf(`,"exp":%q`, exp.Format(time.RFC3339Nano))
	}
	return fmt.Appendf(nil, `{"id":%q,"sub":%q,"partner":%q,"ev":{"event":"shipment-shipped","identifier":"S-%s"},`+
		`"url":"https://receiver.example/hooks","n":2,"created":%q,"due":%q%s,`+
		`"log":[{"at":%q,"attempt":1,"status":503,"latencyNs":1200000},{"at":%q,"attempt":2,"error":"connection refused","latencyNs":0}]}`,
		id, sub, partner, id, t0.Format(time.RFC3339Nano), due.Format(time.RFC3339Nano), expField,
		t0.Format(time.RFC3339Nano), t0.Add(time.Second).Format(time.RFC3339Nano))
}

// fill stores a sample of every kind of state through the stores'
// interfaces.
func fill(t *testing.T, b Backend) {
	t.Helper()
	ts := b.Tokens
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("filling the source (%s): %v", what, err)
		}
	}
	_, err := ts.Pepper(gen("the source's pepper, thirty-two."))
	must("pepper", err)
	must("partner", ts.CreatePartner(tokens.PartnerRecord{ID: "partner-made", WebhookKey: "whk-made", Created: t0},
		tokens.ClientRecord{ID: "cl-made", Partner: "partner-made", Hash: []byte("hash-of-made"), Version: "v1", OpaqueVersion: true, Active: true, Created: t0}))
	must("partner", ts.CreatePartner(tokens.PartnerRecord{ID: "partner-off", Consolidation: true, WebhookKey: "whk-off", Disabled: true, Created: t0.Add(time.Minute)}))
	must("client", ts.PutClient(tokens.ClientRecord{ID: "cl-static", Partner: "partner-static", Hash: []byte("hash-of-static"), Version: "digest", Active: false, Created: t0}))
	must("keys", ts.UpdateSigningKeys([]tokens.KeyRecord{
		{KID: "k-new", Alg: "EdDSA", Material: []byte("private material new"), Created: t0},
		{KID: "k-old", Alg: "RS256", Material: []byte("private material old"), Created: t0.Add(-time.Hour), Retired: t0},
	}, nil))
	must("static keys", ts.PutStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "partner-static", WebhookKey: "whk-static", Created: t0, Rotated: t0.Add(time.Hour)}}))
	_, _, err = b.Webhooks.CreateSubscription(ctx, webhooks.Subscription{ID: "sub_1", PartnerID: "partner-made",
		NotificationURL: "https://receiver.example/hooks", Event: "shipment-shipped", CreatedAt: t0}, 100)
	must("subscription", err)
	var queued []webhooks.QueueEntry
	for i, id := range []string{"whd_q1", "whd_q2", "whd_q3"} {
		due := t0.Add(time.Duration(i) * time.Minute)
		e, err := webhooks.QueueEntryOf(webhooks.SchedulePos(due, id), record(id, "partner-made", "sub_1", due, time.Time{}))
		must("queued delivery", err)
		queued = append(queued, e)
	}
	must("queue", b.Webhooks.Enqueue(queued, nil))
	dead, err := webhooks.DeadLetterOf(record("whd_dead", "partner-made", "sub_1", t0, t0.Add(168*time.Hour)))
	must("dead letter", err)
	must("dead letter", b.Webhooks.LoadDead([]webhooks.DeadLetter{dead}))
	_, _, err = b.Webhooks.CreateSubscription(ctx, webhooks.Subscription{ID: "sub_2", PartnerID: "partner-off",
		NotificationURL: "https://receiver.example/off", Event: "shipment-shipped", CreatedAt: t0}, 100)
	must("subscription", err)
	// Delivered at times out of id order: the log's order is by time.
	settleDelivered(t, b, "whd_d1", "partner-made", "sub_1", t0.Add(3*time.Minute))
	settleDelivered(t, b, "whd_d2", "partner-made", "sub_1", t0.Add(time.Minute))
	settleDelivered(t, b, "whd_d3", "partner-made", "sub_1", t0.Add(2*time.Minute))
	settleDelivered(t, b, "whd_d4", "partner-off", "sub_2", t0)
	cursor := "page-42"
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	commit(t, b.Feed("wms"), feed.PageWrites{Cursor: &cursor, Seen: []string{"chg-1", "chg-2"}, SeenUntil: until,
		Rejected: []feed.Rejected{
			{Seq: 6, ChangeID: "chg-x", Partner: "partner-made", Kind: "shipment", Change: "teleported", Reason: "unknown change", Source: "poll", RejectedAt: t0, Raw: `{"id":"chg-x"}`},
			{Seq: 7, ChangeID: "chg-y", Reason: "no partner", Source: "push", RejectedAt: t0.Add(time.Second)},
		}, RejectedTotal: 7})
	commit(t, b.Feed("returns"), feed.PageWrites{Seen: []string{"ret-1"}, SeenUntil: until.Add(time.Minute)})
	for _, r := range sampleAudit() {
		must("audit record", b.Portal.AppendAudit(r))
	}
}

// settleDelivered queues delivery id of sub and settles it delivered at
// at, as the gateway's committer does: its record, due at the delivery
// time, is kept at that time's position.
func settleDelivered(t *testing.T, b Backend, id, partner, sub string, at time.Time) {
	t.Helper()
	queued, err := webhooks.QueueEntryOf(webhooks.SchedulePos(t0.Add(-time.Hour), id), record(id, partner, sub, t0.Add(-time.Hour), time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, b, queued)
	kept, err := webhooks.QueueEntryOf(webhooks.SchedulePos(at, id), record(id, partner, sub, at, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	done := []bool{false}
	err = b.Webhooks.Settle([]webhooks.Settlement{{Pos: queued.Pos, Kind: webhooks.SettleDone, Entry: kept, Keep: 100}}, done)
	if err != nil || !done[0] {
		t.Fatalf("settling %s delivered: %v", id, err)
	}
}

// sampleAudit is an audit log, oldest first: records of both actors, two
// of the same nanosecond (their order must survive), and one of a partner
// that was deleted since (it has no partner record, and the log keeps it).
func sampleAudit() []portal.AuditRecord {
	same := t0.Add(-2*time.Hour + 123456789)
	return []portal.AuditRecord{
		{At: t0.Add(-3 * time.Hour), Partner: "partner-made", Actor: portal.ActorOperator, Action: "create_link", Target: "lnk_1", Outcome: "ok"},
		{At: same, Partner: "partner-made", Actor: portal.ActorPartner, Session: "ses_1", Action: "rotate_secret", Target: "cl-made", Outcome: "ok", Detail: "first of the same time"},
		{At: same, Partner: "partner-made", Actor: portal.ActorPartner, Session: "ses_1", Action: "delete_subscription", Target: "sub_9", Outcome: "not found", Detail: "second of the same time"},
		{At: t0.Add(-time.Hour), Partner: "partner-gone", Actor: portal.ActorOperator, Action: "end_sessions", Outcome: "ok", Detail: "partner deleted"},
	}
}

// auditOf is b's whole audit log, oldest first.
func auditOf(t *testing.T, b Backend) []portal.AuditRecord {
	t.Helper()
	recs, err := b.Portal.Audit("", time.Time{}, 1000)
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	slices.Reverse(recs)
	for i := range recs {
		recs[i].At = recs[i].At.UTC()
	}
	return recs
}

// sameAudit reports whether a and b are the same audit record (times
// compared as instants).
func sameAudit(a, b portal.AuditRecord) bool {
	at := a.At.Equal(b.At)
	a.At, b.At = time.Time{}, time.Time{}
	return at && a == b
}
