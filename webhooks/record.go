package webhooks

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"time"
)

// A delivery is stored in a compact binary record: a queue of a million
// pending deliveries is a million of them, and every byte is written to the
// log, flushed into tables, compacted, and (tables being memory-mapped)
// resident. The record is about half the size of the JSON it replaced;
// records written as JSON by earlier versions (first byte '{') are still
// read.
//
//	0x01                        record version
//	flags                       bit 0 test, bits 1-4: created, first, due, expires present
//	id, sub, partner, event name, identifier, url      uvarint length + bytes each
//	attempts, total attempts    uvarint each
//	created, first, due, expires  varint Unix nanoseconds, each only if present
//	log length                  uvarint, then per attempt: at (varint ns),
//	                            attempt, status (uvarint), error (string),
//	                            latency (varint ns)
const recordV1 = 0x01

const (
	flagTest = 1 << iota
	flagCreated
	flagFirst
	flagDue
	flagExpires
)

var errBadRecord = errors.New("webhooks: malformed delivery record")

func (d *delivery) marshal() []byte {
	b := make([]byte, 0, 96+len(d.ID)+len(d.SubscriptionID)+len(d.PartnerID)+len(d.Event.Name)+
		len(d.Event.Identifier)+len(d.URL)+len(d.Log)*24)
	var flags byte
	if d.Test {
		flags |= flagTest
	}
	times := d.times()
	for _, t := range times {
		if !t.t.IsZero() {
			flags |= t.flag
		}
	}
	b = append(b, recordV1, flags)
	for _, s := range []string{d.ID, d.SubscriptionID, d.PartnerID, d.Event.Name, d.Event.Identifier, d.URL} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(max(d.Attempts, 0)))
	b = binary.AppendUvarint(b, uint64(max(d.TotalAttempts, 0)))
	for _, t := range times {
		if !t.t.IsZero() {
			b = binary.AppendVarint(b, t.t.UnixNano())
		}
	}
	b = binary.AppendUvarint(b, uint64(len(d.Log)))
	for _, r := range d.Log {
		b = binary.AppendVarint(b, r.At.UnixNano())
		b = binary.AppendUvarint(b, uint64(max(r.Attempt, 0)))
		b = binary.AppendUvarint(b, uint64(max(r.Status, 0)))
		b = appendString(b, r.Error)
		b = binary.AppendVarint(b, int64(r.Latency))
	}
	return b
}

// times lists the record's optional times with their flags, in record
// order.
func (d *delivery) times() [4]recordTime {
	return [4]recordTime{{&d.Created, flagCreated}, {&d.First, flagFirst}, {&d.Due, flagDue}, {&d.Expires, flagExpires}}
}

// recordTime is one optional time of a record and its flag.
type recordTime struct {
	t    *time.Time
	flag byte
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// unmarshalDelivery decodes a record (binary, or JSON from earlier
// versions). A malformed one is an error, never a panic.
func unmarshalDelivery(v []byte) (*delivery, error) {
	d := new(delivery)
	if len(v) > 0 && v[0] == '{' {
		return d, json.Unmarshal(v, d)
	}
	r := recordReader{b: v}
	if r.byte() != recordV1 {
		return d, errBadRecord
	}
	flags := r.byte()
	for _, s := range []*string{&d.ID, &d.SubscriptionID, &d.PartnerID, &d.Event.Name, &d.Event.Identifier, &d.URL} {
		*s = r.string()
	}
	d.Test = flags&flagTest != 0
	d.Attempts, d.TotalAttempts = r.int(), r.int()
	for _, t := range d.times() {
		if flags&t.flag != 0 {
			*t.t = r.time()
		}
	}
	n := r.int()
	if n > len(r.b)/5 { // each entry takes at least 5 bytes; guards the allocation
		return d, errBadRecord
	}
	if n > 0 {
		d.Log = make([]AttemptRecord, n)
	}
	for i := range d.Log {
		a := &d.Log[i]
		a.At = r.time()
		a.Attempt, a.Status = r.int(), r.int()
		a.Error = r.string()
		a.Latency = time.Duration(r.varint())
	}
	if r.bad || len(r.b) != 0 {
		return d, errBadRecord
	}
	return d, nil
}

// recordPartner returns the partner id of a binary record without decoding
// the rest; ok is false for a record it cannot tell (JSON, malformed).
func recordPartner(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != recordV1 {
		return "", false
	}
	r := recordReader{b: v[2:]}
	r.string() // id
	r.string() // subscription
	p := r.string()
	return p, !r.bad
}

// recordReader reads a record's fields; past the end or on a malformed
// field it sets bad and returns zero values.
type recordReader struct {
	b   []byte
	bad bool
}

func (r *recordReader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recordReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *recordReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one (u)varint with decode (binary.Uvarint or Varint).
func readVarint[T uint64 | int64](r *recordReader, decode func([]byte) (T, int)) T {
	v, n := decode(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) int() int {
	v := r.uvarint()
	if v > math.MaxInt32 {
		r.bad = true
		return 0
	}
	return int(v)
}

func (r *recordReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad = true
		r.b = nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *recordReader) time() time.Time { return time.Unix(0, r.varint()).UTC() }
