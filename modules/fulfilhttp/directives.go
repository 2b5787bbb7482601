// Package fulfilhttp holds what the gateway's HTTP handlers share:
// problem+json answers (the error format of the fulfilment resource
// interface), size-limited body reading with a read deadline, the request
// id, the partner identity the Bearer guard verified (a value in the
// request's context), Connection-header handling, the request-path metrics
// and the order of the gateway's directives. Each handler family is a
// package below it: tokenauth, versions, subscriptions, ingest, portal.
package fulfilhttp

import "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

// The gateway's HTTP directives run in this order, all before reverse_proxy:
// partner portal (before the guard: it has sessions of its own), token
// endpoint, Bearer guard, subscriptions API, version mapping, the gateway
// (those five as one handler), feed ingest.
// Kept in one place, which every handler package imports, because the
// order of registration is the order of the directives and
// RegisterDirectiveOrder panics on a second registration.
func init() {
	for _, dir := range []string{
		"fulfilment_portal",
		"fulfilment_token",
		"fulfilment_auth",
		"fulfilment_subscriptions",
		"fulfilment_version",
		"fulfilment_gateway",
		"fulfilment_ingest",
	} {
		httpcaddyfile.RegisterDirectiveOrder(dir, httpcaddyfile.Before, "reverse_proxy")
	}
}
