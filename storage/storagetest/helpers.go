package storagetest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// t0 is the contract's fixed "now": behaviours never read the clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// entry makes a queue entry for delivery id of partner p due at due, whose
// record is its id (records are opaque to a backend).
func entry(id, p string, due time.Time) webhooks.QueueEntry {
	return webhooks.QueueEntry{Pos: webhooks.SchedulePos(due, id), ID: id, PartnerID: p,
		SubscriptionID: "sub_" + p, Record: []byte("record of " + id)}
}

// scheduled is one entry as a reader returned it.
type scheduled struct {
	pos    []byte
	record string
}

// readAll reads the whole schedule from pos (nil: the start).
func readAll(b Backend, from []byte) ([]scheduled, error) {
	r, err := b.Webhooks.ReadSchedule()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []scheduled
	for r.Seek(from); r.Valid(); r.Next() {
		var rec string
		if err := r.Value(func(v []byte) error { rec = string(v); return nil }); err != nil {
			return nil, err
		}
		out = append(out, scheduled{pos: r.Pos(), record: rec})
	}
	return out, nil
}

// records lists the records of es.
func records(es []scheduled) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.record
	}
	return out
}

// recordsOf lists the records of es as entries made by entry.
func recordsOf(es ...webhooks.QueueEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Record)
	}
	return out
}

// deadRecords lists the dead letters' records in ScanDead's order.
func deadRecords(b Backend) ([]string, error) {
	var out []string
	err := b.Webhooks.ScanDead(func(v []byte) (bool, error) {
		out = append(out, string(v))
		return true, nil
	})
	return out, err
}

func sameStrings(got, want []string) error {
	if !slices.Equal(got, want) {
		return fmt.Errorf("got %q, want %q", got, want)
	}
	return nil
}

// gen is a pepper generator returning p.
func gen(p string) func() ([]byte, error) {
	return func() ([]byte, error) { return []byte(p), nil }
}

// ctx is the context of calls that take one.
var ctx = context.Background()
