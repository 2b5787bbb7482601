#!/usr/bin/env bash
# Builds ./caddy: Caddy's standard modules, the Fulfilgate gateway and the WMS
# simulator used by the demo. Safe to run twice.
#
# With xcaddy on PATH it runs
#
#   xcaddy build <caddy version> --with github.com/fulfilgate/fulfilgate=. \
#                                --with github.com/fulfilgate/fulfilgate/wmssim
#
# Without it (or when xcaddy fails), it builds cmd/fulfilgate, which is the
# main package xcaddy generates for the same plugins, with xcaddy's build tags
# and flags. Either way the same modules end up in the same kind of binary.
#
# Environment: CADDY_OUTPUT (default ./caddy); FULFILGATE_NO_XCADDY=1 skips
# xcaddy; FULFILGATE_XCADDY_STRICT=1 fails instead of falling back (CI).
set -euo pipefail
cd "$(dirname "$0")"

out=${CADDY_OUTPUT:-./caddy}
module=github.com/fulfilgate/fulfilgate
# xcaddy's own build flags (xcaddy v0.4.7): no BadgerDB, MySQL or PostgreSQL
# drivers of Caddy's dependencies, no debug symbols, no local paths.
tags=nobadger,nomysql,nopgx

# Every module the gateway needs, verified against go.sum, into the module
# cache: xcaddy's `go get` then finds them there.
go mod download
caddy_version=$(go list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)

# fallthrough_goproxy prints the configured module proxies separated by "|"
# (go on with the next one after any error) and ending in "off". This module
# is not published: a proxy answers 404, 410 or, for some, 403 when xcaddy's
# `go get` asks it for the module's versions, and Go goes on to the local
# replacement only after a "not found" answer. "|off" turns any answer into
# "not found"; modules the proxies cannot serve come from the module cache.
fallthrough_goproxy() {
  local list out="" p
  list=$(go env GOPROXY)
  IFS=',|' read -ra parts <<<"$list"
  for p in "${parts[@]}"; do
    p=${p// /}
    case "$p" in "" | direct | off) ;; *) out+="$p|" ;; esac
  done
  echo "${out}off"
}

build_with_go() {
  CGO_ENABLED=${CGO_ENABLED:-0} go build -trimpath -ldflags "-w -s" -tags "$tags" -o "$out" ./cmd/fulfilgate
}

if command -v xcaddy >/dev/null 2>&1 && [ -z "${FULFILGATE_NO_XCADDY:-}" ]; then
  echo "xcaddy.sh: building with xcaddy (Caddy $caddy_version); $module comes from this directory"
  if ! GOPROXY=$(fallthrough_goproxy) xcaddy build "$caddy_version" \
    --output "$out" \
    --with "$module=$PWD" \
    --with "$module/wmssim"; then
    if [ -n "${FULFILGATE_XCADDY_STRICT:-}" ]; then
      echo "xcaddy.sh: xcaddy failed (see above)" >&2
      exit 1
    fi
    echo "xcaddy.sh: xcaddy failed (see above); building cmd/fulfilgate, the main package xcaddy generates, with go build and xcaddy's tags and flags instead" >&2
    build_with_go
  fi
else
  echo "xcaddy.sh: xcaddy not found; building cmd/fulfilgate with xcaddy's tags and flags (Caddy $caddy_version)"
  build_with_go
fi

echo "xcaddy.sh: built $out; Fulfilgate modules in it:"
"$out" list-modules | grep -E '^(fulfilment|http\.handlers\.(fulfilment|wms)|admin\.api\.fulfilment)' || {
  echo "xcaddy.sh: no Fulfilgate modules found in $out" >&2
  exit 1
}
