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
	// The Caddy glue: the fulfilment app, its HTTP handlers, Caddyfile
	// support, admin API routes and CLI subcommands.
	_ "github.com/fulfilgate/fulfilgate/caddymodule"
	// The fulfilment.storage.postgres module: state in PostgreSQL.
	_ "github.com/fulfilgate/fulfilgate/caddymodule/pgstorage"
)
