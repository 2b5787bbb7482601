package caddymodule

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// feedSet holds a data directory's feed readers, one per feed name. It is a
// long-lived service of the shared state, so a config reload finds the
// running readers and applies the new settings to them (one reader per feed
// across reloads); a feed left out of the new config is stopped.
type feedSet struct {
	store  func(name string) feed.Store // the backend's store of each feed
	logger *zap.Logger

	mu    sync.Mutex
	feeds map[string]*feed.Feed
}

// liveFeedSets are the open feed sets, for the metrics collector.
var liveFeedSets sync.Map // *feedSet → struct{}

func newFeedSet(store func(name string) feed.Store, logger *zap.Logger) *feedSet {
	s := &feedSet{store: store, logger: logger, feeds: map[string]*feed.Feed{}}
	liveFeedSets.Store(s, struct{}{})
	return s
}

// feedSetOf returns the data directory's feed set (created empty if needed).
func feedSetOf(st *sharedState, logger *zap.Logger) (*feedSet, error) {
	v, err := st.service("feeds", func() (any, error) { return newFeedSet(st.Stores.Feed, logger), nil })
	if err != nil {
		return nil, err
	}
	return v.(*feedSet), nil
}

// get returns the feed named name, or nil.
func (s *feedSet) get(name string) *feed.Feed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feeds[name]
}

// list returns the feeds sorted by name.
func (s *feedSet) list() []*feed.Feed {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*feed.Feed, 0, len(s.feeds))
	for _, f := range s.feeds {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *feed.Feed) int {
		if a.Name() < b.Name() {
			return -1
		}
		return 1
	})
	return out
}

// apply makes the running feeds match cfgs.
func (s *feedSet) apply(cfgs []*FeedConfig, pub feed.Publisher, partners feed.Partners) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]bool{}
	for _, c := range cfgs {
		if c == nil {
			continue
		}
		want[c.Name] = true
		settings := feed.Settings{Publisher: pub, Partners: partners, Mapping: c.mapping, Poll: c.pollConfig()}
		if f, ok := s.feeds[c.Name]; ok {
			if err := f.Apply(settings); err != nil {
				return err
			}
			s.logger.Info("feed reader kept across reload", zap.String("feed", c.Name))
			continue
		}
		f, err := feed.New(feed.Options{
			Name: c.Name, Store: s.store(c.Name), Logger: s.logger,
			DedupeWindow: time.Duration(c.DedupeWindow),
		}, settings)
		if err != nil {
			return err
		}
		f.Start()
		s.feeds[c.Name] = f
		st := f.Status()
		s.logger.Info("feed reader started", zap.String("feed", c.Name), zap.String("mode", st.Mode),
			zap.String("url", st.URL), zap.String("cursor", st.Cursor))
	}
	for name, f := range s.feeds {
		if !want[name] {
			_ = f.Close()
			delete(s.feeds, name)
			s.logger.Info("feed reader stopped: no longer configured", zap.String("feed", name))
		}
	}
	return nil
}

// Close stops every reader (the data directory is closing).
func (s *feedSet) Close() error {
	liveFeedSets.Delete(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, f := range s.feeds {
		_ = f.Close()
		delete(s.feeds, name)
	}
	return nil
}

// startFeeds starts (or, on a reload, re-configures) the feed readers.
func (a *App) startFeeds(st *sharedState) error {
	set, err := feedSetOf(st, a.logger.Named("feed"))
	if err != nil {
		return err
	}
	pub := a.webhookService()
	if pub == nil {
		if len(a.Feeds) == 0 {
			return nil
		}
		return fmt.Errorf("the webhook service is not running")
	}
	return st.applyFor(a, "feeds", func(to *App) error { return set.apply(to.Feeds, pub, to.feedPartnerKind) })
}
