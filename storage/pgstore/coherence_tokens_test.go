package pgstore

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// Several gateway instances on one database: what one changes, every other
// one applies (change notifications, a reload on each).

func TestClientCreatedOnOneInstanceAuthenticatesOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := tokenInstance(t, dsn, tokens.Config{}, 0), tokenInstance(t, dsn, tokens.Config{}, 0)
	np, err := a.CreatePartner("P1", false)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "B authenticates the client A created", func() bool {
		_, ok := b.Authenticate(np.ClientID, np.ClientSecret)
		return ok
	})
}

func TestTokenIssuedByOneInstanceVerifiesOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := tokenInstance(t, dsn, tokens.Config{}, 0), tokenInstance(t, dsn, tokens.Config{}, 0)
	if currentKID(a) != currentKID(b) {
		t.Fatalf("A signs with %s and B with %s; want the one generated key they share", currentKID(a), currentKID(b))
	}
	np, err := a.CreatePartner("P1", false)
	if err != nil {
		t.Fatal(err)
	}
	tok := issue(t, a, np.Credentials)
	waitUntil(t, "B verifies the token A issued", func() bool {
		id, verr := b.Verify(tok)
		return verr == nil && id.PartnerID == "P1" && id.ClientID == np.ClientID
	})
}

// verifiedOnBoth starts instance A, creates a partner and issues a token
// for its client on A, then starts B (which reads them at start) with the
// periodic reload interval refresh, and checks that B verifies the token
// (so B's verify cache holds it).
func verifiedOnBoth(t *testing.T, dsn string, refresh time.Duration) (a, b *tokens.Service, np tokens.NewPartner, tok string) {
	t.Helper()
	a = tokenInstance(t, dsn, tokens.Config{}, 0)
	np, err := a.CreatePartner("P1", false)
	if err != nil {
		t.Fatal(err)
	}
	tok = issue(t, a, np.Credentials)
	b = tokenInstance(t, dsn, tokens.Config{}, refresh)
	if _, verr := b.Verify(tok); verr != nil {
		t.Fatalf("B, started after A issued the token, refuses it: %v", verr)
	}
	return a, b, np, tok
}

// refusedAsRevoked waits until b refuses tok as invalid (revoked).
func refusedAsRevoked(t *testing.T, b *tokens.Service, tok, after string) {
	t.Helper()
	waitUntil(t, "B refuses the token "+after, func() bool {
		_, verr := b.Verify(tok)
		return verr != nil && verr.Fault == tokens.FaultInvalid
	})
	if _, verr := b.VerifyHeader("Bearer " + tok); verr == nil {
		t.Fatalf("B's header path (its verify cache) still accepts the token %s", after)
	}
}

func TestClientDisabledOnOneInstanceIsRefusedOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b, np, tok := verifiedOnBoth(t, dsn, 0)
	if err := a.SetClientActive("P1", np.ClientID, false); err != nil {
		t.Fatal(err)
	}
	refusedAsRevoked(t, b, tok, "after A disabled its client")
	if _, ok := b.Authenticate(np.ClientID, np.ClientSecret); ok {
		t.Fatal("B still authenticates the client A disabled")
	}
}

func TestPartnerDisabledOnOneInstanceIsRefusedOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b, np, tok := verifiedOnBoth(t, dsn, 0)
	if err := a.SetPartnerActive("P1", false); err != nil {
		t.Fatal(err)
	}
	refusedAsRevoked(t, b, tok, "after A disabled its partner")
	// The clients' new versions and the partner are two writes: the
	// second may arrive a moment after the first.
	waitUntil(t, "B refuses a client of the partner A disabled", func() bool {
		_, ok := b.Authenticate(np.ClientID, np.ClientSecret)
		return !ok
	})
}

func TestSecretRotatedOnOneInstanceRevokesOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b, np, tok := verifiedOnBoth(t, dsn, 0)
	creds, err := a.RotateSecret("P1", np.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	refusedAsRevoked(t, b, tok, "after A rotated the client's secret")
	if _, ok := b.Authenticate(np.ClientID, np.ClientSecret); ok {
		t.Fatal("B still authenticates the old secret")
	}
	if _, ok := b.Authenticate(creds.ClientID, creds.ClientSecret); !ok {
		t.Fatal("B does not authenticate the new secret")
	}
}

func TestPartnerDeletedOnOneInstanceIsRefusedOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b, _, tok := verifiedOnBoth(t, dsn, 0)
	if err := a.DeletePartner("P1"); err != nil {
		t.Fatal(err)
	}
	refusedAsRevoked(t, b, tok, "after A deleted its partner")
	if _, ok := b.Partner("P1"); ok {
		t.Fatal("B still knows the partner A deleted")
	}
}

func TestSigningKeyRotatedOnOneInstanceSignsOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := tokenInstance(t, dsn, tokens.Config{}, 0), tokenInstance(t, dsn, tokens.Config{}, 0)
	np, err := a.CreatePartner("P1", false)
	if err != nil {
		t.Fatal(err)
	}
	old := issue(t, a, np.Credentials)
	k, err := a.RotateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "B signs with the key A rotated to", func() bool { return currentKID(b) == k.KID })
	fresh := issue(t, b, np.Credentials)
	if !strings.Contains(headerOf(t, fresh), k.KID) {
		t.Fatalf("B's new token is not signed by %s", k.KID)
	}
	if _, verr := a.Verify(fresh); verr != nil {
		t.Fatalf("A refuses B's token signed by the rotated key: %v", verr)
	}
	if _, verr := b.Verify(old); verr != nil {
		t.Fatalf("B refuses a token of the retired key, which stays valid until it expires: %v", verr)
	}
}

func TestInstancesStartingAtOnceConvergeOnOneSigningKey(t *testing.T) {
	pool := migratedPool(t)
	dsn := pool.Config().ConnString()
	const n = 4
	svcs := make([]*tokens.Service, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc, err := tokens.Open(tokens.Options{Store: instance(t, dsn).Tokens()})
			if err == nil {
				t.Cleanup(func() { svc.Close() })
				err = svc.Configure(tokens.Config{})
			}
			svcs[i], errs[i] = svc, err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	for i, svc := range svcs {
		if currentKID(svc) != currentKID(svcs[0]) {
			t.Fatalf("instance %d signs with %s, instance 0 with %s; want one key", i, currentKID(svc), currentKID(svcs[0]))
		}
	}
	var stored int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM signing_keys").Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("%d signing keys stored (%v); want the one all instances use", stored, err)
	}
}

func TestStaticPartnersGeneratedWebhookKeyIsOneForAllInstances(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	cfg := tokens.Config{Partners: []tokens.StaticPartner{{ID: "S1"}}}
	const n = 4
	svcs := make([]*tokens.Service, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svcs[i] = tokenInstance(t, dsn, cfg, 0)
		}()
	}
	wg.Wait()
	for i, svc := range svcs {
		if svc == nil {
			t.Fatalf("instance %d did not start", i)
		}
		p, _ := svc.Partner("S1")
		first, _ := svcs[0].Partner("S1")
		if len(p.WebhookKey) == 0 || string(p.WebhookKey) != string(first.WebhookKey) {
			t.Fatalf("instance %d signs S1's webhooks with another key than instance 0", i)
		}
	}
}

func TestWebhookKeyRotatedOnOneInstanceSignsOnAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	cfg := tokens.Config{Partners: []tokens.StaticPartner{{ID: "S1"}}}
	a, b := tokenInstance(t, dsn, cfg, 0), tokenInstance(t, dsn, cfg, 0)
	if _, err := a.CreatePartner("P1", false); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"S1", "P1"} {
		wk, err := a.RotateWebhookKey(id)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "B signs "+id+"'s webhooks with the key A rotated to", func() bool {
			p, ok := b.Partner(id)
			return ok && string(p.WebhookKey) == wk
		})
	}
}

func TestListenerKilledReconnectsAndReloads(t *testing.T) {
	pool := migratedPool(t)
	dsn := pool.Config().ConnString()
	_, b, np, _ := verifiedOnBoth(t, dsn, time.Hour) // no periodic reload during the test
	// A change that notifies no one, as one made while B's listener is
	// away would: only the reload after B reconnects can bring it.
	if _, err := pool.Exec(context.Background(), "UPDATE clients SET active = false WHERE id = $1", np.ClientID); err != nil {
		t.Fatal(err)
	}
	killListeners(t, pool)
	waitUntil(t, "B refuses the client disabled while its listener was away", func() bool {
		_, ok := b.Authenticate(np.ClientID, np.ClientSecret)
		return !ok
	})
}

// headerOf returns the decoded JOSE header of a compact JWT.
func headerOf(t *testing.T, tok string) string {
	t.Helper()
	h, _, ok := strings.Cut(tok, ".")
	if !ok {
		t.Fatalf("not a compact JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("decoding the JWT header: %v", err)
	}
	return string(b)
}

// A change of the WMS may name a partner created on another instance
// before this one has heard of it: FindPartner reloads rather than answer
// unknown.
func TestFindPartnerFindsAPartnerNotYetSeen(t *testing.T) {
	pool := migratedPool(t)
	b := tokenInstance(t, pool.Config().ConnString(), tokens.Config{}, time.Hour) // no periodic reload during the test
	// A partner no notification announces, as if its notification were
	// still on its way to B.
	if _, err := pool.Exec(context.Background(), `INSERT INTO partners (id, consolidation, webhook_key, disabled, created_ns)
VALUES ('quiet', true, 'quiet-webhook-key-0123456789abcdef', false, $1)`, t0.UnixNano()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Partner("quiet"); ok {
		t.Fatal("B knew the partner already: the test needs one it has not seen")
	}
	p, ok, err := b.FindPartner("quiet")
	if err != nil || !ok || !p.Consolidation {
		t.Fatalf("FindPartner(quiet) = %+v, %v, %v; want the stored consolidation partner", p, ok, err)
	}
}
