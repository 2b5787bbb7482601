package feed

import "time"

// MaxRejected is how many rejected changes a feed keeps to show.
const MaxRejected = 100

// Rejected is one change that was skipped because it could not be turned
// into events.
type Rejected struct {
	Seq        uint64    `json:"seq"`
	ChangeID   string    `json:"change_id,omitempty"`
	Partner    string    `json:"partner,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Change     string    `json:"change,omitempty"`
	Reason     string    `json:"reason"`
	Source     string    `json:"source"` // "poll" or "push"
	RejectedAt time.Time `json:"rejected_at"`
	Raw        string    `json:"raw,omitempty"` // the change as received, cut at 512 bytes
}
