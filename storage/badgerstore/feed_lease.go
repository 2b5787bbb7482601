package badgerstore

import (
	"fmt"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// soleReaderToken is the lease token of every feed of a Badger data dir:
// one process holds the data dir, so its reader always holds the lease,
// which never changes hands.
const soleReaderToken = 1

// AcquireLease always grants the lease: no other instance can open the
// data dir. It names no holder and never runs out.
func (s *feedStore) AcquireLease(time.Time, time.Duration) (feed.Lease, error) {
	return feed.Lease{Token: soleReaderToken, Held: true}, nil
}

// ReleaseLease has nothing to free.
func (s *feedStore) ReleaseLease() error { return nil }

// checkFence refuses writes fenced by a token the lease never had.
func checkFence(name string, fence uint64) error {
	if fence != 0 && fence != soleReaderToken {
		return fmt.Errorf("feed %s: writes fenced by lease token %d, the lease's is %d: %w", name, fence, soleReaderToken, feed.ErrLeaseLost)
	}
	return nil
}

var _ feed.Leaser = (*feedStore)(nil)
