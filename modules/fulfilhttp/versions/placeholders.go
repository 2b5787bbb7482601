package versions

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/versioning"
)

// The placeholders the handler answers for the handlers after it.
const (
	placeholderVersion  = "fulfilment.version"
	placeholderResource = "fulfilment.resource"
	placeholderUpstream = "fulfilment.upstream"
)

// placeholders gives a request's replacer {fulfilment.version},
// {fulfilment.resource} and {fulfilment.upstream}, with values made once
// when the handler is provisioned.
//
// A replacer asks its static values (Set) before its providers (Map), and
// its providers in the order they were added. So:
//
//   - {fulfilment.upstream}, which reverse_proxy dials, is a static value
//     set on every mapping: it replaces whatever an earlier handler set,
//     and comes before every provider, such as one of Caddy's map directive
//     (which a Caddyfile runs before the fulfilment directives) naming
//     fulfilment.upstream as a destination, fed perhaps by a request
//     header. Only the version's configured upstream is ever dialled. A
//     version without one sets nothing, as before.
//   - {fulfilment.version} and {fulfilment.resource} come from one provider
//     per version and mapped resource, which the request adds to its
//     replacer: no mutex, no map assignment, no allocation. A provider an
//     earlier handler added for the same names answers first.
//   - In the site's error routes all three are static values: a request
//     mapped again there (say, to send a version to a standby) then has the
//     second mapping's values, not the first provider's. And Map, unlike
//     Set, takes no lock, while there the replacer may still be read by a
//     dial the proxy's transport started for the failed attempt and did
//     not wait for (the attempt took an idle connection instead), when the
//     transport's TLS server name has placeholders.
type placeholders []versionPlaceholders

type versionPlaceholders struct {
	version    *versioning.Version
	upstream   any // version.Upstream, made an interface value once; nil without one
	byResource map[string]caddy.ReplacerFunc
}

func newPlaceholders(t *versioning.Table) placeholders {
	var ps placeholders
	for _, v := range t.Versions() {
		vp := versionPlaceholders{version: v, upstream: upstreamValue(v), byResource: map[string]caddy.ReplacerFunc{}}
		for _, res := range v.MappedResources() {
			vp.byResource[res] = placeholderFunc(v, res)
		}
		ps = append(ps, vp)
	}
	return ps
}

// upstreamValue is v's upstream as the value of {fulfilment.upstream};
// nil when v has none.
func upstreamValue(v *versioning.Version) any {
	if v.Upstream == "" {
		return nil
	}
	return v.Upstream
}

// give makes m's placeholders known to repl; inErrors says whether the
// request is in the server's error routes.
func (ps placeholders) give(repl *caddy.Replacer, m versioning.Mapping, inErrors bool) {
	f, upstream := ps.of(m)
	if upstream != nil {
		repl.Set(placeholderUpstream, upstream)
	}
	if !inErrors {
		repl.Map(f)
		return
	}
	for _, k := range [...]string{placeholderVersion, placeholderResource} {
		v, _ := f(k)
		repl.Set(k, v)
	}
}

// of returns the provider of m's {fulfilment.version} and
// {fulfilment.resource} and the value of its {fulfilment.upstream} (nil
// for none): those made for its version and resource, or new ones for a
// resource that only pass_unmapped serves.
func (ps placeholders) of(m versioning.Mapping) (caddy.ReplacerFunc, any) {
	for i := range ps {
		if ps[i].version != m.Version {
			continue
		}
		if f, ok := ps[i].byResource[m.Resource]; ok {
			return f, ps[i].upstream
		}
		break
	}
	return placeholderFunc(m.Version, m.Resource), upstreamValue(m.Version)
}

// placeholderFunc answers {fulfilment.version} and {fulfilment.resource}
// of resource in version v. Its values are interface values made here,
// once, so that answering them allocates nothing.
func placeholderFunc(v *versioning.Version, resource string) caddy.ReplacerFunc {
	name, res := any(v.Name), any(resource)
	return func(key string) (any, bool) {
		switch key {
		case placeholderVersion:
			return name, true
		case placeholderResource:
			return res, true
		}
		return nil, false
	}
}
