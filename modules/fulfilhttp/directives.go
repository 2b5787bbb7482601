package caddymodule

import "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

// The gateway's HTTP directives run in this order, all before reverse_proxy:
// token endpoint, Bearer guard, subscriptions API, version mapping. Kept in
// one place because RegisterDirectiveOrder panics on a second registration.
func init() {
	for _, dir := range []string{
		"fulfilment_token",
		"fulfilment_auth",
		"fulfilment_subscriptions",
		"fulfilment_version",
	} {
		httpcaddyfile.RegisterDirectiveOrder(dir, httpcaddyfile.Before, "reverse_proxy")
	}
}
