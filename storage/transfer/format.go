// Package transfer copies a gateway's whole state from one storage backend
// to another as a stream of JSON lines (NDJSON): Export writes it, Import
// reads it into an empty store. It works through the domain packages'
// storage interfaces (tokens.Store, webhooks.Storage, feed.Store,
// feed.Catalog and portal.Store), so every backend can be a source or a target, and it
// imports no database driver and no Caddy.
//
// The stream, format version 3, one JSON object a line, each with its
// "type":
//
//	header              format "fulfilgate-export", version, source backend, created
//	pepper              the key of the clients' secret hashes (base64)
//	partner             a partner created at run time, with its webhook key
//	client              a client: the keyed hash of its secret, never the secret
//	signing_key         a generated token signing key, with its private material
//	static_webhook_key  the generated webhook key of a partner of the configuration
//	subscription        a webhook subscription
//	delivery            a queued delivery: schedule position and record (with its attempt log)
//	dead_letter         a dead delivery's record (with its attempt log and expiry)
//	delivered           a delivered delivery of a subscription's delivery log: subscription, position
//	                    (delivery time and id), id, partner and record (with its attempt log)
//	feed                a feed's cursor and total of rejected changes
//	feed_seen           a change id a feed has done, and until when it is remembered
//	feed_rejected       one of a feed's last rejected changes
//	portal_audit        an entry of the partner portal's audit log, with its own time (oldest first)
//	end                 how many lines of each type came before: a stream without it is cut short
//
// Version 3 added delivered lines and version 2 portal_audit lines: a
// version 2 stream has no delivered lines, a version 1 stream neither
// those nor portal_audit lines, and a reader refuses a line of a type its
// header's version does not have. A reader refuses a stream of a newer
// version than its own and a line type it does not know, so an older
// gateway refuses a version 3 stream rather than drop its delivery log.
//
// The delivery log of a subscription that is not in the stream (deleted,
// its log not yet swept) is left out: no partner sees it. Import refuses
// a delivered line whose subscription has no subscription line, or whose
// record is of another partner than the subscription's, since the log is
// shown to the subscription's partner.
//
// The portal's sign-in links and sessions are never carried: they are
// short-lived credentials of one gateway, and partners sign in again after
// the move.
//
// Lines of one type are sorted (by id, position, subscription and
// position, or name), so exporting the same state twice gives the same
// lines but for the header's time.
package transfer

import (
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Format names the stream in its header.
const Format = "fulfilgate-export"

// Version is the format version this package writes and the newest it
// reads.
const Version = 3

// Stores are a backend's stores, as the gateway opens them.
type Stores interface {
	Tokens() tokens.Store
	Webhooks() webhooks.Storage
	Feed(name string) feed.Store
	feed.Catalog
	Portal() portal.Store
}

// Line types.
const (
	typeHeader     = "header"
	typePepper     = "pepper"
	typePartner    = "partner"
	typeClient     = "client"
	typeKey        = "signing_key"
	typeStaticKey  = "static_webhook_key"
	typeSub        = "subscription"
	typeDelivery   = "delivery"
	typeDead       = "dead_letter"
	typeDelivered  = "delivered"
	typeFeed       = "feed"
	typeFeedSeen   = "feed_seen"
	typeFeedReject = "feed_rejected"
	typeAudit      = "portal_audit"
	typeEnd        = "end"
)

// Header is the stream's first line.
type Header struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Source  string    `json:"source"` // the backend exported: badger, postgres
	Created time.Time `json:"created"`
}

// Counts says how many lines of each type a stream holds (the header and
// the end line not counted).
type Counts map[string]int

type pepperLine struct {
	Value []byte `json:"value"`
}

type deliveryLine struct {
	Pos    []byte `json:"pos"`
	Record []byte `json:"record"`
}

type deadLine struct {
	Record []byte `json:"record"`
}

type feedLine struct {
	Name          string `json:"name"`
	Cursor        string `json:"cursor"`
	RejectedTotal uint64 `json:"rejected_total"`
}

type seenLine struct {
	Feed     string    `json:"feed"`
	ChangeID string    `json:"change_id"`
	Until    time.Time `json:"until"`
}

type rejectedLine struct {
	Feed string `json:"feed"`
	feed.Rejected
}

type endLine struct {
	Counts Counts `json:"counts"`
}
