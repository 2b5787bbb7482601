package webhooks

import (
	"errors"
	"fmt"
)

// QueueEntryOf is the queue entry of a record stored at schedule position
// pos, its id, partner and subscription read from the record: how a queue
// copied from another store (its positions and records) is queued again.
func QueueEntryOf(pos, record []byte) (QueueEntry, error) {
	d, err := unmarshalDelivery(record)
	if err != nil {
		return QueueEntry{}, fmt.Errorf("queued delivery: %w", err)
	}
	_, id, ok := ParseSchedulePos(pos)
	if !ok || id != d.ID {
		return QueueEntry{}, fmt.Errorf("queued delivery %s: its schedule position does not name it", d.ID)
	}
	return QueueEntry{Pos: pos, ID: d.ID, PartnerID: d.PartnerID, SubscriptionID: d.SubscriptionID, Record: record}, nil
}

// DeadLetterOf is the dead letter of a stored dead record, its id,
// partner, subscription and expiry read from the record.
func DeadLetterOf(record []byte) (DeadLetter, error) {
	d, err := unmarshalDelivery(record)
	if err != nil {
		return DeadLetter{}, fmt.Errorf("dead letter: %w", err)
	}
	if d.ID == "" || d.Expires.IsZero() {
		return DeadLetter{}, errors.New("dead letter: the record has no id or no expiry")
	}
	return DeadLetter{ID: d.ID, PartnerID: d.PartnerID, SubscriptionID: d.SubscriptionID, Expires: d.Expires, Record: record}, nil
}
