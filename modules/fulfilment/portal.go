package fulfilment

import (
	"github.com/fulfilgate/fulfilgate/portal"
)

// startPortal opens (or, across a reload, reuses) the portal service of
// the data directory: sign-in links, sessions and the audit log. It has no
// settings of its own (the portal handler holds its session limits).
func (a *App) startPortal(st *sharedState) error {
	_, err := st.service("portal", func() (any, error) {
		return portal.Open(portal.Options{Store: st.Stores.Portal(), Logger: a.logger.Named("portal")})
	})
	return err
}

// PortalService returns the data dir's running portal service, or nil
// when no loaded config has it open (the portal then answers 503).
func (a *App) PortalService() *portal.Service {
	if a == nil {
		return nil
	}
	st := a.current()
	if st == nil {
		return nil
	}
	v, ok := st.existing("portal")
	if !ok {
		return nil
	}
	return v.(*portal.Service)
}
