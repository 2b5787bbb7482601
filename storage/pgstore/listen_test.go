package pgstore

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// One gateway instance (one Store) holds one LISTEN connection for all
// its subscribers: the token and webhook services' change notifications
// and the dispatcher's wake-ups.

// errorLog collects the errors a listener reports.
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err.Error())
	l.mu.Unlock()
}

// has reports whether an error starting with prefix was reported.
func (l *errorLog) has(prefix string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// oneInstance is a gateway instance's subscribers on one Store: its token
// service and its webhook service (dispatcher started, listening for
// wake-ups), neither reloading periodically during the test.
type oneInstance struct {
	store     *Store
	tokens    *tokens.Service
	hooks     *webhooks.Service
	storeErrs *errorLog // the store's OnError
}

func openOneInstance(t *testing.T, dsn string) *oneInstance {
	t.Helper()
	i := &oneInstance{storeErrs: &errorLog{}}
	i.store = New(openPool(t, dsn)).OnError(i.storeErrs.add)
	t.Cleanup(i.store.Close) // after the services' Close (cleanups run last first)
	var err error
	if i.tokens, err = tokens.Open(tokens.Options{Store: i.store.Tokens(), RefreshInterval: time.Hour}); err != nil {
		t.Fatalf("opening the token service: %v", err)
	}
	t.Cleanup(func() { i.tokens.Close() })
	if err := i.tokens.Configure(tokens.Config{}); err != nil {
		t.Fatalf("configuring the token service: %v", err)
	}
	i.hooks, err = webhooks.New(webhooks.Options{
		Storage: i.store.Webhooks(), AllowHTTP: true, Timeout: 5 * time.Second, RefreshInterval: time.Hour,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return TestWebhookKey, nil },
	})
	if err != nil {
		t.Fatalf("opening the webhook service: %v", err)
	}
	t.Cleanup(func() { i.hooks.Close() })
	i.hooks.Start()
	return i
}

func TestAnInstanceHoldsOneListeningConnection(t *testing.T) {
	pool := migratedPool(t)
	openOneInstance(t, pool.Config().ConnString())
	if n := pgtest.ListeningSessions(t, pool); n != 1 {
		t.Fatalf("one instance (token and webhook services, dispatcher started) holds %d listening sessions, want 1 for all its subscribers", n)
	}
}

func TestTwoInstancesOnOneDatabaseHoldOneListeningConnectionEach(t *testing.T) {
	pool := migratedPool(t)
	dsn := pool.Config().ConnString()
	openOneInstance(t, dsn)
	openOneInstance(t, dsn)
	if n := pgtest.ListeningSessions(t, pool); n != 2 {
		t.Fatalf("two instances hold %d listening sessions, want one each", n)
	}
}

// TestEverySubscriberResyncsAfterTheListeningConnectionIsKilled: changes
// made while the connection is away notify no one; after it is back, the
// token service reloads its partners and clients, the webhook service its
// subscriptions, and the wake-up subscriber is woken to look at the
// queue. Each is told of the failure in its own words.
func TestEverySubscriberResyncsAfterTheListeningConnectionIsKilled(t *testing.T) {
	pool := migratedPool(t)
	dsn := pool.Config().ConnString()
	// The partner is created by another instance, gone before this one
	// starts (and reads it): no notification of it is on its way to this
	// one, and the only listening session is this one's.
	other := tokenInstance(t, dsn, tokens.Config{}, 0)
	np, err := other.CreatePartner("P1", false)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	waitUntil(t, "the other instance's listening session ends", func() bool { return pgtest.ListeningSessions(t, pool) == 0 })
	i := openOneInstance(t, dsn)
	// A wake-up subscriber beside the dispatcher's, which the test reads.
	wakeErrs := &errorLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake, err := i.store.Wakeups(ctx, wakeErrs.add)
	if err != nil {
		t.Fatalf("Wakeups: %v", err)
	}
	// Changes no notification announces, as ones made while the
	// connection is away would be.
	if _, err := pool.Exec(context.Background(), "UPDATE clients SET active = false WHERE id = $1", np.ClientID); err != nil {
		t.Fatal(err)
	}
	sub := webhooks.Subscription{ID: "sub_quiet", PartnerID: "P1", Event: event, NotificationURL: "http://127.0.0.1:9/hook", CreatedAt: t0}
	if _, err := pool.Exec(context.Background(), `INSERT INTO subscriptions (id, partner_id, event, notification_url, created_ns, unique_key)
VALUES ($1, $2, $3, $4, $5, $6)`, sub.ID, sub.PartnerID, sub.Event, sub.NotificationURL, nanos(sub.CreatedAt), []byte(webhooks.SubscriptionUniqueKey(sub))); err != nil {
		t.Fatal(err)
	}
	if _, ok := i.tokens.Authenticate(np.ClientID, np.ClientSecret); !ok {
		t.Fatal("the token service reloaded before the connection was killed: the test needs a change it has not heard of")
	}
	if _, err := i.hooks.Subscriptions().Get("P1", sub.ID); err == nil {
		t.Fatal("the webhook service knew the subscription before the connection was killed: the test needs one it has not heard of")
	}
	select {
	case <-wake:
		t.Fatal("the wake-up subscriber was woken before the connection was killed: the test needs the wake-up of the reconnection")
	default:
	}

	tag, err := pool.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("ending the instance's listening session: %v (%d sessions), want its one session", err, tag.RowsAffected())
	}

	waitWake(t, wake, "the wake-up subscriber after the reconnection")
	waitUntil(t, "the token service refuses the client disabled while the connection was away", func() bool {
		_, ok := i.tokens.Authenticate(np.ClientID, np.ClientSecret)
		return !ok
	})
	waitUntil(t, "the webhook service knows the subscription created while the connection was away", func() bool {
		_, err := i.hooks.Subscriptions().Get("P1", sub.ID)
		return err == nil
	})
	if !i.storeErrs.has("change listener: ") {
		t.Errorf("the store's OnError got %v, want the change listener's failure", i.storeErrs.errs)
	}
	if !wakeErrs.has("wake-up listener: ") {
		t.Errorf("the wake-up subscriber got %v, want the wake-up listener's failure", wakeErrs.errs)
	}
	if n := pgtest.ListeningSessions(t, pool); n != 1 {
		t.Fatalf("after the reconnection the instance holds %d listening sessions, want 1", n)
	}
}

func TestTheListeningConnectionIsReleasedWhenItsLastSubscriberEnds(t *testing.T) {
	pool := migratedPool(t)
	s := instance(t, pool.Config().ConnString())
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	changes, err := s.Tokens().(tokens.ChangeNotifier).Changes(ctxA)
	if err != nil {
		t.Fatal(err)
	}
	wake, err := s.Wakeups(ctxB, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelA()
	closedAfter(t, changes, "the change channel after its context ended")
	if n := pgtest.ListeningSessions(t, pool); n != 1 {
		t.Fatalf("with one subscriber left, %d listening sessions, want 1", n)
	}
	cancelB()
	closedAfter(t, wake, "the wake-up channel after its context ended")
	waitUntil(t, "the listening session ends with its last subscriber", func() bool { return pgtest.ListeningSessions(t, pool) == 0 })
}

func TestCloseEndsTheSubscriptionsAndReleasesTheConnection(t *testing.T) {
	pool := migratedPool(t)
	s := instance(t, pool.Config().ConnString())
	changes, err := s.Webhooks().(webhooks.ChangeNotifier).Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wake, err := s.Wakeups(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	closedAfter(t, changes, "the change channel after Close")
	closedAfter(t, wake, "the wake-up channel after Close")
	waitUntil(t, "the listening session ends at Close", func() bool { return pgtest.ListeningSessions(t, pool) == 0 })
	if _, err := s.Wakeups(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Wakeups after Close: %v, want an error saying the store is closed", err)
	}
}

// closedAfter fails t unless ch is closed, with nothing received first,
// within wakeWithin.
func closedAfter[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatalf("%s: received a value, want the channel closed", what)
		}
	case <-time.After(wakeWithin):
		t.Fatalf("%s: not closed within %s", what, wakeWithin)
	}
}
