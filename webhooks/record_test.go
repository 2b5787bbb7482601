package webhooks

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func sampleDelivery() *delivery {
	t0 := time.Date(2026, 11, 22, 5, 8, 16, 123456789, time.UTC)
	return &delivery{
		ID: "dlv_abcdefghijklmnopqrstuvwxyz", SubscriptionID: "sub_abcdefghijklmnopqrstuvwxyz", PartnerID: "partner-acme",
		Event: Event{Name: EventShipmentShipped, Identifier: "SHP-000042"}, URL: "https://hooks.example.com/fulfilment?x=1",
		Test: true, Attempts: 3, TotalAttempts: 190, Created: t0, First: t0.Add(time.Second), Due: t0.Add(time.Minute),
		Expires: t0.Add(7 * 24 * time.Hour),
		Log: []AttemptRecord{
			{At: t0.Add(time.Second), Attempt: 1, Status: 500, Latency: 12 * time.Millisecond},
			{At: t0.Add(2 * time.Second), Attempt: 2, Error: "dial tcp: connection refused – ünïcode", Latency: 3 * time.Millisecond},
		},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, d := range []*delivery{sampleDelivery(), {ID: "dlv_x", Due: time.Unix(0, 1).UTC()}, {}} {
		b := d.marshal()
		got, err := unmarshalDelivery(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, d)
		}
	}
}

// Records written as JSON by earlier versions are still read.
func TestRecordReadsJSON(t *testing.T) {
	d := sampleDelivery()
	j, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := unmarshalDelivery(j)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Fatalf("from JSON:\n got %+v\nwant %+v", got, d)
	}
	if b := d.marshal(); len(b) >= len(j)*2/3 {
		t.Fatalf("binary record %d bytes, JSON %d: not smaller by a third", len(b), len(j))
	}
}

// Every truncation or corruption of a record is an error, never a panic.
func TestRecordMalformed(t *testing.T) {
	b := sampleDelivery().marshal()
	for i := range len(b) {
		if _, err := unmarshalDelivery(b[:i]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", i, len(b))
		}
	}
	for _, bad := range [][]byte{{0x02}, {recordV1, 0, 0xff}, append(append([]byte{}, b...), 0), {recordV1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		if _, err := unmarshalDelivery(bad); err == nil {
			t.Fatalf("%x: no error", bad)
		}
	}
}

func FuzzUnmarshalDelivery(f *testing.F) {
	f.Add(sampleDelivery().marshal())
	f.Add([]byte(`{"id":"x"}`))
	f.Add([]byte{recordV1})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := unmarshalDelivery(b)
		if err != nil || len(b) == 0 || b[0] != recordV1 {
			return
		}
		// A record that decodes re-encodes to one that decodes the same.
		again, err := unmarshalDelivery(d.marshal())
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("re-encoding %x: %v\n%+v\n%+v", b, err, again, d)
		}
	})
}
