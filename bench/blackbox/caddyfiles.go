package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
)

// The benchmark partner is the demo's partner-acme (so the simulator's
// seeded items are its own), with a client of its own for this throw-away
// gateway only.
const (
	benchPartner = "partner-acme"
	benchClient  = benchgw.Client
	benchSecret  = benchgw.Secret
)

// ports are the listeners of one measurement: the gateway's admin API, its
// protected and bare sites, the WMS simulator, and the decomposition's
// sites (by name; none unless asked for).
type ports struct {
	admin, protected, bare, wms int
	parts                       map[string]int
}

// portsOf assigns free ports (4 + len(decomposition) of them) to the
// listeners: the decomposition's sites only with decompose.
func portsOf(free []int, decompose bool) ports {
	p := ports{admin: free[0], protected: free[1], bare: free[2], wms: free[3], parts: map[string]int{}}
	if decompose {
		for i, pt := range decomposition {
			p.parts[pt.name] = free[4+i]
		}
	}
	return p
}

// versionJob is the demo's version mapping, a job of its gateway.
const versionJob = `		version {
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
`

// The demo gateway's other jobs, each with its own paths' defaults (the
// portal under /portal, the token endpoint at /api/auth/token).
const (
	portalJob = "\t\tportal\n"
	tokenJob  = "\t\ttoken\n"
	authJob   = "\t\tauth\n"
	subsJob   = "\t\tsubscriptions\n"
	// guardLine is the Bearer guard as a handler of its own.
	guardLine = "\tfulfilment_auth\n"
)

// gatewayOf is a fulfilment_gateway with the given jobs.
func gatewayOf(jobs ...string) string {
	return "\tfulfilment_gateway {\n" + strings.Join(jobs, "") + "\t}\n"
}

// proxyBlock is the demo's reverse_proxy to the simulator on wmsPort.
func proxyBlock(wmsPort int) string {
	return fmt.Sprintf("\treverse_proxy 127.0.0.1:%d {\n\t\tlb_retries 2\n\t}\n", wmsPort)
}

func site(port int, body ...string) string {
	return fmt.Sprintf("http://:%d {\n%s}\n", port, strings.Join(body, ""))
}

// gatewaySite is the demo Caddyfile's gateway site (TestGatewaySiteIsTheDemos
// compares them), proxying to the simulator on wmsPort.
func gatewaySite(port, wmsPort int) string {
	return site(port, gatewayOf(portalJob, tokenJob, authJob, subsJob, versionJob), proxyBlock(wmsPort))
}

// bareSite is the baseline: the same reverse_proxy, and nothing else.
func bareSite(port, wmsPort int) string {
	return site(port, proxyBlock(wmsPort))
}

// part is a site of the decomposition: a part of the protected site in
// front of the same proxy, and the path its requests take.
type part struct {
	name, path string
	site       func(port, wmsPort int) string
}

// decomposition splits the protected site's cost (-decompose) into its
// layers: from bare, each site adds one job of the protected site's
// gateway to the one before it (TestDecompositionAddsOneLayerPerSite), so
// the difference between neighbours is that job's cost. The guard comes
// first, as a handler of its own, because a gateway needs the guard and
// the version mapping; the step from "guarded" to "versioned" also trades
// Caddy's handler for the gateway's.
var decomposition = []part{
	// bare + the guard, as a handler of its own.
	{"guarded", barePath, func(port, wms int) string { return site(port, guardLine, proxyBlock(wms)) }},
	// a gateway of the guard and the version mapping.
	{"versioned", protectedPath, func(port, wms int) string {
		return site(port, gatewayOf(authJob, versionJob), proxyBlock(wms))
	}},
	// versioned + the subscriptions API.
	{"subscribed", protectedPath, func(port, wms int) string {
		return site(port, gatewayOf(authJob, subsJob, versionJob), proxyBlock(wms))
	}},
	// subscribed + the portal: the protected site without the token
	// endpoint.
	{"tokenless", protectedPath, func(port, wms int) string {
		return site(port, gatewayOf(portalJob, authJob, subsJob, versionJob), proxyBlock(wms))
	}},
}

// The paths of the two sides' requests.
const (
	protectedPath = "/api/fulfilment/v4/products"
	barePath      = "/wms/items"
)

// wmsSite is the WMS simulator, as in the demo.
func wmsSite(port int) string {
	return fmt.Sprintf("http://:%d {\n\twms_simulator\n}\n", port)
}

// gatewayCaddyfile is the gateway process's configuration: the fulfilment
// app with the benchmark's partner (no feed, so no background polling),
// the protected and the bare site, the decomposition's sites given ports,
// and, with sameProcess, the simulator too (the demo's single process).
// No access logs, as in the demo.
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
	for _, pt := range decomposition {
		if port, ok := p.parts[pt.name]; ok {
			cf += "\n" + pt.site(port, p.wms)
		}
	}
	if sameProcess {
		cf += "\n" + wmsSite(p.wms)
	}
	return cf
}

// wmsCaddyfile runs the simulator alone (its own process, as a real WMS).
func wmsCaddyfile(p ports) string {
	return "{\n\tadmin off\n\tdefault_bind 127.0.0.1\n}\n\n" + wmsSite(p.wms)
}
