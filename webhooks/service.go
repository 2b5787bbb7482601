package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Service is the webhook subsystem of one data directory: subscriptions, the
// durable queue, the dispatcher and the dead letters. Create it with New,
// run the dispatcher with Start, stop it with Close.
type Service struct {
	cfg      atomic.Pointer[settings] // swapped whole by Reconfigure
	reconfMu sync.Mutex               // one Reconfigure at a time
	store    Storage
	claimer  Claimer // store, when other instances share it; nil otherwise
	subs     *SubscriptionStore
	clock    func() time.Time // fixed at New

	ctx    context.Context // cancelled by Close: in-flight attempts stop
	cancel context.CancelFunc

	randMu sync.Mutex // Options.Rand need not be safe for concurrent use

	sched scheduler
	wake  <-chan struct{} // the shared queue's wake-ups (nil: none)

	acks          chan ackResult
	committerDone chan struct{}
	settleBuf     []Settlement // the committer's, reused
	doneBuf       []bool       // the committer's, reused
	stopCommit    chan struct{}

	queued, dead atomic.Int64

	startOnce, closeOnce sync.Once
	loops                sync.WaitGroup // dispatcher loop, maintenance loop
	workers              sync.WaitGroup // attempt goroutines
	closed               atomic.Bool

	// testBeforeRelease, if set (by tests only), runs in an attempt's
	// goroutine after its outcome is handed over, before its slot is freed.
	testBeforeRelease func()
}

// New opens the webhook state in opts.Storage: it loads the subscriptions,
// counts the queue and starts the acknowledgement committer. It does not
// start the dispatcher (Start does), so RunDue can drive it in tests.
func New(opts Options) (*Service, error) {
	cfg, err := newSettings(opts, nil)
	if err != nil {
		return nil, err
	}
	s := &Service{store: cfg.opts.Storage, clock: cfg.opts.Clock,
		acks: make(chan ackResult, 4*cfg.opts.Workers), committerDone: make(chan struct{}),
		stopCommit: make(chan struct{})}
	s.claimer, _ = s.store.(Claimer)
	s.cfg.Store(cfg)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	// A shared storage's changes are followed from before the
	// subscriptions are read, so that none made meanwhile is missed.
	notifier, notifies := s.store.(ChangeNotifier)
	var changes <-chan Change
	if notifies {
		if changes, err = notifier.Changes(s.ctx); err != nil {
			s.cancel()
			return nil, fmt.Errorf("webhooks: following the storage's changes: %w", err)
		}
	}
	if s.subs, err = newSubscriptionStore(s.store, &s.cfg, notifies || s.claimer != nil); err != nil {
		s.cancel()
		return nil, err
	}
	s.sched.init(s.claimer != nil)
	if err := s.recount(); err != nil {
		s.cancel()
		return nil, err
	}
	if notifies {
		interval := opts.RefreshInterval
		if interval <= 0 {
			interval = DefaultRefreshInterval
		}
		s.loops.Add(1)
		go s.follow(changes, interval)
	}
	go s.committer()
	return s, nil
}

// recount sets the queued and dead counters from the store.
func (s *Service) recount() error {
	q, d, err := s.store.Depth()
	if err != nil {
		return fmt.Errorf("webhooks: counting the queue: %w", err)
	}
	s.queued.Store(q)
	s.dead.Store(d)
	return nil
}

// Subscriptions returns the subscription store.
func (s *Service) Subscriptions() *SubscriptionStore { return s.subs }

// RetryPolicy returns the effective retry policy.
func (s *Service) RetryPolicy() RetryPolicy { return s.cur().retry }

// depthRecount is how often the depth of a queue shared with other
// instances is counted again in the store.
const depthRecount = 30 * time.Second

// Depth returns the number of queued and dead deliveries as this service
// counts them: exact for a queue of its own; for a queue shared with other
// instances (Claimer) counted in the store every 30 s and moved by this
// instance's own changes between (CurrentDepth counts now).
func (s *Service) Depth() (queued, dead int64) { return max(s.queued.Load(), 0), max(s.dead.Load(), 0) }

// CurrentDepth returns the number of queued and dead deliveries now: for a
// queue shared with other instances it counts them in the store (so every
// instance answers alike); otherwise it is Depth.
func (s *Service) CurrentDepth() (queued, dead int64, err error) {
	if s.claimer != nil {
		if err := s.recount(); err != nil {
			return 0, 0, err
		}
	}
	queued, dead = s.Depth()
	return queued, dead, nil
}

func (s *Service) reportDepth() { s.cur().opts.Observer.Depth(s.Depth()) }

func (s *Service) rand() float64 {
	s.randMu.Lock()
	defer s.randMu.Unlock()
	return s.cur().opts.Rand()
}

// Start starts the dispatcher loop and the maintenance loop (dead-letter
// purge, value-log GC), and for a shared queue the lease renewal and the
// wake-up listener. Calling it again, or after Close, does nothing.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		if s.closed.Load() {
			return
		}
		if s.claimer != nil {
			s.wake = s.listen()
			s.loops.Add(1)
			go s.renewLeases()
		}
		s.loops.Add(2)
		go s.loop()
		go s.maintenance()
	})
}

// Close stops the dispatcher promptly: in-flight attempts are cancelled and
// stay queued (delivery is at least once), finished attempts are recorded,
// and a shared queue's deliveries this instance claimed and did not settle
// are released to the other instances. It does not close the storage. It
// returns within about 2.5 s.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.startOnce.Do(func() {}) // a later Start does nothing
		s.cancel()
		deadline := time.After(1500 * time.Millisecond)
		waitOr(&s.loops, deadline)
		waitOr(&s.workers, deadline)
		close(s.stopCommit)
		select {
		case <-s.committerDone:
		case <-deadline:
			s.logger().Warn("webhooks: committer did not stop in time")
		}
		if s.claimer != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			s.releaseHeld(ctx)
			cancel()
		}
	})
	return nil
}

func waitOr(wg *sync.WaitGroup, deadline <-chan time.Time) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-deadline:
	}
}

// maintenance purges expired dead letters and trims the delivery logs
// hourly and, for a backend that wants it (Maintainer), runs its upkeep
// every ten minutes.
func (s *Service) maintenance() {
	defer s.loops.Done()
	s.hourly()
	purge := time.NewTicker(time.Hour)
	gc := time.NewTicker(10 * time.Minute)
	defer purge.Stop()
	defer gc.Stop()
	var recount <-chan time.Time // a shared queue changes under other instances too
	if s.claimer != nil {
		t := time.NewTicker(depthRecount)
		defer t.Stop()
		recount = t.C
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-purge.C:
			s.hourly()
		case <-gc.C:
			if m, ok := s.store.(Maintainer); ok {
				m.Maintain(s.ctx)
			}
		case <-recount:
			if err := s.recount(); err != nil {
				s.logger().Warn("webhooks: counting the queue", zap.Error(err))
			} else {
				s.reportDepth()
			}
		}
	}
}

// hourly purges the expired dead letters and trims the delivery logs.
func (s *Service) hourly() {
	if _, err := s.PurgeDead(); err != nil {
		s.logger().Warn("webhooks: purging dead letters", zap.Error(err))
	}
	if _, err := s.TrimDeliveryLog(); err != nil {
		s.logger().Warn("webhooks: trimming the delivery logs", zap.Error(err))
	}
}

var errClosed = errors.New("webhooks: service closed")
