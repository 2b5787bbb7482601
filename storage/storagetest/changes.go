package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// changeWithin bounds the wait for a change notification: a bound on a
// hang, not a measure of speed.
const changeWithin = 20 * time.Second

// waitChange receives from ch until a value with a bit of want arrives.
func waitChange[C ~uint8](t *testing.T, ch <-chan C, want C, after string) {
	t.Helper()
	deadline := time.After(changeWithin)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("after %s: the change channel was closed", after)
			}
			if c&want != 0 {
				return
			}
		case <-deadline:
			t.Fatalf("after %s: no change notification of kind %d within %s", after, want, changeWithin)
		}
	}
}

// notifier returns the backend's change notifications of its token and
// webhook stores, or skips t for a backend used by one process only.
func notifiers(t *testing.T, b Backend) (<-chan tokens.Change, <-chan webhooks.Change) {
	t.Helper()
	tn, ok1 := b.Tokens.(tokens.ChangeNotifier)
	wn, ok2 := b.Webhooks.(webhooks.ChangeNotifier)
	if !ok1 && !ok2 {
		t.Skip("a backend used by one process only notifies no changes")
	}
	if !ok1 || !ok2 {
		t.Fatalf("the backend notifies changes of only one of its stores (tokens %v, webhooks %v)", ok1, ok2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tc, err := tn.Changes(ctx)
	if err != nil {
		t.Fatalf("tokens Changes: %v", err)
	}
	wc, err := wn.Changes(ctx)
	if err != nil {
		t.Fatalf("webhooks Changes: %v", err)
	}
	return tc, wc
}

var changeBehaviours = []Behaviour{
	{"changes/partner, client and static webhook key writes notify ChangePartners", func(t *testing.T, b Backend) {
		tc, _ := notifiers(t, b)
		p := tokens.PartnerRecord{ID: "P1", WebhookKey: "wk", Created: t0}
		c := tokens.ClientRecord{ID: "c1", Partner: "P1", Hash: make([]byte, 32), Version: "v1", Active: true, Created: t0}
		steps := []struct {
			what string
			do   func() error
		}{
			{"CreatePartner", func() error { return b.Tokens.CreatePartner(p, c) }},
			{"PutClient", func() error { c.Active = false; return b.Tokens.PutClient(c) }},
			{"UpdateClient", func() error { c.Active = true; return b.Tokens.UpdateClient(c) }},
			{"CreateClient", func() error {
				return b.Tokens.CreateClient(tokens.ClientRecord{ID: "c2", Partner: "P1", Hash: make([]byte, 32), Version: "v2",
					Active: true, Created: t0}, 10)
			}},
			{"PutPartner", func() error { p.Disabled = true; return b.Tokens.PutPartner(p) }},
			{"PutStaticWebhookKeys", func() error {
				return b.Tokens.PutStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "S1", WebhookKey: "k", Created: t0}})
			}},
			{"AddStaticWebhookKeys", func() error {
				return b.Tokens.AddStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "S2", WebhookKey: "k", Created: t0}})
			}},
			{"DeleteClient", func() error { return b.Tokens.DeleteClient("c1") }},
			{"DeletePartner", func() error { return b.Tokens.DeletePartner("P1", nil) }},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.what, err)
			}
			waitChange(t, tc, tokens.ChangePartners, s.what)
		}
	}},
	{"changes/signing key writes notify ChangeKeys", func(t *testing.T, b Backend) {
		tc, _ := notifiers(t, b)
		k1 := tokens.KeyRecord{KID: "k1", Alg: tokens.AlgEdDSA, Material: []byte("seed-1"), Created: t0}
		if err := b.Tokens.ReplaceCurrentKey("", k1); err != nil {
			t.Fatal(err)
		}
		waitChange(t, tc, tokens.ChangeKeys, "ReplaceCurrentKey")
		if err := b.Tokens.UpdateSigningKeys(nil, []string{"k1"}); err != nil {
			t.Fatal(err)
		}
		waitChange(t, tc, tokens.ChangeKeys, "UpdateSigningKeys")
	}},
	{"changes/subscription creates and deletes notify ChangeSubscriptions", func(t *testing.T, b Backend) {
		_, wc := notifiers(t, b)
		sub := webhooks.Subscription{ID: "sub_1", PartnerID: "P1", Event: webhooks.EventNames[0],
			NotificationURL: "https://receiver.example/hook", CreatedAt: t0}
		if _, _, err := b.Webhooks.CreateSubscription(context.Background(), sub, 10); err != nil {
			t.Fatal(err)
		}
		waitChange(t, wc, webhooks.ChangeSubscriptions, "CreateSubscription")
		if _, err := b.Webhooks.DeleteSubscription("P1", "sub_1"); err != nil {
			t.Fatal(err)
		}
		waitChange(t, wc, webhooks.ChangeSubscriptions, "DeleteSubscription")
	}},
}
