package webhooks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestSubscriptionValidation(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.AllowHTTP = false
	s := newService(t, o)
	st := s.Subscriptions()
	ctx := context.Background()
	long := "https://127.0.0.1/" + strings.Repeat("a", MaxURLLength)
	cases := []struct{ name, url, event, field string }{
		{"empty url", "", EventLabelStatus, "notificationUrl"},
		{"relative", "/hook", EventLabelStatus, "notificationUrl"},
		{"no scheme", "127.0.0.1/hook", EventLabelStatus, "notificationUrl"},
		{"http refused", "http://127.0.0.1/hook", EventLabelStatus, "notificationUrl"},
		{"ftp", "ftp://127.0.0.1/hook", EventLabelStatus, "notificationUrl"},
		{"too long", long, EventLabelStatus, "notificationUrl"},
		{"user info", "https://user:pw@127.0.0.1/hook", EventLabelStatus, "notificationUrl"},
		{"no host", "https:///hook", EventLabelStatus, "notificationUrl"},
		{"fragment", "https://127.0.0.1/hook#frag", EventLabelStatus, "notificationUrl"},
		{"opaque", "https:opaque", EventLabelStatus, "notificationUrl"},
		{"bad port", "https://127.0.0.1:99999/hook", EventLabelStatus, "notificationUrl"},
		{"unparsable", "https://[::1/hook", EventLabelStatus, "notificationUrl"},
		{"ssrf private", "https://10.0.0.1/hook", EventLabelStatus, "notificationUrl"},
		{"ssrf metadata", "https://169.254.169.254/latest", EventLabelStatus, "notificationUrl"},
		{"ssrf ipv6 loopback", "https://[::1]/hook", EventLabelStatus, "notificationUrl"},
		{"ssrf mapped", "https://[::ffff:10.0.0.1]/hook", EventLabelStatus, "notificationUrl"},
		{"unresolvable", "https://no-such-host.invalid/hook", EventLabelStatus, "notificationUrl"},
		{"empty event", "https://127.0.0.1/hook", "", "event"},
		{"unknown event", "https://127.0.0.1/hook", "shipment.shipped", "event"},
	}
	for _, c := range cases {
		_, _, err := st.Create(ctx, "p1", c.url, c.event)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: err %v, want ValidationError on %s", c.name, err, c.field)
		}
	}
	if _, created, err := st.Create(ctx, "p1", "https://127.0.0.1:8443/hook?x=1", EventLabelStatus); err != nil || !created {
		t.Fatalf("valid https: %v %v", created, err)
	}
	if l, _ := st.List("p1"); len(l) != 1 {
		t.Fatalf("list after refusals: %d", len(l))
	}
}

// TestSubscriptionSSRFRefusedWithoutAllow: loopback is accepted only
// because the test policy allows 127.0.0.0/8.
func TestSubscriptionSSRFRefusedWithoutAllow(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.Policy = nil
	s := newService(t, o)
	for _, u := range []string{"http://127.0.0.1:8080/h", "http://localhost/h", "http://[::ffff:127.0.0.1]/h"} {
		_, _, err := s.Subscriptions().Create(context.Background(), "p1", u, EventLabelStatus)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "notificationUrl" || !strings.Contains(ve.Reason, "not allowed") {
			t.Errorf("%s: %v, want refusal", u, err)
		}
	}
}

// A refused host's answer names the rule, never the addresses it resolved
// to nor the resolver's own error (which would show internal DNS servers).
// A name that does not resolve gets the very same answer as one that
// resolves to a refused address, so registration cannot be used to learn
// which internal host names exist.
func TestSubscriptionRefusalsDoNotLeakResolution(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.Policy = nil
	s := newService(t, o)
	reasons := map[string]string{}
	for _, u := range []string{"http://localhost/h", "http://no-such-host.invalid/h", "http://10.1.2.3/h"} {
		_, _, err := s.Subscriptions().Create(context.Background(), "p1", u, EventLabelStatus)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "notificationUrl" || !strings.Contains(ve.Reason, "host not allowed") {
			t.Fatalf("%s: %v, want a refusal naming notificationUrl", u, err)
		}
		for _, leak := range []string{"127.0.0.1", "::1", "10.1.2.3", "lookup", ":53", "resolve:", "no such host"} {
			if strings.Contains(ve.Reason, leak) {
				t.Fatalf("%s: the refusal shows %q: %s", u, leak, ve.Reason)
			}
		}
		reasons[ve.Reason] = u
	}
	if len(reasons) != 1 {
		t.Fatalf("refusals differ between a name that does not resolve and refused addresses: %v; want one answer", reasons)
	}
}

func TestSubscriptionIdempotentIsolatedLimited(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxSubscriptionsPerPartner = 3
	s := newService(t, o)
	st := s.Subscriptions()
	ctx := context.Background()

	a, created, err := st.Create(ctx, "p1", "http://127.0.0.1/a", EventShipmentShipped)
	if err != nil || !created || !strings.HasPrefix(a.ID, "sub_") || len(a.ID) != 30 {
		t.Fatalf("create: %+v %v %v", a, created, err)
	}
	again, created, err := st.Create(ctx, "p1", "http://127.0.0.1/a", EventShipmentShipped)
	if err != nil || created || again != a {
		t.Fatalf("repeat: %+v %v %v", again, created, err)
	}
	// Scheme and host are case-insensitive: the same subscription.
	again, created, err = st.Create(ctx, "p1", "HTTP://127.0.0.1/a", EventShipmentShipped)
	if err != nil || created || again.ID != a.ID {
		t.Fatalf("repeat with another case of scheme: %+v %v %v", again, created, err)
	}
	// Same url and event by another partner is another subscription.
	b, created, err := st.Create(ctx, "p2", "http://127.0.0.1/a", EventShipmentShipped)
	if err != nil || !created || b.ID == a.ID {
		t.Fatalf("other partner: %+v %v", b, err)
	}
	if _, err := st.Get("p2", a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("p2 reads p1's subscription: %v", err)
	}
	if err := st.Delete("p2", a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("p2 deletes p1's subscription: %v", err)
	}
	if got, err := st.Get("p1", a.ID); err != nil || got != a {
		t.Fatalf("get: %+v %v", got, err)
	}
	if l, _ := st.List("p2"); len(l) != 1 || l[0].ID != b.ID {
		t.Fatalf("p2 list: %+v", l)
	}
	st.Create(ctx, "p1", "http://127.0.0.1/b", EventShipmentShipped)
	st.Create(ctx, "p1", "http://127.0.0.1/a", EventLabelStatus)
	if _, _, err := st.Create(ctx, "p1", "http://127.0.0.1/c", EventLabelStatus); !errors.Is(err, ErrLimit) {
		t.Fatalf("4th subscription: %v, want ErrLimit", err)
	}
	// The existing one is still answered at the limit.
	if _, created, err := st.Create(ctx, "p1", "http://127.0.0.1/a", EventShipmentShipped); err != nil || created {
		t.Fatalf("repeat at limit: %v %v", created, err)
	}
	if err := st.Delete("p1", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get("p1", a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := st.Delete("p1", a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, created, err := st.Create(ctx, "p1", "http://127.0.0.1/c", EventLabelStatus); err != nil || !created {
		t.Fatalf("after delete, below limit again: %v", err)
	}
	if l, _ := st.ForPartnerEvent("p1", EventShipmentShipped); len(l) != 1 {
		t.Fatalf("ForPartnerEvent: %+v", l)
	}

	// Everything survives a reopen.
	s.Close()
	db.Close()
	db = openDB(t, dir)
	s2 := newService(t, testOptions(db, clock))
	l, _ := s2.Subscriptions().List("p1")
	if len(l) != 3 {
		t.Fatalf("after reopen: %+v", l)
	}
}

// TestSubscriptionCreateRace: many concurrent identical creates give one
// subscription; concurrent distinct creates never exceed the limit.
func TestSubscriptionCreateRace(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.MaxSubscriptionsPerPartner = 5
	st := newService(t, o).Subscriptions()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]int{}
	createdN := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub, created, err := st.Create(ctx, "p1", "http://127.0.0.1/same", EventInboundStatus)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[sub.ID]++
			if created {
				createdN++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(ids) != 1 || createdN != 1 {
		t.Fatalf("ids %v created %d", ids, createdN)
	}
	var limitErrs int
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := st.Create(ctx, "p1", "http://127.0.0.1/u"+string(rune('a'+i)), EventInboundStatus)
			if errors.Is(err, ErrLimit) {
				mu.Lock()
				limitErrs++
				mu.Unlock()
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	l, _ := st.List("p1")
	if len(l) != 5 || limitErrs != 16 {
		t.Fatalf("%d subscriptions, %d limit errors; want 5 and 16", len(l), limitErrs)
	}
}
