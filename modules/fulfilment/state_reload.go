package fulfilment

import (
	"go.uber.org/zap"
)

// A reload starts the new config while the old one still runs, and both
// use the data directory's one token service, webhook dispatcher and feed
// readers. The new config's Start applies its settings to them; if the
// reload then fails (a later part of this app's Start, or another app,
// fails), Caddy keeps the old config running, and the parts must run with
// its settings again.

// applyFor puts a's settings into part with apply, and on success records
// a as the config whose settings part runs with. restoreFrom calls apply
// with another config when a's config does not become the running one. If
// apply fails half-way (the feed set can: one reader refused after others
// changed), the settings in force before are put back at once; for the
// token service, whose Configure changes nothing on error, that is a
// harmless repeat.
func (s *sharedState) applyFor(a *App, part string, apply func(*App) error) error {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	if s.inForce == nil {
		s.inForce, s.apply = map[string]*App{}, map[string]func(*App) error{}
	}
	s.apply[part] = apply
	if err := apply(a); err != nil {
		if prev := s.inForce[part]; prev != nil && prev != a {
			s.reapplyLocked(part, prev)
		}
		return err
	}
	s.inForce[part] = a
	return nil
}

// restoreFrom is called when config gone lets go of the data directory;
// to is the config Caddy runs on it (nil: none). Every part that runs with
// gone's settings gets to's settings back: gone was the new config of a
// reload that failed (a later part of its Start, or another app, failed),
// and Caddy keeps running to. A config replaced by a successful reload is
// not the one in force anywhere, and at shutdown nothing runs: then nothing
// happens.
func (s *sharedState) restoreFrom(gone, to *App) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	if to == nil || to == gone {
		return
	}
	for part, a := range s.inForce {
		if a == gone && s.reapplyLocked(part, to) {
			to.logger.Info("the running config's " + part + " settings restored (the new config did not start)")
		}
	}
}

// reapplyLocked puts to's settings into part; called with cfgMu held.
func (s *sharedState) reapplyLocked(part string, to *App) bool {
	if err := s.apply[part](to); err != nil {
		to.logger.Error("restoring the running config's "+part+" settings", zap.Error(err))
		return false
	}
	s.inForce[part] = to
	return true
}
