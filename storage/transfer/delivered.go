package transfer

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deliveredSince is the first format version that carries the log of
// delivered deliveries.
const deliveredSince = 3

// deliveredLine is one delivered delivery of a subscription's delivery
// log: its position (the time it was delivered, then its id) and its
// record with the attempt log. The subscription, id and partner repeat
// what the record holds, for a reader of the stream; Import checks that
// they agree.
type deliveredLine struct {
	Subscription string `json:"subscription"`
	Pos          []byte `json:"pos"`
	ID           string `json:"id"`
	Partner      string `json:"partner"`
	Record       []byte `json:"record"`
}

// exportDelivered writes the delivery log of every subscription in the
// stream, by subscription id, oldest position first. The records of a
// deleted subscription are left out: no partner sees them, the next
// hourly sweep deletes them, and Import refuses a record whose
// subscription it cannot check it against.
func exportDelivered(out *writer, src Stores) error {
	ws := src.Webhooks()
	subs, err := ws.Subscriptions()
	if err != nil {
		return fmt.Errorf("reading the subscriptions: %w", err)
	}
	exists := map[string]bool{}
	for _, s := range subs {
		exists[s.ID] = true
	}
	withLog, err := ws.DeliveredSubscriptions()
	if err != nil {
		return fmt.Errorf("reading the delivery log: %w", err)
	}
	slices.Sort(withLog)
	for _, sub := range withLog {
		if !exists[sub] {
			continue
		}
		var entries []webhooks.QueueEntry
		err := ws.ScanDelivered(sub, func(v []byte) (bool, error) {
			e, err := webhooks.DeliveredEntryOf(bytes.Clone(v))
			if err != nil {
				return false, err
			}
			if e.SubscriptionID != sub {
				return false, fmt.Errorf("delivered record %s of subscription %s is stored under subscription %s", e.ID, e.SubscriptionID, sub)
			}
			entries = append(entries, e)
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("reading the delivery log of subscription %s: %w", sub, err)
		}
		slices.SortFunc(entries, func(a, b webhooks.QueueEntry) int { return bytes.Compare(a.Pos, b.Pos) })
		for _, e := range entries {
			l := deliveredLine{Subscription: sub, Pos: e.Pos, ID: e.ID, Partner: e.PartnerID, Record: e.Record}
			if err := out.line(typeDelivered, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// addDelivered checks a delivered line against its own record and adds
// it to d: the line's subscription, id and partner are the record's, its
// position is the one the record is kept at, and no record comes twice.
func (d *dump) addDelivered(l deliveredLine) error {
	if d.header.Version < deliveredSince {
		return fmt.Errorf("a version %d export holds no delivered records (they came in version %d): it is damaged", d.header.Version, deliveredSince)
	}
	e, err := webhooks.DeliveredEntryOf(l.Record)
	if err != nil {
		return err
	}
	// PostgreSQL's text holds no NUL, so such a record would be refused
	// there halfway through the import, and stored by Badger.
	if strings.ContainsRune(e.ID+e.SubscriptionID+e.PartnerID, 0) {
		return fmt.Errorf("delivered record %q: its id, subscription or partner holds a NUL character", e.ID)
	}
	switch {
	case l.ID != e.ID:
		return fmt.Errorf("the line names delivery %q but its record is of delivery %q", l.ID, e.ID)
	case l.Subscription != e.SubscriptionID:
		return fmt.Errorf("the line names subscription %q but its record is of subscription %q", l.Subscription, e.SubscriptionID)
	case l.Partner != e.PartnerID:
		return fmt.Errorf("the line names partner %q but its record is of partner %q", l.Partner, e.PartnerID)
	case !bytes.Equal(l.Pos, e.Pos):
		return fmt.Errorf("delivered record %s: the line's position is not the one of its record's delivery time and id", e.ID)
	}
	key := e.SubscriptionID + "\x00" + string(e.Pos)
	if d.deliveredAt[key] {
		return fmt.Errorf("delivered record %s of subscription %s comes twice", e.ID, e.SubscriptionID)
	}
	d.deliveredAt[key] = true
	d.delivered = append(d.delivered, e)
	return nil
}

// checkDelivered refuses a delivered record whose subscription has no
// subscription line, or is another partner's: a delivery log is shown to
// the subscription's partner, so a record of another partner in it would
// leak that partner's deliveries. (Unlike the audit log, which outlives
// deleted partners, a deleted subscription's log is shown to no one and
// deleted by the next sweep; Export leaves it out.)
func (d *dump) checkDelivered() error {
	partnerOf := make(map[string]string, len(d.subs))
	for _, s := range d.subs {
		partnerOf[s.ID] = s.PartnerID
	}
	for _, e := range d.delivered {
		p, ok := partnerOf[e.SubscriptionID]
		switch {
		case !ok:
			return fmt.Errorf("the export holds delivered record %s of subscription %q but no subscription line for it: it is damaged", e.ID, e.SubscriptionID)
		case p != e.PartnerID:
			return fmt.Errorf("delivered record %s of subscription %s is of partner %q, but the subscription is partner %q's: refused", e.ID, e.SubscriptionID, e.PartnerID, p)
		}
	}
	return nil
}

func importDelivered(d *dump, dst Stores) error {
	recs := slices.Clone(d.delivered)
	slices.SortFunc(recs, func(a, b webhooks.QueueEntry) int {
		if c := strings.Compare(a.SubscriptionID, b.SubscriptionID); c != 0 {
			return c
		}
		return bytes.Compare(a.Pos, b.Pos)
	})
	for chunk := range slices.Chunk(recs, importChunk) {
		if err := dst.Webhooks().LoadDelivered(chunk); err != nil {
			return fmt.Errorf("storing the delivery log: %w", err)
		}
	}
	return nil
}
