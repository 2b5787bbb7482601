package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
		second := export(t, dst.Reopen(t), "to")
		if a, b := body(first), body(second); a != b {
			t.Fatalf("the export of the imported store differs from the original:\n--- original\n%s\n--- after import\n%s", a, b)
		}
		for _, typ := range []string{`"pepper"`, `"partner"`, `"client"`, `"signing_key"`, `"static_webhook_key"`, `"subscription"`,
			`"delivery"`, `"dead_letter"`, `"feed"`, `"feed_seen"`, `"feed_rejected"`} {
			if !strings.Contains(string(first), `{"type":`+typ) {
				t.Errorf("the export has no %s line: the sample state should hold every kind", typ)
			}
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
	cursor := "page-42"
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	commit(t, b.Feed("wms"), feed.PageWrites{Cursor: &cursor, Seen: []string{"chg-1", "chg-2"}, SeenUntil: until,
		Rejected: []feed.Rejected{
			{Seq: 6, ChangeID: "chg-x", Partner: "partner-made", Kind: "shipment", Change: "teleported", Reason: "unknown change", Source: "poll", RejectedAt: t0, Raw: `{"id":"chg-x"}`},
			{Seq: 7, ChangeID: "chg-y", Reason: "no partner", Source: "push", RejectedAt: t0.Add(time.Second)},
		}, RejectedTotal: 7})
	commit(t, b.Feed("returns"), feed.PageWrites{Seen: []string{"ret-1"}, SeenUntil: until.Add(time.Minute)})
}
