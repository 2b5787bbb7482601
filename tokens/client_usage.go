package tokens

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// usageEvery: a client's last use is written at most this often. The token
// endpoint then writes at most once per client per interval (a partner
// fetching a token every few seconds costs no write each time), and "last
// used" is exact to within it.
const usageEvery = 5 * time.Minute

// loadUsage reads the clients' last uses. Called by load.
func (s *Service) loadUsage() error {
	usage, err := s.store.ClientUsage()
	if err != nil {
		return fmt.Errorf("reading the clients' last use: %w", err)
	}
	for id, at := range usage {
		s.usage.Store(id, at)
	}
	return nil
}

// noteUse notes that client id got a token at now, writing it when the
// last write is older than usageEvery. A failed write is logged, never
// refused: the last use is for display.
func (s *Service) noteUse(id string, now time.Time) {
	if v, ok := s.usage.Load(id); ok && now.Sub(v.(time.Time)) < usageEvery {
		return
	}
	s.usage.Store(id, now.UTC())
	if err := s.store.TouchClient(id, now.UTC()); err != nil {
		s.log.Warn("noting a client's last use", zapClient(id), zap.Error(err))
	}
}

// lastUsed returns when client id last got a token (zero: never, as far as
// the store knows).
func (s *Service) lastUsed(id string) time.Time {
	if v, ok := s.usage.Load(id); ok {
		return v.(time.Time)
	}
	return time.Time{}
}
