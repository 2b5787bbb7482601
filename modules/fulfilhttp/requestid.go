package fulfilhttp

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// NewRequestID returns a random (version 4) UUID in its 36-character text
// form. It is the gateway's own, not Caddy's {http.request.uuid}: that
// placeholder costs a request several allocations it does not otherwise
// need (it registers itself in the vars and the access log's fields).
func NewRequestID() string {
	var s [36]byte
	FillRequestID(&s)
	return string(s[:])
}

// FillRequestID writes a new request id (NewRequestID's text) into s. Its
// random bytes are crypto/rand's, drawn idsPerDraw ids at a time.
func FillRequestID(s *[36]byte) {
	var u [16]byte
	e := entropies.Get().(*entropy)
	if e.next == len(e.buf) {
		_, _ = rand.Read(e.buf[:]) // never fails (crypto/rand panics instead)
		e.next = 0
	}
	copy(u[:], e.buf[e.next:])
	e.next += len(u)
	entropies.Put(e)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
}

// idsPerDraw is how many request ids one crypto/rand call supplies. A call
// (the vDSO's getrandom and the checks around it) cost about 1 µs under
// load, several times the rest of making an id, and every request the
// guard admits needs one.
const idsPerDraw = 32

// entropy is crypto/rand output not yet used: buf[next:]. A buffer is held
// by one caller at a time (taken from entropies and put back), so no
// bytes go to two ids; a buffer the pool drops takes its unused bytes
// with it.
type entropy struct {
	buf  [idsPerDraw * 16]byte
	next int
}

var entropies = sync.Pool{New: func() any { return &entropy{next: idsPerDraw * 16} }}
