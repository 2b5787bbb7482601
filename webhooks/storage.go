package webhooks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Storage is what the webhook subsystem keeps: subscriptions, the queue of
// deliveries with their attempt logs, and the dead letters. A backend
// (storage/badgerstore, ...) implements it; the rules (validation, retry
// policy, signing, fairness) stay in this package. Records are opaque
// bytes to a backend (this package encodes them, record.go); the fields
// beside them are what a backend may index on.
type Storage interface {
	SubscriptionStorage
	QueueStorage
	DeadLetterStorage
	DeliveredStorage
}

// ErrUnavailable is what a backend's error wraps when the database could
// not be reached or the connection to it was lost: nothing was stored, and
// the caller may try again later.
var ErrUnavailable = errors.New("storage: database unavailable")

// ErrConflict is what a backend may return when a transaction lost a race
// with another (it retries what it can itself; a caller may try again).
var ErrConflict = errors.New("storage: transaction conflict")

// SubscriptionStorage keeps subscriptions with a uniqueness index (one
// subscription per partner, event and notification URL: the key is
// SubscriptionUniqueKey) and a count per partner.
type SubscriptionStorage interface {
	// Subscriptions returns every stored subscription, in any order.
	Subscriptions() ([]Subscription, error)
	// SubscriptionsAt returns every stored subscription, in any order,
	// with the SubscriptionsVersion they are at: both read in one snapshot.
	SubscriptionsAt() ([]Subscription, uint64, error)
	// SubscriptionsVersion returns the version of the stored
	// subscriptions, in one small read: every committed create and delete,
	// by any process sharing the storage, changes it. A backend only one
	// process opens returns 0: that process's index is told of each of its
	// writes and has nothing to compare.
	SubscriptionsVersion() (uint64, error)
	// CreateSubscription stores sub atomically, unless sub's partner already
	// has a subscription with sub's unique key (it is returned, with created
	// false) or has limit subscriptions or more (ErrLimit). Concurrent
	// creates of the same subscription store one. ctx bounds the retries
	// of a create that races others.
	CreateSubscription(ctx context.Context, sub Subscription, limit int) (stored Subscription, created bool, err error)
	// DeleteSubscription deletes partnerID's subscription id and returns it;
	// a missing id or another partner's is ErrNotFound.
	DeleteSubscription(partnerID, id string) (Subscription, error)
	// RepairSubscriptions makes the indexes agree with the subscriptions
	// (uniqueness entries naming no subscription, wrong counts) and says
	// how many entries it fixed; a backend whose indexes cannot disagree
	// returns zeros.
	RepairSubscriptions() (orphans, counts int, err error)
}

// QueueEntry is one queued delivery: its schedule position (SchedulePos of
// its next attempt and its id) and its encoded record. ID, PartnerID and
// SubscriptionID repeat what the record holds, for backends that index them.
type QueueEntry struct {
	Pos            []byte
	ID             string
	PartnerID      string
	SubscriptionID string
	Record         []byte
}

// SettleKind is what becomes of a delivery an attempt settled
// (QueueStorage.Settle).
type SettleKind uint8

// Settlement kinds.
const (
	SettleDone  SettleKind = iota // delivered or dropped: the entry at Pos is removed; an Entry with a Record is kept as delivered (DeliveredStorage)
	SettleRetry                   // the entry at Pos is replaced by Entry (a later position)
	SettleDead                    // the entry at Pos becomes the dead letter Entry, purged after Expires
)

// Settlement is the outcome of one attempt, to be recorded.
type Settlement struct {
	Pos  []byte // the schedule position the delivery was read at
	Kind SettleKind
	// Entry is, for SettleRetry, the new entry; for SettleDead, the dead
	// letter (Pos unused); for SettleDone, when its Record is not nil, the
	// delivered record to keep, at Pos SchedulePos(delivered at, id).
	Entry QueueEntry
	// Keep, for SettleDone with a record, bounds the subscription's
	// delivered records: once the record is written the subscription holds
	// at most Keep of them, the others being the latest written before.
	Keep    int
	Expires time.Time // SettleDead: when the dead letter is purged
}

// TxWrites are writes of another store of the same backend (a feed's seen
// markers, rejected changes and cursor) that QueueStorage.Enqueue commits in
// the same transaction as the last of its deliveries: all of them or none.
// A queue given writes of another backend fails and writes nothing.
type TxWrites interface {
	// Backend names the backend whose transaction applies them.
	Backend() string
}

// QueueStorage is the durable schedule of deliveries, ordered by position
// (next attempt time, then id).
type QueueStorage interface {
	// Enqueue makes entries durable (fsynced when it returns nil) and
	// commits with (may be nil) in the same transaction as the last of
	// them. Entries that do not fit one transaction are split over several,
	// in order; with goes with the last, so it is never committed before
	// every entry is.
	Enqueue(entries []QueueEntry, with TxWrites) error
	// ReadSchedule opens a reader over the schedule (a snapshot, or a
	// view that may show writes made while it is open). The caller closes
	// it.
	ReadSchedule() (ScheduleReader, error)
	// Settle records the outcomes of a batch of attempts, as few
	// transactions as possible; done[i] tells whether batch[i] was
	// committed (an unrecorded one stays at its old position). The error
	// describes the failures, if any.
	Settle(batch []Settlement, done []bool) error
	// Quarantine moves the entries at positions (whose records do not
	// decode) out of the schedule to a place where they are kept aside,
	// and returns how many it moved.
	Quarantine(positions [][]byte) (int, error)
	// Depth counts the queued entries and the dead letters.
	Depth() (queued, dead int64, err error)
}

// ScheduleReader iterates the schedule in position order.
// It is used by one goroutine at a time.
type ScheduleReader interface {
	// Seek moves to the first entry at or after pos (nil: the first).
	Seek(pos []byte)
	Valid() bool
	Next()
	// Pos returns the current entry's position, a copy the caller keeps.
	Pos() []byte
	// Value calls fn with the current entry's record, valid during fn only.
	Value(fn func(record []byte) error) error
	Close()
}

// DeadLetterStorage keeps the deliveries that ran out of attempts until
// they expire.
type DeadLetterStorage interface {
	// ScanDead calls fn with each dead letter's record, soonest expiry
	// first, until fn returns false or an error.
	ScanDead(fn func(record []byte) (bool, error)) error
	// GetDead returns the record of dead letter id, or ErrNotFound.
	GetDead(id string) ([]byte, error)
	// Revive moves dead letters back to the queue: for each, if dead
	// letter ID (expiring at Expires) still exists, it is removed and Entry
	// queued, atomically; those gone meanwhile are skipped. It returns how
	// many it moved.
	Revive(items []Revival) (int, error)
	// PurgeDead deletes at most limit dead letters that expired at or
	// before now, soonest first, and returns how many.
	PurgeDead(now time.Time, limit int) (int, error)
	// LoadDead stores dead letters as they are, in as few transactions as
	// it can: the import of dead letters copied from another store into
	// one that holds none of their ids.
	LoadDead(letters []DeadLetter) error
}

// DeadLetter is one stored dead letter: its encoded record and the fields
// beside it a backend may index on (DeadLetterOf reads them from the
// record).
type DeadLetter struct {
	ID             string
	PartnerID      string
	SubscriptionID string
	Expires        time.Time // when it is purged
	Record         []byte
}

// DeliveredStorage keeps recently delivered deliveries for the partners'
// delivery log: Settle writes them (SettleDone with a record), by
// subscription and position (SchedulePos of the delivery time and the id),
// at most Settlement.Keep per subscription; the service trims those that
// are too old, and those of deleted subscriptions, hourly.
type DeliveredStorage interface {
	// ScanDelivered calls fn with subscriptionID's delivered records, the
	// latest position first, until fn returns false or an error.
	ScanDelivered(subscriptionID string, fn func(record []byte) (bool, error)) error
	// TrimDelivered deletes subscriptionID's delivered records beyond the
	// keep latest, and those at positions before SchedulePos(before, ""),
	// and returns how many it deleted.
	TrimDelivered(subscriptionID string, keep int, before time.Time) (int, error)
	// DeliveredSubscriptions lists the subscriptions that have delivered
	// records (deleted subscriptions included), in any order.
	DeliveredSubscriptions() ([]string, error)
	// LoadDelivered stores delivered records as they are, each under its
	// SubscriptionID at its Pos, without trimming: the import of a
	// delivery log copied from another store (DeliveredEntryOf) into one
	// that holds no delivered records of their subscriptions. The
	// positions of one subscription are distinct. Once loaded they are
	// read, bounded and trimmed like settled ones.
	LoadDelivered(entries []QueueEntry) error
}

// Revival is one dead letter to queue again.
type Revival struct {
	ID      string
	Expires time.Time // its expiry, as settled
	Entry   QueueEntry
}

// Maintainer is implemented by a backend that wants periodic upkeep
// (Badger's value-log GC): the service calls Maintain every ten minutes
// while it runs; Maintain returns soon after ctx ends.
type Maintainer interface {
	Maintain(ctx context.Context)
}

// SchedulePos is the schedule position of a delivery id due at t: 8 bytes
// of big-endian Unix nanoseconds (negative times as 0), then the id. Byte
// order is (time, id) order.
func SchedulePos(t time.Time, id string) []byte {
	k := make([]byte, 0, 8+len(id))
	k = binary.BigEndian.AppendUint64(k, uint64(max(t.UnixNano(), 0)))
	return append(k, id...)
}

// ParseSchedulePos splits a position back into its time and id.
func ParseSchedulePos(pos []byte) (time.Time, string, bool) {
	if len(pos) < 8 {
		return time.Time{}, "", false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(pos))), string(pos[8:]), true
}

// Claimer is implemented by a queue that several gateway instances share
// (storage/pgstore). The dispatcher then takes due deliveries by claiming
// them: a claim leases a delivery to this instance, so no other instance
// attempts it while the lease holds, and one whose instance died is due
// again for every instance once its lease has run out. A queue that one
// process owns (Badger) does not implement it: the dispatcher reads its
// schedule.
//
// Settle applies only to deliveries this instance holds or that nobody
// holds: when a lease ran out and another instance claimed the delivery,
// the other's outcome is the one recorded. Settling ends the lease.
type Claimer interface {
	// Claim leases to this instance, until req.Now + req.Lease, up to
	// req.Max deliveries due at req.Now that no instance holds, at most
	// req.PerPartner of each partner and none of the partners in
	// req.Skip, oldest first. It also returns when the first delivery not
	// yet due at req.Now is due (zero: none is queued).
	Claim(ctx context.Context, req ClaimRequest) (entries []QueueEntry, nextDue time.Time, err error)
	// Renew extends this instance's leases of the deliveries at positions
	// until until; those it no longer holds are left alone. It returns how
	// many it extended.
	Renew(ctx context.Context, positions [][]byte, until time.Time) (int, error)
	// Release gives back this instance's leases of the deliveries at
	// positions: they are due again at once for every instance.
	Release(ctx context.Context, positions [][]byte) error
	// Wakeups returns a channel that receives a value (wake-ups coalesce)
	// when any instance queues deliveries or queues them again, and after
	// a lost notification may have been missed; it is closed when ctx
	// ends. Errors after the first are passed to onError.
	Wakeups(ctx context.Context, onError func(error)) (<-chan struct{}, error)
}

// ClaimRequest is what Claimer.Claim takes.
type ClaimRequest struct {
	Now        time.Time
	Lease      time.Duration
	Max        int      // deliveries in all
	PerPartner int      // deliveries of one partner
	Skip       []string // partners whose deliveries are not claimed
}

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

// DeliveredEntryOf is the entry of a delivered record, its id, partner
// and subscription read from the record, at the position a settlement
// keeps it at: SchedulePos of the record's Due (the time it was
// delivered) and its id. How a delivery log copied from another store is
// checked and loaded again.
func DeliveredEntryOf(record []byte) (QueueEntry, error) {
	d, err := unmarshalDelivery(record)
	if err != nil {
		return QueueEntry{}, fmt.Errorf("delivered record: %w", err)
	}
	if d.ID == "" || d.SubscriptionID == "" || d.PartnerID == "" || d.Due.IsZero() {
		return QueueEntry{}, errors.New("delivered record: the record has no id, subscription, partner or delivery time")
	}
	return QueueEntry{Pos: SchedulePos(d.Due, d.ID), ID: d.ID, PartnerID: d.PartnerID, SubscriptionID: d.SubscriptionID, Record: record}, nil
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
