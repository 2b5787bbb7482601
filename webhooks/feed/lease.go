package feed

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// ErrLeaseLost is what a Store returns for writes fenced by a lease token
// (PageWrites.Fence) that is no longer the feed's, or whose lease another
// instance holds: nothing of them was written. The reader that made them
// stops and asks for the lease again.
var ErrLeaseLost = errors.New("the feed's lease is no longer this instance's: another instance reads the feed")

// Lease is a feed's reading lease, as a Leaser reports it.
type Lease struct {
	// Holder names the instance holding the lease ("" when none does).
	Holder string
	// Until is when the lease runs out unless its holder renews it (by the
	// holder's clock).
	Until time.Time
	// Token changes whenever the lease goes to another holder, or to the
	// same one again after it was free; writes fenced by an older token
	// are refused.
	Token uint64
	// Held tells whether the instance that asked holds it.
	Held bool
}

// Leaser is a Store whose feed several gateway instances may read (their
// state in one shared database): only the holder of the feed's lease polls
// it, and the writes of a page are fenced by the lease (PageWrites.Fence),
// so a holder that lost the lease (paused, cut off) never stores a page
// over the new holder's cursor. A Store only one process can open need
// not be a Leaser: its reader always reads.
type Leaser interface {
	// AcquireLease takes the feed's lease for this instance until now+ttl
	// when it is free or ran out (by now), or renews it when this instance
	// holds it, and returns the lease as it stands after the call (Held
	// false: another instance holds it).
	AcquireLease(now time.Time, ttl time.Duration) (Lease, error)
	// ReleaseLease frees the lease if this instance holds it, so that
	// another instance takes the feed over at once.
	ReleaseLease() error
}

// The lease's timing. The holder renews every LeaseRenew (from a goroutine
// of its own, so a slow page does not let the lease run out); an instance
// without the lease asks for it every LeaseRenew. So when the holder dies
// without releasing it (kill -9, a lost host), another instance reads the
// feed at most LeaseTTL+LeaseRenew later (plus the skew of the instances'
// clocks), and a holder survives LeaseTTL/LeaseRenew-1 failed renewals in
// a row.
const (
	LeaseTTL   = 5 * time.Second
	LeaseRenew = time.Second
)

// leaseState is what the reader knows of its lease; guarded by Feed.lmu.
type leaseState struct {
	held      bool
	token     uint64    // the token of the last lease held (0: never held)
	renewedAt time.Time // when the held lease was last taken or renewed
	last      Lease     // the lease as last reported
	askedAt   time.Time // when it was last asked for
}

// holdLease reports whether this reader may read a page now, taking or
// renewing the lease when due (the first poll, LeaseRenew after the last
// renewal, or while another instance holds it). A reader whose store is not
// a Leaser always may. It returns the lease token to fence the page's
// writes with (0: none).
func (f *Feed) holdLease() (fence uint64, err error) {
	if f.leaser == nil {
		return 0, nil
	}
	f.lmu.Lock()
	defer f.lmu.Unlock()
	now := f.clock()
	if f.lease.held && now.Sub(f.lease.renewedAt) < LeaseRenew {
		return f.lease.token, nil
	}
	return f.acquireLocked(now)
}

// errStandby: another instance holds the feed's lease.
var errStandby = errors.New("another instance reads the feed")

// acquireLocked asks for the lease (lmu held) and records the answer. On
// a new token the reader reloads the stored cursor and rejected changes:
// another instance may have moved them.
func (f *Feed) acquireLocked(now time.Time) (uint64, error) {
	defer f.noteLease()
	l, err := f.leaser.AcquireLease(now, LeaseTTL)
	f.lease.askedAt = now
	if err != nil {
		if f.lease.held {
			f.logger.Warn("feed lease could not be renewed; not reading until it is", zap.String("feed", f.name), zap.Error(err))
		}
		f.lease.held = false
		return 0, fmt.Errorf("taking the feed's lease: %w", err)
	}
	was := f.lease
	f.lease.last = l
	if !l.Held {
		f.lease.held = false
		switch {
		case was.held:
			f.logger.Warn("feed lease lost: another instance reads the feed", zap.String("feed", f.name),
				zap.String("holder", l.Holder), zap.Time("lease_until", l.Until))
		case was.askedAt.IsZero() || was.last.Holder != l.Holder:
			f.logger.Info("feed read by another instance", zap.String("feed", f.name),
				zap.String("holder", l.Holder), zap.Time("lease_until", l.Until))
		}
		return 0, errStandby
	}
	if l.Token != was.token {
		if err := f.reload(); err != nil {
			f.lease.held = false
			return 0, err
		}
		f.logger.Info("feed lease taken: this instance reads the feed", zap.String("feed", f.name),
			zap.String("instance", l.Holder), zap.Uint64("token", l.Token), zap.Time("lease_until", l.Until))
	}
	f.lease.held, f.lease.token, f.lease.renewedAt = true, l.Token, now
	return l.Token, nil
}

// reload reads the stored cursor and rejected changes again and drops a
// page being read (another instance may have moved the cursor).
func (f *Feed) reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.st.Cursor()
	if err != nil {
		return fmt.Errorf("feed %s: reading cursor: %w", f.name, err)
	}
	rej, tot, err := f.st.Rejected()
	if err != nil {
		return fmt.Errorf("feed %s: reading rejected changes: %w", f.name, err)
	}
	f.smu.Lock()
	f.poll.cursor, f.poll.gen, f.poll.limit = cur, f.poll.gen+1, 0
	f.poll.startedAt, f.poll.caughtUpAt = f.clock(), time.Time{} // the lag counts from the takeover
	f.rej, f.rejTot = rej, tot
	f.smu.Unlock()
	return nil
}

// leaseLost records that a write fenced by fence was refused: the reader
// stops reading and asks for the lease again at once (to name the new
// holder, or to take the lease when a reset freed it). It returns how long
// to wait before the next poll.
func (f *Feed) leaseLost(fence uint64) time.Duration {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	defer f.noteLease()
	f.logger.Warn("feed lease lost: another instance took the feed over or it was reset; this page was not stored",
		zap.String("feed", f.name), zap.Uint64("token", fence))
	if f.lease.token != fence {
		return 0 // a newer lease is already held
	}
	f.lease.held = false
	if _, err := f.acquireLocked(f.clock()); err != nil {
		return LeaseRenew
	}
	return 0
}

// keepLease renews the held lease every LeaseRenew until the feed closes,
// and wakes the poll loop when the lease was lost (so it asks again and
// waits). A reader whose settings no longer poll (a reload made the feed
// push-only) releases the lease for the instances that still poll.
func (f *Feed) keepLease() {
	defer close(f.leaseDone)
	t := time.NewTicker(LeaseRenew)
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-t.C:
		}
		if f.settings.Load().Poll.URL == "" {
			if err := f.releaseLease(); err != nil {
				f.logger.Warn("releasing the lease of a feed no longer polled", zap.String("feed", f.name), zap.Error(err))
			}
			continue
		}
		f.lmu.Lock()
		if f.lease.held {
			// acquireLocked logs a failure or a loss.
			if _, err := f.acquireLocked(f.clock()); err != nil {
				f.wakeUp() // the poll loop waits for the lease
			}
		}
		f.lmu.Unlock()
	}
}

// releaseLease frees the lease if held (at Close, or when the feed is no
// longer polled), so another instance reads on at once.
func (f *Feed) releaseLease() error {
	if f.leaser == nil {
		return nil
	}
	f.lmu.Lock()
	defer f.lmu.Unlock()
	if !f.lease.held {
		return nil
	}
	f.lease.held = false
	defer f.noteLease()
	if err := f.leaser.ReleaseLease(); err != nil {
		return fmt.Errorf("feed %s: releasing the lease: %w", f.name, err)
	}
	f.logger.Info("feed lease released", zap.String("feed", f.name))
	return nil
}

// ReaderStatus tells which gateway instance reads a feed whose state
// several instances share.
type ReaderStatus struct {
	// Reader names the instance holding the feed's lease ("" when none
	// does).
	Reader string `json:"reader"`
	// ReaderHere tells whether the instance answering holds it.
	ReaderHere bool `json:"reader_here"`
	// LeaseUntil is when the lease runs out unless renewed.
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	// LeaseToken is the lease's fencing token (it changes at each
	// takeover).
	LeaseToken uint64 `json:"lease_token"`
	// LeaseCheckedAt is when this instance last asked for the lease.
	LeaseCheckedAt *time.Time `json:"lease_checked_at,omitempty"`
}

// noteLease stores the lease as last seen for Status (lmu held), which
// so never waits for a lease call in flight: nil when the store is not a
// Leaser, was never asked, or names no holder (one process only).
func (f *Feed) noteLease() {
	l := f.lease.last
	if f.lease.askedAt.IsZero() || (l.Holder == "" && l.Held) {
		f.reader.Store(nil)
		return
	}
	f.reader.Store(&ReaderStatus{Reader: l.Holder, ReaderHere: f.lease.held, LeaseUntil: timePtr(l.Until),
		LeaseToken: l.Token, LeaseCheckedAt: timePtr(f.lease.askedAt)})
}

// readerStatus is a copy of the lease as last seen (see noteLease).
func (f *Feed) readerStatus() *ReaderStatus {
	r := f.reader.Load()
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
