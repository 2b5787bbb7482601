package fulfilment

import (
	"runtime/debug"
	"testing"
)

func TestGatewayVersionUnderXcaddyIsNotAPseudoVersion(t *testing.T) {
	// What xcaddy records for `--with github.com/fulfilgate/fulfilgate=<dir>`:
	// the main module is xcaddy's "caddy", and the gateway a dependency
	// replaced by a directory, at Go's placeholder pseudo-version.
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "caddy", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/caddyserver/caddy/v2", Version: "v2.11.9"},
			{Path: gatewayModulePath, Version: "v0.0.0-00010101000000-000000000000",
				Replace: &debug.Module{Path: "/src/fulfilgate", Version: ""}},
		},
	}
	if got := gatewayVersionOf(bi); got != "dev" {
		t.Fatalf("gateway version under xcaddy with a local replacement: got %q, want \"dev\"", got)
	}
}

func TestGatewayVersionNamesReleasesOnly(t *testing.T) {
	for _, c := range []struct{ main, dep, want string }{
		{main: "(devel)", want: "dev"},                                   // go build in a working tree
		{main: "v0.0.0-20261122031415-abcdef123456", want: "dev"},        // a VCS-stamped untagged commit
		{main: "v1.4.3-0.20261122031415-abcdef123456", want: "dev"},      // a commit after v1.4.2
		{main: "v1.5.0-rc.1.0.20261122031415-abcdef123456", want: "dev"}, // a commit after v1.5.0-rc.1
		{main: "v1.4.2+dirty", want: "dev"},                              // a release with local changes
		{dep: "v1.4.2", want: "v1.4.2"},                                  // xcaddy --with github.com/fulfilgate/fulfilgate@v1.4.2
		{dep: "v1.5.0-rc.1", want: "v1.5.0-rc.1"},                        // a pre-release
		{main: "v1.4.2", want: "v1.4.2"},
		{want: "dev"}, // the module is not in the binary's build info
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: "(devel)"}}
		if c.main != "" {
			bi.Main = debug.Module{Path: gatewayModulePath, Version: c.main}
		}
		if c.dep != "" {
			bi.Deps = []*debug.Module{{Path: gatewayModulePath, Version: c.dep}}
		}
		if got := gatewayVersionOf(bi); got != c.want {
			t.Errorf("main %q, dependency %q: got %q, want %q", c.main, c.dep, got, c.want)
		}
	}
}
