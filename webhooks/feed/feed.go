package feed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Publisher durably queues events; webhooks.Service implements it. with
// (writes of this feed's Store, PageWrites) is committed in the same
// transaction as the queued deliveries, so a Publisher's queue must be of
// the same backend as the feed's Store.
type Publisher interface {
	Publish(partnerID string, events []webhooks.Event, with webhooks.TxWrites) (int, error)
}

// KeyedPublisher is a Publisher that can give the deliveries of an event
// stable ids from a key (webhooks.Service does). The feed reader uses it
// when the Publisher has it: then the events of a change read again after
// Reset with forgetSeen reach receivers with the x-hook-ids they had.
type KeyedPublisher interface {
	PublishKeyed(partnerID string, events []webhooks.Event, keys []string, with webhooks.TxWrites) (int, error)
}

// SubscriptionSyncer is a Publisher whose subscriptions may be changed by
// other processes (webhooks.Service): SyncSubscriptions makes the
// subscriptions the next publishes fan out to hold every one committed
// before the call. The feed reader calls it once per batch with events,
// after the batch was read and before its events are published; an error
// fails the batch (it is read again), as publishing it could miss a
// subscription.
type SubscriptionSyncer interface {
	SyncSubscriptions() error
}

// Partners tells whether a partner exists and whether it is a consolidation
// partner. An error means the partners cannot be looked up right now (the
// batch is retried later; nothing is rejected for it).
type Partners func(id string) (consolidation bool, ok bool, err error)

// Settings are what a config reload may change. A zero Poll.URL means no
// polling (a push-only feed).
type Settings struct {
	Publisher Publisher
	Partners  Partners
	Mapping   *Mapping
	Poll      PollConfig
}

// Options create a Feed.
type Options struct {
	Name   string // [A-Za-z0-9_.-]+, part of a backend's keys
	Store  Store  // this feed's state; required
	Logger *zap.Logger
	// DedupeWindow is how long a done change id is remembered, so that a
	// re-delivered change (a cursor going backwards, a repeated push) is not
	// turned into events twice. Default 7 days.
	DedupeWindow time.Duration
	Clock        func() time.Time // default time.Now
	Rand         func() float64   // default math/rand/v2.Float64 (back-off jitter)
}

// DefaultDedupeWindow is the default Options.DedupeWindow.
const DefaultDedupeWindow = 7 * 24 * time.Hour

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidName reports whether name can name a feed.
func ValidName(name string) bool { return validName.MatchString(name) }

// Feed turns one upstream feed's changes into events: polled (Poll) or pushed
// (Ingest). Create it once per feed and data dir; Apply new settings on a
// config reload.
type Feed struct {
	name   string
	st     Store
	logger *zap.Logger
	window time.Duration
	clock  func() time.Time
	rand   func() float64

	settings atomic.Pointer[Settings]
	mu       sync.Mutex // serialises processing (dedupe check, then write)

	leaser Leaser     // st as a Leaser; nil: this reader always reads
	lmu    sync.Mutex // guards lease; taken before mu, never after
	lease  leaseState
	reader atomic.Pointer[ReaderStatus] // the lease as last seen, for Status

	counters counters

	smu    sync.Mutex // guards the fields below
	rej    []Rejected // last MaxRejected, oldest first
	rejTot uint64
	poll   pollState

	wake      chan struct{}
	startOnce sync.Once
	started   bool
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	leaseDone chan struct{}
}

type counters struct {
	read, events, deliveries, rejected, duplicates, pages, pollErrors atomic.Uint64
}

// New opens a feed's state (cursor, rejected changes). Start starts polling.
func New(opts Options, s Settings) (*Feed, error) {
	if !ValidName(opts.Name) {
		return nil, fmt.Errorf("invalid feed name %q: use 1 to 64 of A-Z a-z 0-9 _ . -", opts.Name)
	}
	if opts.Store == nil {
		return nil, errors.New("feed: no store")
	}
	f := &Feed{
		name: opts.Name, st: opts.Store, logger: opts.Logger,
		window: opts.DedupeWindow, clock: opts.Clock, rand: opts.Rand,
		wake: make(chan struct{}, 1), done: make(chan struct{}), leaseDone: make(chan struct{}),
	}
	f.leaser, _ = opts.Store.(Leaser)
	if f.logger == nil {
		f.logger = zap.NewNop()
	}
	if f.window <= 0 {
		f.window = DefaultDedupeWindow
	}
	if f.clock == nil {
		f.clock = time.Now
	}
	if f.rand == nil {
		f.rand = rand.Float64
	}
	if err := f.Apply(s); err != nil {
		return nil, err
	}
	cur, err := f.st.Cursor()
	if err != nil {
		return nil, fmt.Errorf("feed %s: reading cursor: %w", f.name, err)
	}
	f.poll.cursor, f.poll.startedAt = cur, f.clock()
	if f.rej, f.rejTot, err = f.st.Rejected(); err != nil {
		return nil, fmt.Errorf("feed %s: reading rejected changes: %w", f.name, err)
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, nil
}

// Start starts the poll loop (once), which stays idle while the settings
// have no URL.
func (f *Feed) Start() {
	f.startOnce.Do(func() {
		f.started = true
		go f.loop()
		if f.leaser != nil {
			go f.keepLease()
		} else {
			close(f.leaseDone)
		}
	})
}

// Apply replaces the settings (a config reload). The poll loop picks them up
// at once.
func (f *Feed) Apply(s Settings) error {
	if s.Publisher == nil || s.Partners == nil {
		return errors.New("feed: settings need a Publisher and Partners")
	}
	if s.Mapping == nil {
		m, err := NewMapping(nil)
		if err != nil {
			return err
		}
		s.Mapping = m
	}
	p, err := s.Poll.withDefaults()
	if err != nil {
		return fmt.Errorf("feed %s: %w", f.name, err)
	}
	s.Poll = p
	f.settings.Store(&s)
	f.wakeUp()
	return nil
}

// wakeUp makes the poll loop poll now.
func (f *Feed) wakeUp() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Name returns the feed's name.
func (f *Feed) Name() string { return f.name }

// Close stops the poll loop promptly; an in-flight request is cancelled and
// its page is read again after a restart (or by the instance that takes
// the lease over: Close releases it).
func (f *Feed) Close() error {
	f.cancel()
	f.startOnce.Do(func() {}) // no start after Close
	if f.started {
		<-f.done
		<-f.leaseDone
	}
	return f.releaseLease()
}
