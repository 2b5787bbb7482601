package transfer_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/storage/transfer"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Streams that one backend would store and the other refuse halfway are
// refused by both while the stream is read, so nothing is written.

// subscriptionLine is stream's subscription line of id.
func subscriptionLine(t *testing.T, stream, id string) string {
	t.Helper()
	for _, l := range strings.SplitAfter(stream, "\n") {
		if strings.HasPrefix(l, `{"type":"subscription"`) && strings.Contains(l, `"id":"`+id+`"`) {
			return l
		}
	}
	t.Fatalf("the export has no subscription line of %s:\n%s", id, stream)
	return ""
}

func TestImportRefusesOnBothBackendsWhatOneCannotStore(t *testing.T) {
	good := string(deliveredExport(t))
	subA := subscriptionLine(t, good, "sub_a")
	// Another partner's subscription under sub_a's id, before it (the end
	// line counts it).
	other := strings.Replace(strings.Replace(subA, `"partner-a"`, `"partner-b"`, 1), "receiver.example/hooks", "receiver.example/other", 1)
	twice := strings.Replace(strings.Replace(good, subA, other+subA, 1), `"subscription":2`, `"subscription":3`, 1)
	nulID := "whd_\x00"
	nul := editDelivered(t, []byte(good), func(l map[string]any) {
		l["id"] = nulID
		l["pos"] = base64.StdEncoding.EncodeToString(webhooks.SchedulePos(deliveredAt, nulID))
		rec := strings.Replace(string(deliveredRecord("whd_NUL", "partner-a", "sub_a", deliveredAt)), `"id":"whd_NUL"`, `"id":"whd_\u0000"`, 1)
		l["record"] = base64.StdEncoding.EncodeToString([]byte(rec))
	})
	backends := map[string]func(*testing.T) storagetest.Backend{
		"Badger":     func(t *testing.T) storagetest.Backend { return openBadger(t, t.TempDir()) },
		"PostgreSQL": openPostgres,
	}
	for name, c := range map[string]struct{ stream, want string }{
		"a subscription id twice (of two partners)": {twice, "sub_a comes twice"},
		"a NUL in a delivered record's id":          {nul, "NUL"},
	} {
		for backend, open := range backends {
			b := open(t)
			_, _, err := transfer.Import(strings.NewReader(c.stream), storagetest.Stores(b))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s into %s: Import = %v; want it refused while reading, saying %q", name, backend, err, c.want)
			}
			ps, perr := b.Tokens.Partners()
			subs, serr := b.Webhooks.Subscriptions()
			if perr != nil || serr != nil {
				t.Fatal(perr, serr)
			}
			if len(ps) != 0 || len(subs) != 0 {
				t.Errorf("%s into %s: the refused import stored %d partners and %d subscriptions; want nothing written", name, backend, len(ps), len(subs))
			}
		}
	}
}
