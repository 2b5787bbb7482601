package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// client makes a client record id of partner p.
func client(id, p string) tokens.ClientRecord {
	return tokens.ClientRecord{ID: id, Partner: p, Hash: make([]byte, 32), Version: "v-" + id, OpaqueVersion: true,
		Active: true, Created: t0}
}

// createClients creates the clients ids of partner p under the limit max,
// failing t at the first refusal.
func createClients(t *testing.T, ts tokens.Store, p string, max int, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := ts.CreateClient(client(id, p), max); err != nil {
			t.Fatalf("CreateClient(%s of %s, limit %d): %v; want it stored", id, p, max, err)
		}
	}
}

// partnerClientIDs lists the stored clients of partner p.
func partnerClientIDs(t *testing.T, ts tokens.Store, p string) []string {
	t.Helper()
	cs, err := ts.Clients()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		if c.Partner == p {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// atOnce runs n calls of f at once, call i with the store of b or, with a
// backend other instances share, half of them with another instance's,
// and returns each call's error.
func atOnce(t *testing.T, b Backend, n int, f func(ts tokens.Store, i int) error) []error {
	stores := []tokens.Store{b.Tokens}
	if b.Peer != nil {
		stores = append(stores, b.Peer(t).Tokens)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(stores[i%len(stores)], i)
		}()
	}
	wg.Wait()
	return errs
}

var clientLimitBehaviours = []Behaviour{
	{"tokens/CreateClient refuses a client past the partner's limit", func(t *testing.T, b Backend) {
		createClients(t, b.Tokens, "P1", 2, "c1", "c2")
		err := b.Tokens.CreateClient(client("c3", "P1"), 2)
		if !errors.Is(err, tokens.ErrClientLimit) {
			t.Fatalf("third CreateClient with limit 2 = %v; want ErrClientLimit", err)
		}
		if ids := partnerClientIDs(t, b.Reopen(t).Tokens, "P1"); len(ids) != 2 {
			t.Fatalf("stored clients of P1 after the refusal = %v; want c1 and c2 only", ids)
		}
	}},
	{"tokens/CreateClient counts the clients stored any way, those of PutClient too", func(t *testing.T, b Backend) {
		if err := b.Tokens.PutClient(client("c1", "P1")); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.CreateClient(client("c2", "P1"), 1); !errors.Is(err, tokens.ErrClientLimit) {
			t.Fatalf("CreateClient with limit 1 beside a client stored by PutClient = %v; want ErrClientLimit", err)
		}
	}},
	{"tokens/CreateClient refuses an id that is stored (another partner's client) and leaves it", func(t *testing.T, b Backend) {
		createClients(t, b.Tokens, "P2", 5, "c1")
		err := b.Tokens.CreateClient(client("c1", "P1"), 5)
		if !errors.Is(err, tokens.ErrExists) {
			t.Errorf("CreateClient of P1 with the id of P2's client = %v; want ErrExists", err)
		}
		if ids := partnerClientIDs(t, b.Reopen(t).Tokens, "P2"); len(ids) != 1 {
			t.Fatalf("clients of P2 after another partner's create with the id of its client = %v; want c1 still P2's", ids)
		}
	}},
	{"tokens/a partner at its client limit leaves other partners unaffected", func(t *testing.T, b Backend) {
		createClients(t, b.Tokens, "P1", 2, "c1", "c2")
		createClients(t, b.Tokens, "P2", 2, "d1", "d2")
		if ids := partnerClientIDs(t, b.Tokens, "P2"); len(ids) != 2 {
			t.Fatalf("stored clients of P2 = %v; want d1 and d2", ids)
		}
	}},
	{"tokens/a deleted client frees a place under the client limit", func(t *testing.T, b Backend) {
		createClients(t, b.Tokens, "P1", 2, "c1", "c2")
		if err := b.Tokens.DeleteClient("c1"); err != nil {
			t.Fatal(err)
		}
		createClients(t, b.Tokens, "P1", 2, "c3")
		if err := b.Tokens.CreateClient(client("c4", "P1"), 2); !errors.Is(err, tokens.ErrClientLimit) {
			t.Fatalf("CreateClient after the freed place was taken = %v; want ErrClientLimit", err)
		}
	}},
	{"tokens/DeletePartner deletes the partner's clients it was not told of (another instance created them)", func(t *testing.T, b Backend) {
		if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: "P1", WebhookKey: "k"}, client("c1", "P1")); err != nil {
			t.Fatal(err)
		}
		createClients(t, b.Tokens, "P1", 5, "c2")
		createClients(t, b.Tokens, "P2", 5, "d1")
		if err := b.Tokens.DeletePartner("P1", []string{"c1"}); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		if ids := partnerClientIDs(t, r.Tokens, "P1"); len(ids) != 0 {
			t.Fatalf("clients of the deleted partner P1 still stored: %v; want none (a partner created again with its id would get them)", ids)
		}
		if ids := partnerClientIDs(t, r.Tokens, "P2"); len(ids) != 1 {
			t.Fatalf("clients of P2 after deleting P1 = %v; want d1 kept", ids)
		}
	}},
	{"tokens/UpdateClient replaces a stored client and refuses one that is gone, storing nothing", func(t *testing.T, b Backend) {
		createClients(t, b.Tokens, "P1", 5, "c1", "c2")
		changed := client("c1", "P1")
		changed.Active, changed.Version = false, "v-changed"
		if err := b.Tokens.UpdateClient(changed); err != nil {
			t.Fatalf("UpdateClient of a stored client: %v", err)
		}
		if err := b.Tokens.DeleteClient("c2"); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.UpdateClient(client("c2", "P1")); !errors.Is(err, tokens.ErrClientGone) {
			t.Errorf("UpdateClient of a deleted client = %v; want ErrClientGone", err)
		}
		if err := b.Tokens.UpdateClient(client("c1", "P2")); !errors.Is(err, tokens.ErrClientGone) {
			t.Errorf("UpdateClient of P1's client as P2's = %v; want ErrClientGone", err)
		}
		cs, err := b.Reopen(t).Tokens.Clients()
		if err != nil || len(cs) != 1 || cs[0].ID != "c1" || cs[0].Partner != "P1" || cs[0].Active || cs[0].Version != "v-changed" {
			t.Fatalf("stored clients = %+v, %v; want only c1 of P1, changed (inactive, version v-changed)", cs, err)
		}
	}},
	{"tokens/concurrent CreateClient of one partner never exceed the limit", func(t *testing.T, b Backend) {
		const n, limit = 8, 3
		errs := atOnce(t, b, n, func(ts tokens.Store, i int) error {
			return ts.CreateClient(client(fmt.Sprint("c", i), "P1"), limit)
		})
		stored := 0
		for i, err := range errs {
			switch {
			case err == nil:
				stored++
			case !errors.Is(err, tokens.ErrClientLimit):
				t.Errorf("create %d: %v; want it stored or refused with ErrClientLimit", i, err)
			}
		}
		if ids := partnerClientIDs(t, b.Tokens, "P1"); stored != limit || len(ids) != limit {
			t.Fatalf("%d creates succeeded and %d clients are stored (%v); want exactly %d of each", stored, len(ids), ids, limit)
		}
	}},
}
