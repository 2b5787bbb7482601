#!/usr/bin/env bash
# Builds ./caddy: Caddy's standard modules, the Fulfilgate gateway and the WMS
# simulator used by the demo. Safe to run twice.
#
# With xcaddy on PATH it runs xcaddy. Without it, it builds cmd/fulfilgate,
# which is the main package xcaddy generates for the same plugins (Caddy's
# cmd/caddy/main.go plus blank imports), with xcaddy's flags. Either way the
# same modules end up in the same kind of binary.
set -euo pipefail
cd "$(dirname "$0")"

out=${CADDY_OUTPUT:-./caddy}
module=github.com/fulfilgate/fulfilgate
caddy_version=$(go list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)

if command -v xcaddy >/dev/null 2>&1 && [ -z "${FULFILGATE_NO_XCADDY:-}" ]; then
  echo "xcaddy.sh: building with xcaddy (Caddy $caddy_version)"
  xcaddy build "$caddy_version" \
    --output "$out" \
    --with "$module=." \
    --with "$module/wmssim"
else
  echo "xcaddy.sh: xcaddy not found; building cmd/fulfilgate with xcaddy's flags (Caddy $caddy_version)"
  CGO_ENABLED=${CGO_ENABLED:-0} go build -trimpath -ldflags "-w -s" -o "$out" ./cmd/fulfilgate
fi

echo "xcaddy.sh: built $out; Fulfilgate modules in it:"
"$out" list-modules | grep -E '^(fulfilment|http\.handlers\.(fulfilment|wms)|admin\.api\.fulfilment)' || {
  echo "xcaddy.sh: no Fulfilgate modules found in $out" >&2
  exit 1
}
