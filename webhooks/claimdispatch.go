package webhooks

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// claimBatch bounds the deliveries one claim takes.
const claimBatch = 1024

// claimTimeout bounds one claim, renewal or release in the database.
const claimTimeout = 30 * time.Second

// claimPoll is the longest the dispatcher of a shared queue waits without
// claiming: deliveries whose instance died become due again when their
// lease runs out, and nobody is told.
const claimPoll = 5 * time.Second

// claimLease is how long a claimed delivery stays leased to this instance
// unless renewed: three attempt timeouts. The dispatcher renews the leases
// of the deliveries it holds (waiting for a slot, in flight, or waiting for
// their outcome to be written) every attempt timeout, so a lease runs out
// only when its instance stopped renewing: it died, or lost the database
// for that long.
func (c *settings) claimLease() time.Duration { return 3 * c.opts.Timeout }

// claimPerPartner is how many of one partner's deliveries a claim takes:
// twice what the partner may have in flight, so its next attempts are at
// hand, and not more, so its backlog stays in the queue for the other
// instances.
func (c *settings) claimPerPartner() int {
	return min(max(2*c.opts.PerPartnerConcurrency, 1), maxReadyPerPartner/2)
}

// claimPass is pass for a shared queue: it claims due deliveries (the
// partners that have enough ready skipped) into the partners' ready queues
// and starts every ready delivery it can. The claimed deliveries are this
// instance's until they are settled, or released when it stops.
func (s *Service) claimPass(now time.Time) (passResult, error) {
	sc := &s.sched
	sc.scanMu.Lock()
	defer sc.scanMu.Unlock()
	cfg := s.cur()
	perPartner := cfg.claimPerPartner()

	sc.mu.Lock()
	room := min(maxReady-sc.readyN, claimBatch)
	var skip []string
	for p, q := range sc.ready {
		if q.n >= max(perPartner/2, 1) {
			skip = append(skip, p)
		}
	}
	sc.mu.Unlock()

	var res passResult
	var corrupt, unready [][]byte
	if room > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		got, next, err := s.claimer.Claim(ctx, ClaimRequest{Now: now, Lease: cfg.claimLease(), Max: room,
			PerPartner: perPartner, Skip: skip})
		cancel()
		if err != nil {
			return res, err
		}
		res.nextDue, res.more = next, len(got) == room
		sc.mu.Lock()
		for _, e := range got {
			sc.claimed[e.ID] = e.Pos
			d, err := unmarshalDelivery(e.Record)
			if err != nil {
				corrupt = append(corrupt, e.Pos)
				delete(sc.claimed, e.ID)
				continue
			}
			if !sc.enqueue(d, e.Pos) { // its partner's ready queue is full: not expected, given perPartner
				delete(sc.held, d.PartnerID)
				delete(sc.claimed, e.ID)
				unready = append(unready, e.Pos)
			}
		}
		sc.mu.Unlock()
		// Undecodable ones took their partner's share of the claim: claim
		// again once they are set aside.
		res.more = res.more || len(corrupt) > 0
	}
	sc.mu.Lock()
	res.dispatched = s.dispatch(cfg)
	sc.mu.Unlock()
	if len(corrupt) > 0 {
		s.quarantine(corrupt)
	}
	if len(unready) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		err := s.claimer.Release(ctx, unready)
		cancel()
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// heldPositions lists the positions of the deliveries this instance has
// claimed and not yet settled.
func (s *Service) heldPositions() [][]byte {
	sc := &s.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := make([][]byte, 0, len(sc.claimed))
	for _, pos := range sc.claimed {
		out = append(out, pos)
	}
	return out
}

// renewLeases extends the leases of the deliveries this instance holds,
// every attempt timeout, until the service closes.
func (s *Service) renewLeases() {
	defer s.loops.Done()
	timer := time.NewTimer(s.cur().opts.Timeout)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		}
		cfg := s.cur()
		if held := s.heldPositions(); len(held) > 0 {
			ctx, cancel := context.WithTimeout(s.ctx, claimTimeout)
			_, err := s.claimer.Renew(ctx, held, s.clock().Add(cfg.claimLease()))
			cancel()
			if err != nil && s.ctx.Err() == nil {
				s.logger().Warn("webhooks: renewing the leases of claimed deliveries", zap.Int("count", len(held)), zap.Error(err))
			}
		}
		timer.Reset(cfg.opts.Timeout)
	}
}

// releaseHeld gives back the deliveries this instance claimed and did not
// settle (not started, or cancelled by Close), so that the other instances
// attempt them at once rather than after their lease.
func (s *Service) releaseHeld(ctx context.Context) {
	held := s.heldPositions()
	if len(held) == 0 {
		return
	}
	if err := s.claimer.Release(ctx, held); err != nil {
		s.logger().Warn("webhooks: releasing claimed deliveries (other instances attempt them when their lease runs out)",
			zap.Int("count", len(held)), zap.Error(err))
		return
	}
	sc := &s.sched
	sc.mu.Lock()
	clear(sc.claimed)
	sc.mu.Unlock()
}

// listen subscribes to the shared queue's wake-ups; without them the
// dispatcher polls every claimPoll.
func (s *Service) listen() <-chan struct{} {
	wake, err := s.claimer.Wakeups(s.ctx, func(err error) {
		s.logger().Warn("webhooks: listening for queued deliveries", zap.Error(err))
	})
	if err != nil {
		s.logger().Warn("webhooks: not listening for queued deliveries; polling instead", zap.Duration("every", claimPoll), zap.Error(err))
		return nil
	}
	return wake
}
