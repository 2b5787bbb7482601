package e2e

// The gateway serves cleartext HTTP/2 with prior knowledge (Caddy's default
// for an http:// site). HTTP/2 has no connection-specific headers (RFC 9113
// §8.2.2): a request carrying Connection, Upgrade, Transfer-Encoding,
// Keep-Alive, Proxy-Connection or a TE other than "trailers" is malformed.
// These tests write the frames by hand (no HTTP/2 client sends such a
// request) to check that none of them reaches the WMS.

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// h2Literal encodes one header field as an HPACK literal without indexing
// and a new name (RFC 7541 §6.2.2), strings without Huffman coding.
func h2Literal(name, value string) []byte {
	out := []byte{0x00}
	for _, s := range []string{name, value} {
		out = append(out, h2Int(len(s))...)
		out = append(out, s...)
	}
	return out
}

// h2Int is an HPACK integer with a 7-bit prefix and the Huffman bit clear.
func h2Int(n int) []byte {
	if n < 127 {
		return []byte{byte(n)}
	}
	out := []byte{127}
	for n -= 127; n >= 128; n >>= 7 {
		out = append(out, byte(n%128+128))
	}
	return append(out, byte(n))
}

// h2Frame is one HTTP/2 frame.
func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	out := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[5:], stream)
	return append(out, payload...)
}

// h2cRequest sends one GET over a fresh h2c connection with the given
// regular header fields and returns the type of the first frame the server
// sends on stream 1 (1 HEADERS, 3 RST_STREAM) or 7 for a GOAWAY.
func h2cRequest(t *testing.T, hostport, path string, fields [][2]string) byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostport, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var block []byte
	for _, f := range append([][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", path}, {":authority", hostport}}, fields...) {
		block = append(block, h2Literal(f[0], f[1])...)
	}
	msg := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	msg = append(msg, h2Frame(4, 0, 0, nil)...)     // SETTINGS
	msg = append(msg, h2Frame(1, 0x5, 1, block)...) // HEADERS, END_STREAM|END_HEADERS
	if _, err := conn.Write(msg); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for {
		var hdr [9]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			t.Fatalf("reading the server's frames: %v", err)
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			t.Fatal(err)
		}
		typ, stream := hdr[3], binary.BigEndian.Uint32(hdr[5:])&0x7fffffff
		if typ == 4 && hdr[4]&1 == 0 { // acknowledge the server's SETTINGS
			_, _ = conn.Write(h2Frame(4, 1, 0, nil))
		}
		if typ == 7 || (stream == 1 && (typ == 1 || typ == 3)) {
			return typ
		}
	}
}

func TestHostileH2CConnectionSpecificHeaders(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t)
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host := hostport(g.Base)
	auth := [2]string{"authorization", "Bearer " + globex}
	// A well-formed request first: the harness itself must work.
	u.take()
	if typ := h2cRequest(t, host, "/api/fulfilment/v4/products", [][2]string{auth}); typ != 1 {
		t.Fatalf("a plain h2c request: first frame type %d, want HEADERS (1)", typ)
	}
	if reqs, _ := u.take(); len(reqs) != 1 {
		t.Fatalf("a plain h2c request: the WMS received %d requests, want 1", len(reqs))
	}
	for _, f := range [][2]string{
		{"connection", "x-partner-id"},
		{"connection", "keep-alive, x-request-id"},
		{"proxy-connection", "x-partner-id"},
		{"keep-alive", "timeout=5"},
		{"upgrade", "h2c"},
		{"transfer-encoding", "chunked"},
		{"te", "trailers, x-partner-id"},
		{"te", "gzip"},
	} {
		u.take()
		typ := h2cRequest(t, host, "/api/fulfilment/v4/products", [][2]string{auth, f})
		reqs, tunneled := u.take()
		if len(reqs) != 0 {
			t.Errorf("h2c with %s: %q (malformed in HTTP/2): answered with frame type %d, and the WMS received %d requests; want none", f[0], f[1], typ, len(reqs))
		}
		if len(tunneled) != 0 {
			t.Errorf("h2c with %s: %q: bytes tunnelled to the WMS", f[0], f[1])
		}
		for _, raw := range reqs {
			low := strings.ToLower(raw)
			if ids := identityLines(raw); len(ids) != 1 || ids[0] != "X-Partner-Id: "+globexPartner ||
				strings.Contains(low, "\r\nconnection:") || strings.Contains(low, "\r\nupgrade:") {
				t.Errorf("h2c with %s: %q: the WMS received\n%s", f[0], f[1], raw)
			}
		}
	}
	g.noPanic(t)
}
