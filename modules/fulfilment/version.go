package fulfilment

import (
	"regexp"
	"runtime/debug"
)

const gatewayModulePath = "github.com/fulfilgate/fulfilgate"

// devVersion names a gateway built from source rather than from a released
// module version: a go build in a working tree ("(devel)"), or xcaddy with a
// local replacement (`--with github.com/fulfilgate/fulfilgate=<dir>`), where
// Go records the placeholder pseudo-version
// v0.0.0-00010101000000-000000000000.
const devVersion = "dev"

// webhooksGatewayVersion is the version the gateway names itself by in the
// User-Agent of webhook deliveries and feed requests: the Fulfilgate
// module's released version in this binary, or "dev".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return devVersion
	}
	return gatewayVersionOf(bi)
}

// gatewayVersionOf finds the Fulfilgate module in bi (the main module, or a
// dependency when xcaddy built the binary) and returns its version if it is
// a release (a semantic version that is not a pseudo-version), else "dev".
// A pseudo-version names a commit or, with a local replacement, nothing at
// all; neither is a version a receiver could look up.
func gatewayVersionOf(bi *debug.BuildInfo) string {
	v := ""
	if bi.Main.Path == gatewayModulePath {
		v = bi.Main.Version
	}
	for _, dep := range bi.Deps {
		if dep.Path == gatewayModulePath {
			v = dep.Version
		}
	}
	if !releaseVersion.MatchString(v) || pseudoVersion.MatchString(v) {
		return devVersion
	}
	return v
}

var (
	// releaseVersion is vMAJOR.MINOR.PATCH with an optional pre-release and
	// no build metadata (Go adds "+dirty" or "+incompatible" there).
	releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	// pseudoVersion matches the forms Go gives to an untagged commit:
	// vX.0.0-yyyymmddhhmmss-abcdef123456, vX.Y.(Z+1)-0.yyyymmddhhmmss-...,
	// vX.Y.Z-pre.0.yyyymmddhhmmss-...
	pseudoVersion = regexp.MustCompile(`-(?:[0-9A-Za-z-]+\.)*(?:0\.)?[0-9]{14}-[0-9A-Za-z]{12}$`)
)
