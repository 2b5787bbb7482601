package main

import (
	"fmt"
	"path/filepath"
)

// The benchmark partner is the demo's partner-acme (so the simulator's
// seeded items are its own), with a client of its own for this throw-away
// gateway only.
const (
	benchPartner = "partner-acme"
	benchClient  = "bench-client"
	benchSecret  = "bench-secret-0123456789abcdefghijklmnopqrstuvwxyz"
)

// ports are the listeners of one measurement: the gateway's admin API, its
// protected and bare sites, and the WMS simulator.
type ports struct {
	admin, protected, bare, wms int
}

// gatewaySite is the demo Caddyfile's gateway site (TestGatewaySiteIsTheDemos
// compares them), proxying to the simulator on wmsPort.
func gatewaySite(port, wmsPort int) string {
	return fmt.Sprintf(`http://:%d {
	@token path /api/auth/token
	fulfilment_token @token
	fulfilment_auth
	fulfilment_subscriptions
	fulfilment_version {
		map products items
		map outbounds outbound-orders
		map inbounds inbound-orders
		map adjustments stock-adjustments
		expose shipments receipts labels
		version v4 {
			upstream_prefix /wms
		}
		version v3 {
			upstream_prefix /wms/classic
			deprecated 2026-06-01T00:00:00Z sunset 2027-06-30T00:00:00Z successor v4
		}
	}
	reverse_proxy 127.0.0.1:%d {
		lb_retries 2
	}
}
`, port, wmsPort)
}

// bareSite is the baseline: the same reverse_proxy, and nothing else.
func bareSite(port, wmsPort int) string {
	return fmt.Sprintf(`http://:%d {
	reverse_proxy 127.0.0.1:%d {
		lb_retries 2
	}
}
`, port, wmsPort)
}

// wmsSite is the WMS simulator, as in the demo.
func wmsSite(port int) string {
	return fmt.Sprintf("http://:%d {\n\twms_simulator\n}\n", port)
}

// gatewayCaddyfile is the gateway process's configuration: the fulfilment
// app with the benchmark's partner (no feed, so no background polling),
// the protected and the bare site, and, with sameProcess, the simulator
// too (the demo's single process). No access logs, as in the demo.
func gatewayCaddyfile(p ports, dir string, sameProcess bool) string {
	cf := fmt.Sprintf(`{
	admin 127.0.0.1:%d
	default_bind 127.0.0.1
	fulfilment {
		data_dir %s
		tokens {
			partner %s {
				client %s %s
			}
		}
	}
}

`, p.admin, filepath.Join(dir, "data"), benchPartner, benchClient, benchSecret) +
		gatewaySite(p.protected, p.wms) + "\n" + bareSite(p.bare, p.wms)
	if sameProcess {
		cf += "\n" + wmsSite(p.wms)
	}
	return cf
}

// wmsCaddyfile runs the simulator alone (its own process, as a real WMS).
func wmsCaddyfile(p ports) string {
	return "{\n\tadmin off\n\tdefault_bind 127.0.0.1\n}\n\n" + wmsSite(p.wms)
}
