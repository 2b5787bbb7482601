package transfer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
)

// auditSince is the first format version that carries the portal's audit
// log.
const auditSince = 2

// exportAudit writes the portal's whole audit log, oldest first; records
// of the same time keep the store's order.
func exportAudit(out *writer, src Stores) error {
	recs, err := src.Portal().Audit("", time.Time{}, math.MaxInt)
	if err != nil {
		return fmt.Errorf("reading the portal audit log: %w", err)
	}
	slices.Reverse(recs) // the store answers newest first
	for _, r := range recs {
		r.At = r.At.UTC()
		if err := out.line(typeAudit, r); err != nil {
			return err
		}
	}
	return nil
}

// checkAudit refuses an audit record that no gateway writes: one without
// a time, a partner, a known actor or an action. A record of a partner
// that has no partner line is kept: the audit log outlives deleted
// partners, and partners of the configuration are not in the stream.
func checkAudit(r portal.AuditRecord) error {
	switch {
	case r.At.IsZero():
		return errors.New("an audit record without a time")
	case r.Partner == "":
		return errors.New("an audit record without a partner")
	case r.Actor != portal.ActorPartner && r.Actor != portal.ActorOperator:
		return fmt.Errorf("an audit record of actor %q, want %q or %q", r.Actor, portal.ActorPartner, portal.ActorOperator)
	case r.Action == "":
		return errors.New("an audit record without an action")
	}
	return nil
}

// importAudit appends the audit records with their own times, oldest
// first (a stable sort: records of the same time keep the stream's order).
func importAudit(d *dump, dst Stores) error {
	recs := slices.Clone(d.audit)
	slices.SortStableFunc(recs, func(a, b portal.AuditRecord) int { return a.At.Compare(b.At) })
	ps := dst.Portal()
	for i, r := range recs {
		if err := ps.AppendAudit(r); err != nil {
			return fmt.Errorf("storing audit record %d of %d: %w", i+1, len(recs), err)
		}
	}
	return nil
}
