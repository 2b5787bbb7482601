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

// placeholders answers {fulfilment.version}, {fulfilment.resource} and
// {fulfilment.upstream} for a request: one replacer provider per version
// and mapped resource, made once when the handler is provisioned, so a
// request only adds it to its replacer. (Setting the three as the
// replacer's static values took its mutex and a map assignment each, and
// made the map every later placeholder and the proxy's clean-up of its
// own values go through longer.)
type placeholders []versionPlaceholders

type versionPlaceholders struct {
	version    *versioning.Version
	byResource map[string]caddy.ReplacerFunc
}

func newPlaceholders(t *versioning.Table) placeholders {
	var ps placeholders
	for _, v := range t.Versions() {
		vp := versionPlaceholders{version: v, byResource: map[string]caddy.ReplacerFunc{}}
		for _, res := range v.MappedResources() {
			vp.byResource[res] = placeholderFunc(v, res)
		}
		ps = append(ps, vp)
	}
	return ps
}

// of returns the provider of m's placeholders: the one made for its
// version and resource, or a new one for a resource that only
// pass_unmapped serves.
func (ps placeholders) of(m versioning.Mapping) caddy.ReplacerFunc {
	for i := range ps {
		if ps[i].version == m.Version {
			if f, ok := ps[i].byResource[m.Resource]; ok {
				return f
			}
			break
		}
	}
	return placeholderFunc(m.Version, m.Resource)
}

// placeholderFunc answers the placeholders of resource in version v. Its
// values are interface values made here, once, so that answering them
// allocates nothing.
func placeholderFunc(v *versioning.Version, resource string) caddy.ReplacerFunc {
	name, res := any(v.Name), any(resource)
	var upstream any
	if v.Upstream != "" {
		upstream = v.Upstream
	}
	return func(key string) (any, bool) {
		switch key {
		case placeholderVersion:
			return name, true
		case placeholderResource:
			return res, true
		case placeholderUpstream:
			return upstream, upstream != nil
		}
		return nil, false
	}
}
