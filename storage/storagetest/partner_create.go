package storagetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

var partnerCreateBehaviours = []Behaviour{
	{"tokens/CreatePartner refuses a stored partner id and changes nothing", func(t *testing.T, b Backend) {
		if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: "P1", WebhookKey: "first", Created: t0}, client("c1", "P1")); err != nil {
			t.Fatal(err)
		}
		err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: "P1", WebhookKey: "second", Created: t0}, client("c2", "P1"))
		if !errors.Is(err, tokens.ErrExists) {
			t.Errorf("CreatePartner of a stored partner id = %v; want ErrExists", err)
		}
		r := b.Reopen(t)
		ps, err := r.Tokens.Partners()
		if err != nil || len(ps) != 1 || ps[0].WebhookKey != "first" {
			t.Fatalf("partners after the refused create = %+v, %v; want P1 with its first webhook key", ps, err)
		}
		if ids := partnerClientIDs(t, r.Tokens, "P1"); len(ids) != 1 || ids[0] != "c1" {
			t.Fatalf("clients of P1 after the refused create = %v; want c1 only", ids)
		}
	}},
	{"tokens/CreatePartner deletes stored clients of its id (a deleted partner's, created elsewhere) before storing its own", func(t *testing.T, b Backend) {
		// What another instance can leave behind: a client created for a
		// partner that was deleted at the same moment.
		if err := b.Tokens.PutClient(client("orphan", "P1")); err != nil {
			t.Fatal(err)
		}
		createClients(t, b.Tokens, "P2", 5, "d1")
		if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: "P1", WebhookKey: "k", Created: t0}, client("c1", "P1")); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		if ids := partnerClientIDs(t, r.Tokens, "P1"); len(ids) != 1 || ids[0] != "c1" {
			t.Fatalf("clients of the new partner P1 = %v; want c1 only (the orphan would authenticate as the new partner)", ids)
		}
		if ids := partnerClientIDs(t, r.Tokens, "P2"); len(ids) != 1 {
			t.Fatalf("clients of P2 after creating P1 = %v; want d1 kept", ids)
		}
	}},
	{"tokens/concurrent CreatePartner of one id store one partner", func(t *testing.T, b Backend) {
		errs := atOnce(t, b, 6, func(ts tokens.Store, i int) error {
			p := tokens.PartnerRecord{ID: "P1", WebhookKey: fmt.Sprint("key-", i), Created: t0}
			return ts.CreatePartner(p, client(fmt.Sprint("c", i), "P1"))
		})
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("creates %d and %d of partner P1 both succeeded; want one", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, tokens.ErrExists):
				t.Errorf("create %d: %v; want it stored or refused with ErrExists", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no create of partner P1 succeeded")
		}
		ps, err := b.Tokens.Partners()
		if err != nil || len(ps) != 1 || ps[0].WebhookKey != fmt.Sprint("key-", winner) {
			t.Fatalf("partners = %+v, %v; want P1 with the webhook key of create %d, the one that succeeded", ps, err, winner)
		}
		if ids := partnerClientIDs(t, b.Tokens, "P1"); len(ids) != 1 || ids[0] != fmt.Sprint("c", winner) {
			t.Fatalf("clients of P1 = %v; want only c%d, that of the create that succeeded", ids, winner)
		}
	}},
}
