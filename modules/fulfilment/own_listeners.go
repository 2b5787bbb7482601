package fulfilment

import (
	"fmt"
	"net/netip"
	"reflect"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// ownListeners returns the gateway's own TCP listeners in the config of
// ctx, which no webhook may target whatever allow_networks says: the admin
// endpoint (its configured address, or Caddy's default, which CADDY_ADMIN
// changes), the remote admin endpoint if enabled, and every listen address
// of the http app's servers (the automatic HTTPS redirects included).
// A listener on a unix socket cannot be dialled by the webhook client and
// needs no entry. notes lists what could not be protected (said in the
// log at start).
//
// A host name in a listen address, or none, stands for every address of
// this host (the unspecified address): a listener is on this machine, and
// the policy forbids its port on all of this machine's addresses.
func ownListeners(ctx caddy.Context) (out []netpolicy.ForbiddenTarget, notes []string) {
	add := func(what, addr string) {
		t, note := listenerTargets(what, addr)
		out = append(out, t...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	adminAddr, remoteAddr, note := adminListeners(ctx)
	if note != "" {
		notes = append(notes, note)
	}
	if adminAddr != "" {
		add("admin endpoint", adminAddr)
	}
	if remoteAddr != "" {
		add("remote admin endpoint", remoteAddr)
	}
	if v, err := ctx.AppIfConfigured("http"); err == nil {
		if app, ok := v.(*caddyhttp.App); ok {
			for name, srv := range app.Servers {
				for _, l := range srv.Listen {
					add("server "+name, l)
				}
			}
		}
	}
	return out, notes
}

// listenerTargets turns one listen address into forbidden targets.
func listenerTargets(what, addr string) ([]netpolicy.ForbiddenTarget, string) {
	na, err := caddy.ParseNetworkAddress(addr)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%s %q: not understood (%v); its port is not protected from webhooks", what, addr, err)
	case caddy.IsUnixNetwork(na.Network):
		return nil, ""
	case caddy.IsFdNetwork(na.Network):
		return nil, fmt.Sprintf("%s %q: a listener passed as a file descriptor; its address is unknown, "+
			"so webhooks are not kept from it", what, addr)
	case na.Network != "tcp" && na.Network != "tcp4" && na.Network != "tcp6":
		return nil, "" // udp (HTTP/3) and others: webhooks dial TCP only
	case na.StartPort == 0:
		return nil, fmt.Sprintf("%s %q: no port; not protected from webhooks", what, addr)
	}
	ip, err := netip.ParseAddr(na.Host)
	if err != nil { // empty or a name: this host, every address
		ip = netip.IPv6Unspecified()
	}
	return []netpolicy.ForbiddenTarget{{Addr: ip.Unmap(),
		Ports: netpolicy.PortRange{First: uint16(na.StartPort), Last: uint16(na.EndPort)}}}, ""
}

// adminListeners returns the admin endpoint's address ("" when disabled)
// and the remote admin endpoint's ("" when not enabled), placeholders
// replaced as Caddy does.
//
// Caddy keeps a config's admin settings in its Context and gives modules
// no accessor; they are read from the context's unexported config field.
// Should a Caddy version rename it, Caddy's default admin address is used
// and note says so (TestAdminListenersFromTheConfig catches that first).
func adminListeners(ctx caddy.Context) (local, remote, note string) {
	cfg := contextConfig(ctx)
	if cfg == nil {
		return caddy.DefaultAdminListen, "", "the admin endpoint's address could not be read from the config; " +
			"Caddy's default " + caddy.DefaultAdminListen + " is kept from webhooks"
	}
	repl := caddy.NewReplacer()
	pick := func(addr, def string) string {
		if s, err := repl.ReplaceOrErr(addr, true, true); err == nil {
			addr = s
		}
		if addr == "" {
			return def
		}
		return addr
	}
	if cfg.Admin == nil {
		return caddy.DefaultAdminListen, "", ""
	}
	if !cfg.Admin.Disabled {
		local = pick(cfg.Admin.Listen, caddy.DefaultAdminListen)
	}
	if cfg.Admin.Remote != nil {
		remote = pick(cfg.Admin.Remote.Listen, caddy.DefaultRemoteAdminListen)
	}
	return local, remote, ""
}

// contextConfig returns the *caddy.Config a Context was made for, or nil.
func contextConfig(ctx caddy.Context) *caddy.Config {
	f := reflect.ValueOf(&ctx).Elem().FieldByName("cfg")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*caddy.Config]() {
		return nil
	}
	return *(**caddy.Config)(unsafe.Pointer(f.UnsafeAddr()))
}
