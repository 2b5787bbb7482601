package portal

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// AuditRetention is how long audit records are kept.
const AuditRetention = 90 * 24 * time.Hour

// Audit limits.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// Actors of the audit log.
const (
	ActorPartner  = "partner"
	ActorOperator = "operator"
)

// Record appends r to the audit log (its time is now) and logs it. It
// never holds a secret: callers pass ids and outcomes only.
func (s *Service) Record(r AuditRecord) error {
	r.At = s.clock().UTC()
	if r.Outcome == "" {
		r.Outcome = "ok"
	}
	s.log.Info("portal audit", zap.String("partner_id", r.Partner), zap.String("actor", r.Actor),
		zap.String("session_id", r.Session), zap.String("action", r.Action), zap.String("target", r.Target),
		zap.String("outcome", r.Outcome), zap.String("detail", r.Detail))
	if err := s.store.AppendAudit(r); err != nil {
		return fmt.Errorf("writing the audit log: %w", err)
	}
	return nil
}

// Audit returns the audit log, newest first: at most limit records (0:
// DefaultAuditLimit; at most MaxAuditLimit) at or after since, of partner
// when it is not empty.
func (s *Service) Audit(partner string, since time.Time, limit int) ([]AuditRecord, error) {
	if limit <= 0 {
		limit = DefaultAuditLimit
	}
	limit = min(limit, MaxAuditLimit)
	recs, err := s.store.Audit(partner, since, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	if recs == nil {
		recs = []AuditRecord{}
	}
	return recs, nil
}
