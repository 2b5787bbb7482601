// Package fulfilgate is the Fulfilgate gateway: Caddy v2 modules that put the
// Fulfilment Partner Interface (OAuth 2.0 client-credentials tokens, Bearer
// auth, versioned proxying and signed, durable webhooks) in front of a legacy
// warehouse management system.
//
// Importing this package registers every production module, so that
//
//	xcaddy build --with github.com/fulfilgate/fulfilgate
//
// builds a gateway. The WMS simulator used by the demo lives in the separate
// package github.com/fulfilgate/fulfilgate/wmssim, so production builds need
// not carry it.
package fulfilgate

import (
	// The fulfilment app: data directory, tokens, webhooks, change feeds,
	// the fulfilment global option of the Caddyfile.
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilment"
	// The admin API routes (/fulfilment/...) and the `caddy fulfilment`
	// command.
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilment/adminapi"
	// The fulfilment.storage.postgres module: state in PostgreSQL (the
	// default, fulfilment.storage.badger, is the app's own).
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilment/pgstorage"
	// The HTTP handlers, one package per family: the token endpoint and
	// the Bearer guard, the version mapping, the subscriptions API, the
	// change-feed push endpoint, the partner portal; and
	// fulfilment_gateway, which runs the partner-facing ones as one
	// handler.
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/gateway"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/ingest"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/portal"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/subscriptions"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/tokenauth"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/versions"
)
