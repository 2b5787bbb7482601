package webhooks

import (
	"context"
	"time"
)

// Claimer is implemented by a queue that several gateway instances share
// (storage/pgstore). The dispatcher then takes due deliveries by claiming
// them: a claim leases a delivery to this instance, so no other instance
// attempts it while the lease holds, and one whose instance died is due
// again for every instance once its lease has run out. A queue that one
// process owns (Badger) does not implement it: the dispatcher reads its
// schedule.
//
// Settle applies only to deliveries this instance holds or that nobody
// holds: when a lease ran out and another instance claimed the delivery,
// the other's outcome is the one recorded. Settling ends the lease.
type Claimer interface {
	// Claim leases to this instance, until req.Now + req.Lease, up to
	// req.Max deliveries due at req.Now that no instance holds, at most
	// req.PerPartner of each partner and none of the partners in
	// req.Skip, oldest first. It also returns when the first delivery not
	// yet due at req.Now is due (zero: none is queued).
	Claim(ctx context.Context, req ClaimRequest) (entries []QueueEntry, nextDue time.Time, err error)
	// Renew extends this instance's leases of the deliveries at positions
	// until until; those it no longer holds are left alone. It returns how
	// many it extended.
	Renew(ctx context.Context, positions [][]byte, until time.Time) (int, error)
	// Release gives back this instance's leases of the deliveries at
	// positions: they are due again at once for every instance.
	Release(ctx context.Context, positions [][]byte) error
	// Wakeups returns a channel that receives a value (wake-ups coalesce)
	// when any instance queues deliveries or queues them again, and after
	// a lost notification may have been missed; it is closed when ctx
	// ends. Errors after the first are passed to onError.
	Wakeups(ctx context.Context, onError func(error)) (<-chan struct{}, error)
}

// ClaimRequest is what Claimer.Claim takes.
type ClaimRequest struct {
	Now        time.Time
	Lease      time.Duration
	Max        int      // deliveries in all
	PerPartner int      // deliveries of one partner
	Skip       []string // partners whose deliveries are not claimed
}
