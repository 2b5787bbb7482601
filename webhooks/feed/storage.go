package feed

import (
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Store keeps one feed's state: its cursor, the change ids already turned
// into events (seen markers, forgotten after the dedupe window), and the
// last MaxRejected rejected changes with the total ever rejected. A backend
// (storage/badgerstore, ...) implements it, one Store per feed name.
//
// A page's writes (PageWrites) are committed either alone (Commit) or by
// the webhook queue of the same backend in the same transaction as the
// page's deliveries (webhooks.QueueStorage.Enqueue): the cursor is never
// stored before the events of its page.
type Store interface {
	// Cursor returns the stored cursor ("" before the first page).
	Cursor() (string, error)
	// Seen returns which of ids carry a seen marker that has not expired.
	Seen(ids []string) (map[string]bool, error)
	// Rejected returns the kept rejected changes, oldest first (by Seq),
	// and the stored total.
	Rejected() ([]Rejected, uint64, error)
	// PageWrites prepares w's writes, for Commit or for a queue's Enqueue.
	PageWrites(w PageWrites) webhooks.TxWrites
	// Commit commits writes made by PageWrites in one transaction.
	Commit(w webhooks.TxWrites) error
	// ForgetSeen deletes every seen marker of the feed.
	ForgetSeen() error
	// ScanSeen calls fn with each seen marker that has not expired: the
	// change id and when the marker expires, in change id order, until fn
	// returns an error.
	ScanSeen(fn func(changeID string, until time.Time) error) error
}

// Catalog lists the feeds a backend keeps state for (a cursor, seen
// markers or rejected changes), whether or not the configuration still
// names them.
type Catalog interface {
	// FeedNames returns the names, sorted.
	FeedNames() ([]string, error)
}

// PageWrites are the writes that record (part of) a processed batch.
type PageWrites struct {
	// Seen are change ids to mark seen until SeenUntil.
	Seen      []string
	SeenUntil time.Time
	// Rejected are rejected changes, numbered (Seq) up to RejectedTotal,
	// which is stored as the new total when Rejected is not empty. Only the
	// last MaxRejected are kept: a Seq's slot is Seq % MaxRejected.
	Rejected      []Rejected
	RejectedTotal uint64
	// Cursor, when not nil, is stored as the feed's cursor.
	Cursor *string
	// Fence, when not 0, is the token of the lease the page was read under
	// (Leaser): the writes commit only while it is still the feed's token
	// and this instance holds the lease; otherwise the transaction fails
	// with ErrLeaseLost and writes nothing, the queued deliveries it
	// carries included.
	Fence uint64
	// EndLease frees the feed's lease, whichever instance holds it, in the
	// same transaction (a reset: the holder's page in flight is refused,
	// and the next holder reads the new cursor).
	EndLease bool
}
