package pgstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// The client limit holds across instances: concurrent creates on two
// instances sharing the database, each of which learns of the other's
// clients only later, never leave a partner with more clients than the
// limit, and every refusal is ErrLimit.

// createConcurrently calls CreateClient(partner, limit) perInstance times
// on each of the instances at once and returns how many succeeded; it
// fails t for any error other than ErrLimit.
func createConcurrently(t *testing.T, instances []*tokens.Service, partner string, limit, perInstance int) int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		start   = make(chan struct{})
	)
	for _, svc := range instances {
		for range perInstance {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := svc.CreateClient(partner, limit)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case !errors.Is(err, tokens.ErrLimit):
					t.Errorf("CreateClient(%s, %d): %v; want a client or ErrLimit", partner, limit, err)
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	return created
}

// storedClients counts the clients of partner in the database, as a
// fresh instance reads them.
func storedClients(t *testing.T, dsn, partner string) int {
	t.Helper()
	cs, err := instance(t, dsn).Tokens().Clients()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cs {
		if c.Partner == partner {
			n++
		}
	}
	return n
}

func TestClientLimitHoldsAcrossInstancesForAPartnerCreatedAtRunTime(t *testing.T) {
	const limit, perInstance = 5, 10
	dsn := migratedPool(t).Config().ConnString()
	a, b := tokenInstance(t, dsn, tokens.Config{}, 0), tokenInstance(t, dsn, tokens.Config{}, 0)
	if _, err := a.CreatePartner("P1", false); err != nil { // with its first client
		t.Fatal(err)
	}
	waitUntil(t, "B knows the partner A created", func() bool {
		_, err := b.PartnerInfo("P1")
		return err == nil
	})
	created := createConcurrently(t, []*tokens.Service{a, b}, "P1", limit, perInstance)
	if n := storedClients(t, dsn, "P1"); n != limit || created != limit-1 {
		t.Fatalf("after %d concurrent creates on two instances with limit %d: %d stored clients of P1 (%d created here, "+
			"1 with the partner); want exactly %d stored", 2*perInstance, limit, n, created, limit)
	}
}

func TestClientLimitHoldsAcrossInstancesForAPartnerOfTheConfiguration(t *testing.T) {
	const limit, perInstance = 5, 10
	digest := sha256.Sum256([]byte("the secret of S1's client of the configuration"))
	cfg := tokens.Config{Partners: []tokens.StaticPartner{{ID: "S1",
		Clients: []tokens.StaticClient{{ID: "s1-static", SecretSHA256: hex.EncodeToString(digest[:])}}}}}
	dsn := migratedPool(t).Config().ConnString()
	a, b := tokenInstance(t, dsn, cfg, 0), tokenInstance(t, dsn, cfg, 0)
	created := createConcurrently(t, []*tokens.Service{a, b}, "S1", limit, perInstance)
	// The client of the configuration takes one place and is not stored.
	if n := storedClients(t, dsn, "S1"); n != limit-1 || created != limit-1 {
		t.Fatalf("after %d concurrent creates on two instances with limit %d: %d stored clients of S1 (%d created); "+
			"want exactly %d beside the one of the configuration", 2*perInstance, limit, n, created, limit-1)
	}
}
