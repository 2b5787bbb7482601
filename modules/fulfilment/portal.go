package fulfilment

import (
	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
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

// NoteClientLimit records the per-partner client limit of a portal handler
// of this config (its max_clients). The smallest one noted wins, so that
// the operator's add-client never lets a partner hold more clients than a
// portal of the config would.
func (a *App) NoteClientLimit(n int) {
	if n < 1 || n > tokens.MaxClientLimit {
		return
	}
	for {
		cur := a.clientLimit.Load()
		if cur != 0 && cur <= int32(n) {
			return
		}
		if a.clientLimit.CompareAndSwap(cur, int32(n)) {
			return
		}
	}
}

// ClientLimit is how many clients one partner may have (those of the
// configuration included), for the portal and the operator alike: the
// smallest max_clients of the config's portal handlers, or
// tokens.DefaultClientLimit when the config has none.
func (a *App) ClientLimit() int {
	if n := a.clientLimit.Load(); n > 0 {
		return int(n)
	}
	return tokens.DefaultClientLimit
}
