package portal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Limits of sessions: the defaults of the directive's options and their
// bounds.
const (
	DefaultIdle     = 30 * time.Minute
	DefaultAbsolute = 12 * time.Hour
	MaxAbsolute     = 7 * 24 * time.Hour
	// touchEvery: a session's last use is written at most this often, so
	// a page view costs no write; the idle limit is exact to within it.
	touchEvery = time.Minute
	// maxUserAgent bounds the user agent kept with a session.
	maxUserAgent = 200
)

// sessionPrefix starts the id of every session.
const sessionPrefix = "ps"

// ErrNoSession: the session token is unknown, revoked, signed out or
// expired (not told apart).
var ErrNoSession = errors.New("no valid session")

// Limits are a session's idle and absolute limits.
type Limits struct {
	Idle     time.Duration
	Absolute time.Duration
}

// Normalize fills the defaults and checks the bounds: idle at least a
// minute and no longer than absolute, absolute at most MaxAbsolute.
func (l *Limits) Normalize() error {
	if l.Idle == 0 {
		l.Idle = DefaultIdle
	}
	if l.Absolute == 0 {
		l.Absolute = DefaultAbsolute
	}
	if l.Idle < time.Minute || l.Absolute < l.Idle || l.Absolute > MaxAbsolute {
		return fmt.Errorf("session limits: idle %v and absolute %v: idle must be at least 1m and at most the absolute limit, which is at most %v",
			l.Idle, l.Absolute, MaxAbsolute)
	}
	return nil
}

// Session is a partner's signed-in session.
type Session struct {
	ID      string
	Partner string
	Expires time.Time
	// token is the session's cookie value, the key of its CSRF token.
	token string
}

// NewSession is what Exchange returns: the session and its cookie value,
// which the caller sets and never logs.
type NewSession struct {
	Session
	Token string
}

// Exchange takes a sign-in link (it serves once) and opens a session for
// its partner under limits (normalized). addr and userAgent are kept for
// the operator's list. The caller checks that the partner still exists and
// is enabled (Partner in the answer).
func (s *Service) Exchange(linkToken string, limits Limits, addr, userAgent string) (NewSession, error) {
	if err := limits.Normalize(); err != nil {
		return NewSession{}, err
	}
	l, err := s.takeLink(linkToken)
	if err != nil {
		return NewSession{}, err
	}
	c, err := s.newCredential(sessionPrefix)
	if err != nil {
		return NewSession{}, err
	}
	if len(userAgent) > maxUserAgent {
		userAgent = userAgent[:maxUserAgent]
	}
	now := s.clock().UTC()
	rec := SessionRecord{ID: c.id, Partner: l.Partner, Hash: c.hash(), Created: now, LastSeen: now,
		Expires: now.Add(limits.Absolute), Idle: limits.Idle, Addr: addr, UserAgent: userAgent}
	if err := s.store.PutSession(rec); err != nil {
		return NewSession{}, fmt.Errorf("storing the session: %w", err)
	}
	s.log.Info("portal session opened", zap.String("partner_id", l.Partner), zap.String("session_id", c.id), zap.String("link_id", l.ID))
	s.pruneSometimes()
	return NewSession{Session: Session{ID: c.id, Partner: l.Partner, Expires: rec.Expires, token: c.String()}, Token: c.String()}, nil
}

// expired reports whether r has ended at now.
func (r SessionRecord) expired(now time.Time) bool {
	return !now.Before(r.Expires) || (r.Idle > 0 && !now.Before(r.LastSeen.Add(r.Idle)))
}

// Check returns the live session of a cookie value, noting its use;
// ErrNoSession for anything else. An expired session is deleted.
func (s *Service) Check(token string) (Session, error) {
	c, ok := parseCredential(token, sessionPrefix)
	if !ok {
		return Session{}, ErrNoSession
	}
	r, err := s.store.Session(c.id)
	if errors.Is(err, ErrNotFound) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("reading the session: %w", err)
	}
	if !c.matches(r.Hash) {
		return Session{}, ErrNoSession
	}
	now := s.clock()
	if r.expired(now) {
		if err := s.store.DeleteSession(r.ID); err != nil && !errors.Is(err, ErrNotFound) {
			return Session{}, fmt.Errorf("deleting an expired session: %w", err)
		}
		return Session{}, ErrNoSession
	}
	if now.Sub(r.LastSeen) >= touchEvery {
		if err := s.store.TouchSession(r.ID, now.UTC()); errors.Is(err, ErrNotFound) {
			return Session{}, ErrNoSession
		} else if err != nil {
			return Session{}, fmt.Errorf("noting the session's use: %w", err)
		}
	}
	return Session{ID: r.ID, Partner: r.Partner, Expires: r.Expires, token: token}, nil
}

// csrfLabel separates the CSRF token from any other use of a session token.
const csrfLabel = "fulfilgate portal csrf"

// CSRFToken is the synchronizer token of the session: a MAC of the
// session's own cookie value, so only a page of this session can know it
// (it is never stored, and it changes with each session).
func (s Session) CSRFToken() string {
	m := hmac.New(sha256.New, []byte(s.token))
	m.Write([]byte(csrfLabel))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether token is the session's CSRF token (constant
// time).
func (s Session) CheckCSRF(token string) bool {
	return s.token != "" && hmac.Equal([]byte(token), []byte(s.CSRFToken()))
}

// SignOut ends the session (its cookie stops working at once).
func (s *Service) SignOut(sess Session) error {
	if err := s.store.DeleteSession(sess.ID); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("deleting the session: %w", err)
	}
	s.log.Info("portal session signed out", zap.String("partner_id", sess.Partner), zap.String("session_id", sess.ID))
	return nil
}

// SessionInfo describes a session for the operator, without its secret.
type SessionInfo struct {
	ID        string    `json:"id"`
	Partner   string    `json:"partner"`
	Created   time.Time `json:"created"`
	LastSeen  time.Time `json:"last_seen"`
	Expires   time.Time `json:"expires"`
	Addr      string    `json:"addr,omitempty"`
	UserAgent string    `json:"user_agent,omitempty"`
}

// Sessions lists the live sessions (of partner, when not empty), oldest
// first; expired ones are deleted on the way.
func (s *Service) Sessions(partner string) ([]SessionInfo, error) {
	recs, err := s.store.Sessions()
	if err != nil {
		return nil, fmt.Errorf("reading sessions: %w", err)
	}
	now := s.clock()
	out := []SessionInfo{}
	for _, r := range recs {
		if r.expired(now) {
			if err := s.store.DeleteSession(r.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("deleting an expired session: %w", err)
			}
			continue
		}
		if partner != "" && r.Partner != partner {
			continue
		}
		out = append(out, SessionInfo{ID: r.ID, Partner: r.Partner, Created: r.Created, LastSeen: r.LastSeen,
			Expires: r.Expires, Addr: r.Addr, UserAgent: r.UserAgent})
	}
	return out, nil
}

// RevokeSession ends session id for the operator; ErrNotFound when there
// is no such session. It returns the session's partner.
func (s *Service) RevokeSession(id string) (string, error) {
	r, err := s.store.Session(id)
	if err != nil {
		return "", err
	}
	if err := s.store.DeleteSession(id); err != nil {
		return "", err
	}
	s.log.Info("portal session revoked", zap.String("partner_id", r.Partner), zap.String("session_id", id))
	return r.Partner, nil
}

// pruneEvery: expired sessions, links and old audit records are deleted at
// most this often, on the way of a sign-in.
const pruneEvery = time.Hour

// pruneSometimes deletes expired sessions and links and audit records past
// AuditRetention, at most once per pruneEvery; failures are logged (the
// next sign-in tries again).
func (s *Service) pruneSometimes() {
	now := s.clock()
	s.pruneMu.Lock()
	if !s.lastPrune.IsZero() && now.Sub(s.lastPrune) < pruneEvery {
		s.pruneMu.Unlock()
		return
	}
	s.lastPrune = now
	s.pruneMu.Unlock()
	if _, err := s.Sessions(""); err != nil {
		s.log.Warn("pruning portal sessions", zap.Error(err))
	}
	if links, err := s.store.Links(); err != nil {
		s.log.Warn("pruning portal links", zap.Error(err))
	} else {
		for _, l := range links {
			if !now.Before(l.Expires) {
				if err := s.store.DeleteLink(l.ID); err != nil && !errors.Is(err, ErrNotFound) {
					s.log.Warn("pruning portal links", zap.Error(err))
				}
			}
		}
	}
	if err := s.store.DeleteAuditBefore(now.Add(-AuditRetention)); err != nil {
		s.log.Warn("pruning the portal audit log", zap.Error(err))
	}
}

// EndPartner ends every session of partner and deletes its unused links:
// for a partner that is disabled or deleted (a partner created again
// under the same id must not find the old one's sessions). It returns how
// many sessions it ended.
func (s *Service) EndPartner(partner string) (int, error) {
	recs, err := s.store.Sessions()
	if err != nil {
		return 0, fmt.Errorf("reading sessions: %w", err)
	}
	n := 0
	for _, r := range recs {
		if r.Partner != partner {
			continue
		}
		if err := s.store.DeleteSession(r.ID); err != nil && !errors.Is(err, ErrNotFound) {
			return n, fmt.Errorf("deleting a session: %w", err)
		}
		n++
	}
	links, err := s.store.Links()
	if err != nil {
		return n, fmt.Errorf("reading links: %w", err)
	}
	for _, l := range links {
		if l.Partner == partner {
			if err := s.store.DeleteLink(l.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return n, fmt.Errorf("deleting a link: %w", err)
			}
		}
	}
	if n > 0 {
		s.log.Info("portal sessions of a partner ended", zap.String("partner_id", partner), zap.Int("sessions", n))
	}
	return n, nil
}
