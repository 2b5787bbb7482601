// Command fulfilgate is the demo Caddy binary: exactly the main package that
// xcaddy generates for
//
//	xcaddy build --with github.com/fulfilgate/fulfilgate=. \
//	             --with github.com/fulfilgate/fulfilgate/wmssim
//
// xcaddy.sh builds it with xcaddy's flags when xcaddy is not installed, and
// the end-to-end tests build it too, so every route produces the same binary.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// plug in Caddy modules here
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"
)

func main() {
	caddycmd.Main()
}
