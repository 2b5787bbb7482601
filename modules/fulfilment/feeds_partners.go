package fulfilment

import "errors"

// errPartnersUnavailable: the token service is not (yet) there; the feed
// retries the batch rather than rejecting its changes.
var errPartnersUnavailable = errors.New("partners are not available")

// feedPartnerKind tells the feed readers whether a partner exists and is a
// consolidation partner, from this config's partners (a disabled partner
// still exists: its events are queued like any other). Without a running
// token service it answers errPartnersUnavailable, and the feed retries the
// batch rather than rejecting its changes.
func (a *App) feedPartnerKind(id string) (consolidation, ok bool, err error) {
	svc := a.TokenService()
	if svc == nil {
		return false, false, errPartnersUnavailable
	}
	p, ok := svc.Partner(id)
	return p.Consolidation, ok, nil
}
