package portal

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Limits of sign-in links.
const (
	DefaultLinkTTL = 15 * time.Minute
	MaxLinkTTL     = 24 * time.Hour
	// MaxOpenLinks is how many unused, unexpired links a partner may have
	// at once: the operator's link creation is rate-limited by it.
	MaxOpenLinks = 5
)

// linkPrefix starts the id of every link.
const linkPrefix = "pl"

// Errors of links.
var (
	// ErrInvalidLink: the link is unknown, already used or expired. The
	// three are not told apart.
	ErrInvalidLink = errors.New("the sign-in link is invalid, expired or already used")
	// ErrTooManyLinks: the partner has MaxOpenLinks unused links.
	ErrTooManyLinks = errors.New("too many unused sign-in links for this partner")
	ErrInvalidTTL   = errors.New("invalid link lifetime")
)

// Link is a new sign-in link; Token is shown once.
type Link struct {
	ID      string    `json:"id"`
	Partner string    `json:"partner"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires"`
}

// CreateLink creates a single-use sign-in link for partner, valid for ttl
// (0: DefaultLinkTTL; at most MaxLinkTTL). The caller checks that the
// partner exists.
func (s *Service) CreateLink(partner string, ttl time.Duration) (Link, error) {
	if ttl == 0 {
		ttl = DefaultLinkTTL
	}
	if ttl < time.Minute || ttl > MaxLinkTTL {
		return Link{}, fmt.Errorf("%w: %v: use between 1m and %v", ErrInvalidTTL, ttl, MaxLinkTTL)
	}
	now := s.clock()
	links, err := s.store.Links()
	if err != nil {
		return Link{}, fmt.Errorf("reading links: %w", err)
	}
	open := 0
	for _, l := range links {
		switch {
		case !now.Before(l.Expires):
			if err := s.store.DeleteLink(l.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return Link{}, fmt.Errorf("deleting an expired link: %w", err)
			}
		case l.Partner == partner:
			open++
		}
	}
	if open >= MaxOpenLinks {
		return Link{}, fmt.Errorf("%w (%d): let them expire or use one", ErrTooManyLinks, open)
	}
	c, err := s.newCredential(linkPrefix)
	if err != nil {
		return Link{}, err
	}
	rec := LinkRecord{ID: c.id, Partner: partner, Hash: c.hash(), Created: now.UTC(), Expires: now.Add(ttl).UTC()}
	if err := s.store.PutLink(rec); err != nil {
		return Link{}, fmt.Errorf("storing the link: %w", err)
	}
	s.log.Info("portal sign-in link created", zap.String("partner_id", partner), zap.String("link_id", c.id))
	return Link{ID: c.id, Partner: partner, Token: c.String(), Expires: rec.Expires}, nil
}

// takeLink checks a link token and deletes the link, so it serves once.
func (s *Service) takeLink(token string) (LinkRecord, error) {
	c, ok := parseCredential(token, linkPrefix)
	if !ok {
		return LinkRecord{}, ErrInvalidLink
	}
	l, err := s.store.Link(c.id)
	if errors.Is(err, ErrNotFound) {
		return LinkRecord{}, ErrInvalidLink
	}
	if err != nil {
		return LinkRecord{}, fmt.Errorf("reading the link: %w", err)
	}
	if !c.matches(l.Hash) {
		return LinkRecord{}, ErrInvalidLink
	}
	// Deleted before it is used: of two exchanges of one link only the
	// one that deletes it goes on.
	if err := s.store.DeleteLink(l.ID); errors.Is(err, ErrNotFound) {
		return LinkRecord{}, ErrInvalidLink
	} else if err != nil {
		return LinkRecord{}, fmt.Errorf("using the link: %w", err)
	}
	if !s.clock().Before(l.Expires) {
		return LinkRecord{}, ErrInvalidLink
	}
	return l, nil
}
