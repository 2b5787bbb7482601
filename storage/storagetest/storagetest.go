// Package storagetest is the contract every storage backend passes: one
// table of behaviours (Behaviours), run against each backend with Run.
// A backend's test opens fresh, empty stores for each behaviour:
//
//	func TestContract(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storagetest.Backend { ... })
//	}
package storagetest

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Backend is one backend's stores, fresh and empty, as a behaviour gets
// them.
type Backend struct {
	Tokens   tokens.Store
	Webhooks webhooks.Storage
	// Feed returns the store of the feed name.
	Feed func(name string) feed.Store
	// FeedNames lists the feeds with stored state (feed.Catalog).
	FeedNames func() ([]string, error)
	// Portal is the partner portal's store.
	Portal portal.Store
	// Reopen closes the stores and opens them again on the same data, as a
	// restart would (what was committed must be there).
	Reopen func(t *testing.T) Backend
	// Peer opens the stores of another gateway instance on the same data,
	// beside these; nil for a backend only one process can open (the
	// behaviours between instances are skipped).
	Peer func(t *testing.T) Backend
}

// Opener opens a fresh backend for one behaviour; it registers its own
// clean-up with t.
type Opener func(t *testing.T) Backend

// Behaviour is one rule of the contract.
type Behaviour struct {
	Name string
	Run  func(t *testing.T, b Backend)
}

// Run runs every behaviour against the backends open returns, each as a
// subtest named for the behaviour.
func Run(t *testing.T, open Opener) {
	for _, bh := range Behaviours() {
		t.Run(bh.Name, func(t *testing.T) {
			bh.Run(t, open(t))
		})
	}
}

// Behaviours returns the contract's table: the token store's, the
// signing keys', the subscriptions', the queue's, the dead letters', the
// delivered records', the shared queue's claims (skipped by a backend that
// does not claim), the feed store's, the feed lease's, the portal's and the
// change notifications' (skipped by a backend that notifies none), the
// copy's reads and writes, the subscriptions' version and the client
// limit.
func Behaviours() []Behaviour {
	var all []Behaviour
	for _, part := range [][]Behaviour{tokenBehaviours, keyBehaviours, subscriptionBehaviours, queueBehaviours,
		deadLetterBehaviours, deliveredBehaviours, claimBehaviours, feedBehaviours, feedLeaseBehaviours, portalBehaviours,
		changeBehaviours, copyBehaviours, subscriptionVersionBehaviours, clientLimitBehaviours,
		partnerCreateBehaviours} {
		all = append(all, part...)
	}
	return all
}
