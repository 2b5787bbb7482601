package gateway

import (
	"fmt"
	"net/http"
	"testing"
)

// A gateway in the site's error routes does not map a request the
// gateway mapped before: its guard admits a request once (it removed the
// Authorization it verified), so the error route's gateway refuses it
// (401). (fulfilment_version relies on it: ServeVerified does not look
// for the error routes.)
func TestGatewayInTheErrorRoutesDoesNotMapARequestAgain(t *testing.T) {
	port, down := freePort(t), freePort(t) // nothing listens on down
	cf := appOptions(t.TempDir()) + fmt.Sprintf(`
http://127.0.0.1:%d {
	bind 127.0.0.1
	route {
		fulfilment_gateway {
			token
			auth
			version {
				expose products
				version v4 {
					upstream 127.0.0.1:%d
				}
			}
		}
		reverse_proxy {fulfilment.upstream}
	}
	handle_errors {
		route {
			fulfilment_gateway {
				auth
				version {
					expose products
					version v4 {
						upstream 127.0.0.1:9
					}
				}
			}
			header X-Upstream {fulfilment.upstream}
			respond "mapped again" 599
		}
	}
}
`, port, down)
	cfg, err := adapt(cf)
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	res, body := do(t, http.MethodGet, base+"/api/fulfilment/v4/products", token(t, base))
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%d %q (X-Upstream %q): want the error route's guard to refuse the request it admitted before (401), not map it again",
			res.StatusCode, body, res.Header.Get("X-Upstream"))
	}
}
