// Command fulfilgate is the demo Caddy binary: the main package that xcaddy
// generates for
//
//	xcaddy build --with github.com/fulfilgate/fulfilgate=. \
//	             --with github.com/fulfilgate/fulfilgate/wmssim
//
// (Caddy's cmd/caddy/main.go plus the plugins' blank imports and time/tzdata,
// as xcaddy v0.4.7 writes it). xcaddy.sh builds it with xcaddy's tags and
// flags when xcaddy is not installed, and the end-to-end tests build it the
// same way, so every route produces the same binary.
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// plug in Caddy modules here
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"
)

func main() {
	caddycmd.Main()
}
