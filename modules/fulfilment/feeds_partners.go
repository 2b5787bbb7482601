package fulfilment

import (
	"errors"
	"fmt"
)

// errPartnersUnavailable: the token service is not (yet) there; the feed
// retries the batch rather than rejecting its changes.
var errPartnersUnavailable = errors.New("partners are not available")

// feedPartnerKind tells the feed readers whether a partner exists and is a
// consolidation partner, from this config's partners (a disabled partner
// still exists: its events are queued like any other); a partner another
// instance sharing the store created a moment ago is found too
// (tokens.Service.FindPartner). Without a running token service, or when
// the store cannot be read, it answers an error, and the feed retries the
// batch rather than rejecting its changes.
func (a *App) feedPartnerKind(id string) (consolidation, ok bool, err error) {
	svc := a.TokenService()
	if svc == nil {
		return false, false, errPartnersUnavailable
	}
	p, ok, err := svc.FindPartner(id)
	if err != nil {
		return false, false, fmt.Errorf("%w: %w", errPartnersUnavailable, err)
	}
	return p.Consolidation, ok, nil
}
