package caddymodule

import "errors"

// errPartnersUnavailable: the token service is not (yet) there; the feed
// retries the batch rather than rejecting its changes.
var errPartnersUnavailable = errors.New("partners are not available")

// feedPartnerKind tells the feed readers whether a partner exists and is a
// consolidation partner, from this config's partners (a disabled partner
// still exists: its events are queued like any other). It reads the token
// service set by startTokens, which runs before startFeeds, rather than
// a.partner, which answers false until the app's Start has finished.
func (a *App) feedPartnerKind(id string) (consolidation, ok bool, err error) {
	if a.Tokens == nil || a.Tokens.svc == nil {
		return false, false, errPartnersUnavailable
	}
	p, ok := a.Tokens.svc.Partner(id)
	return p.Consolidation, ok, nil
}
