package pgstorage

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// A gateway on PostgreSQL reads its feed as the holder of the feed's
// lease, and says so: in the feed's status (admin API, CLI) and in the
// metric fulfilgate_feed_reading.
func TestAFeedOnPostgresIsReadByTheLeaseHolderWhichSaysSo(t *testing.T) {
	wms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write([]byte(`{"changes":[],"next":""}`)); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(wms.Close)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	storage, err := json.Marshal(map[string]string{"backend": "postgres", "dsn": pgtest.Database(t)})
	if err != nil {
		t.Fatal(err)
	}
	a := &fulfilment.App{DataDir: t.TempDir(), StorageRaw: storage,
		Feeds: []*fulfilment.FeedConfig{{Name: "wms", URL: wms.URL + "/wms/changes"}}}
	if err := a.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		f := a.FeedReader("wms")
		if f == nil {
			t.Fatal("no reader of feed wms runs")
		}
		st := f.Status()
		if st.ReaderStatus != nil && st.ReaderHere && st.Reader != "" && st.LeaseUntil != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s the feed's status shows reader %+v, want this instance named as the lease holder, with the lease's end", st.ReaderStatus)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := gauge(t, ctx.GetMetricsRegistry(), "fulfilgate_feed_reading", "wms"); got != 1 {
		t.Errorf("fulfilgate_feed_reading{feed=\"wms\"} = %v, want 1 on the instance that reads the feed", got)
	}
}

// gauge is the value of the metric name{feed=feed} in reg (-1: absent).
func gauge(t *testing.T, reg prometheus.Gatherer, name, feed string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "feed" && l.GetValue() == feed {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
