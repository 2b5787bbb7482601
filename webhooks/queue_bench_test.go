package webhooks

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Run with: go test ./webhooks -run '^$' -bench . -benchtime 20000x
// The large scenarios (1,000,000 backlog, insert-then-delete) are the
// program go run ./bench/webhooks.

// BenchmarkPublish: durable Publish of a page of 100 events (one
// subscription each), fsync included; reports deliveries/s.
func BenchmarkPublish(b *testing.B) {
	db := openDB(b, b.TempDir())
	s := newService(b, testOptions(db, newFakeClock()))
	subscribe(b, s, "p1", "http://127.0.0.1:1/h", EventLabelStatus)
	evs := make([]Event, 100)
	for i := range evs {
		evs[i] = Event{EventLabelStatus, "id" + strconv.Itoa(i)}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Publish("p1", evs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "deliveries/s")
}

type okTransport struct{ n atomic.Int64 }

func (t *okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	t.n.Add(1)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// BenchmarkDispatch: b.N queued deliveries dispatched and acknowledged
// (in-process 200 answers, so the figure is the queue's own cost).
func BenchmarkDispatch(b *testing.B) {
	db := openDB(b, b.TempDir())
	o := testOptions(db, newFakeClock())
	tr := &okTransport{}
	o.HTTPClient = &http.Client{Transport: tr}
	s := newService(b, o)
	subscribe(b, s, "p1", "http://127.0.0.1:1/h", EventLabelStatus)
	for i := 0; i < b.N; i += 500 {
		evs := make([]Event, 0, 500)
		for j := i; j < min(i+500, b.N); j++ {
			evs = append(evs, Event{EventLabelStatus, "id" + strconv.Itoa(j)})
		}
		s.Publish("p1", evs, nil)
	}
	b.ResetTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := s.RunDue(ctx); err != nil {
		b.Fatal(err)
	}
	if tr.n.Load() != int64(b.N) {
		b.Fatalf("dispatched %d of %d", tr.n.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkEndToEnd: real HTTP to a receiver on 127.0.0.1, with the
// receiver's own ceiling (plain client, same concurrency) measured first.
func BenchmarkEndToEnd(b *testing.B) {
	rcv := newReceiver(b, always(200))
	body := Event{EventLabelStatus, "x"}.Payload().Body()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: DefaultPerTargetConcurrency}}
	var next atomic.Int64
	done := make(chan struct{})
	t0 := time.Now()
	for c := 0; c < DefaultPerTargetConcurrency; c++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Post(rcv.URL, "application/json", bytesReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	for c := 0; c < DefaultPerTargetConcurrency; c++ {
		<-done
	}
	ceiling := float64(b.N) / time.Since(t0).Seconds()

	db := openDB(b, b.TempDir())
	s := newService(b, testOptions(db, newFakeClock()))
	subscribe(b, s, "p1", rcv.URL, EventLabelStatus)
	before := len(rcv.Hits())
	b.ResetTimer()
	s.Start()
	for i := 0; i < b.N; i += 500 {
		evs := make([]Event, 0, 500)
		for j := i; j < min(i+500, b.N); j++ {
			evs = append(evs, Event{EventLabelStatus, "id" + strconv.Itoa(j)})
		}
		if _, err := s.Publish("p1", evs, nil); err != nil {
			b.Fatal(err)
		}
	}
	for len(rcv.Hits())-before < b.N {
		time.Sleep(time.Millisecond)
	}
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "deliveries/s")
	b.ReportMetric(ceiling, "ceiling-req/s")
	b.ReportMetric(rate/ceiling, "ratio")
}

func bytesReader(b []byte) io.Reader { return &sliceReader{b: b} }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
