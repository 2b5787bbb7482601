package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/versioning"
)

// collectionSites is a gateway with two sites in front of up: one with a
// base path of a byte net/url escapes ('!'), two short labels, a version
// named like the base's first segment and an upstream prefix and path with
// odd bytes; one with the defaults and pass_unmapped.
func collectionSites(dir string, odd, plain int, up string) string {
	site := func(port int, version string) string { return versionSite(port, version, "reverse_proxy "+up, "") }
	return appOptions(dir) + site(odd, `			base_path /api/ful!filment
			short_labels products outbounds
			map products items
			map outbounds it(ems)
			expose shipments
			version v4 {
				upstream_prefix /wms
			}
			version api {
				upstream_prefix /w!ms
			}
`) + site(plain, `			map products items
			expose shipments
			pass_unmapped
			version v4 {
				upstream_prefix /wms
			}
`)
}

// The same tables, for what Map makes of a path.
var collectionTables = []versioning.Config{
	{BasePath: "/api/ful!filment", ShortLabels: []string{"products", "outbounds"},
		Resources: map[string]string{"products": "items", "outbounds": "it(ems)"}, Expose: []string{"shipments"},
		Versions: []versioning.Version{{Name: "v4", UpstreamPrefix: "/wms"}, {Name: "api", UpstreamPrefix: "/w!ms"}}},
	{Resources: map[string]string{"products": "items"}, Expose: []string{"shipments"}, PassUnmapped: true,
		Versions: []versioning.Version{{Name: "v4", UpstreamPrefix: "/wms"}}},
}

// collectionTargets are spellings of collection paths of a table with base
// path base: the path itself, in other case, with a trailing slash or a
// query, with one byte escaped (which net/url may keep in RawPath, or
// decode into Path alone), and a version named like a base segment.
func collectionTargets(base string) []string {
	var out []string
	for _, p := range []string{base + "/v4/products", "/v4/products", base + "/v4/shipments", base + "/api/outbounds",
		"/api/outbounds", "/v4/outbounds", base + "/v4/unmapped", base + "/api/products"} {
		out = append(out, p, p+"/", p+"?sku=A-1", strings.ToUpper(p), p[:len(p)-1]+"%"+fmt.Sprintf("%02X", p[len(p)-1]))
		for i := 1; i < len(p); i++ {
			if c := p[i]; !('a' <= c && c <= 'z') && c != '/' {
				out = append(out, p[:i]+fmt.Sprintf("%%%02X", c)+p[i+1:]) // e.g. %21 for '!', %34 for '4'
			}
		}
	}
	return out
}

// rawGet sends target as the request line of a GET to addr, byte for byte,
// and returns the answer's status.
func rawGet(t *testing.T, addr, target, tok string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", target, addr, tok)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Every spelling of a collection path, sent byte for byte to the real
// gateway, reaches the upstream at the path Map makes of the escaped path
// (the query unchanged), or is refused as Map refuses it and reaches
// nothing: the collection index answers no request otherwise.
func TestCollectionSpellingsThroughTheGateway(t *testing.T) {
	up := newRecorder(t)
	ports := []int{freePort(t), freePort(t)}
	cfg, err := adapt(collectionSites(t.TempDir(), ports[0], ports[1], up.addr()))
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	tok := token(t, fmt.Sprintf("http://127.0.0.1:%d", ports[0]))
	forwarded, refused := 0, 0
	for i, c := range collectionTables {
		tab, err := versioning.New(c)
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", ports[i])
		for _, target := range collectionTargets(tab.BasePath()) {
			u, err := url.ParseRequestURI(target)
			if err != nil {
				t.Fatal(err)
			}
			status := rawGet(t, addr, target, tok)
			seen := up.take()
			m, err := tab.Map(u.EscapedPath())
			if err != nil {
				want := http.StatusNotFound
				if pe := new(versioning.PathError); errors.As(err, &pe) {
					want = http.StatusBadRequest
				}
				if status != want || len(seen) != 0 {
					t.Errorf("site %d, GET %s: %d, upstream got %q; Map refuses it (%v): want %d and nothing forwarded", i, target, status, uris(seen), err, want)
				}
				refused++
				continue
			}
			want := m.RawPath
			if u.RawQuery != "" {
				want += "?" + u.RawQuery
			}
			if status != http.StatusOK || len(seen) != 1 || seen[0].uri != want {
				t.Errorf("site %d, GET %s: %d, upstream got %q; want %s", i, target, status, uris(seen), want)
			}
			forwarded++
		}
	}
	if forwarded < 20 || refused < 20 {
		t.Fatalf("%d forwarded, %d refused: the spellings no longer test both", forwarded, refused)
	}
}
