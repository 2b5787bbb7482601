package tokens

import (
	"errors"
	"time"
)

// Store is what the token service keeps: the pepper of secret hashes, the
// partners and clients created at run time, the generated signing keys and
// the generated webhook keys of static partners. A backend
// (storage/badgerstore, ...) implements it; the rules (ids, hashing,
// rotation, retention) stay in this package. Every write is durable when it
// returns nil.
type Store interface {
	PartnerStore
	ClientStore
	KeyStore
}

// PartnerStore keeps partners created at run time and the generated
// webhook keys of static partners.
type PartnerStore interface {
	// Pepper returns the stored pepper; when there is none it stores the
	// one generate returns (called only then) and returns it.
	Pepper(generate func() ([]byte, error)) ([]byte, error)
	Partners() ([]PartnerRecord, error)
	// CreatePartner stores a new partner and its first clients in one
	// transaction, after deleting any stored client of its id (one another
	// process created for a deleted partner of the same id). When a
	// partner of its id, or a client of one of the clients' ids, is stored
	// it stores nothing and returns an error wrapping ErrExists; of
	// processes creating the same partner at once, one succeeds.
	CreatePartner(p PartnerRecord, clients ...ClientRecord) error
	// PutPartner replaces a partner.
	PutPartner(p PartnerRecord) error
	// DeletePartner deletes a partner, the given clients and every other
	// stored client of the partner (another instance may have created one
	// the caller has not heard of) in one transaction (missing ones are not
	// an error).
	DeletePartner(id string, clientIDs []string) error
	StaticWebhookKeys() ([]StaticKeyRecord, error)
	// PutStaticWebhookKeys stores the records in one transaction.
	PutStaticWebhookKeys(recs []StaticKeyRecord) error
	// AddStaticWebhookKeys stores, in one transaction, the records whose
	// partner has no kept key yet and leaves the others as they are (an
	// instance sharing the store stored its key first).
	AddStaticWebhookKeys(recs []StaticKeyRecord) error
}

// ClientStore keeps the clients of partners created at run time.
type ClientStore interface {
	Clients() ([]ClientRecord, error)
	// PutClient creates or replaces a client.
	PutClient(c ClientRecord) error
	// CreateClient stores c, a new client, provided the store holds fewer
	// than max clients of c.Partner; otherwise it stores nothing and
	// returns an error wrapping ErrClientLimit (ErrExists when a client of
	// c.ID is stored, whichever partner's). The count and the write are
	// one step for every process sharing the store, so concurrent creates
	// never leave more than max clients of a partner.
	CreateClient(c ClientRecord, max int) error
	// UpdateClient replaces a stored client of c.Partner; when none of
	// c.ID is stored (another process deleted it) it stores nothing and
	// returns an error wrapping ErrClientGone, so a change never brings a
	// deleted client back.
	UpdateClient(c ClientRecord) error
	// DeleteClient deletes a client (a missing one is not an error).
	DeleteClient(id string) error
	// ClientUsage returns when each client (static ones included) last
	// got a token, as noted by TouchClient.
	ClientUsage() (map[string]time.Time, error)
	// TouchClient notes that client id got a token at at.
	TouchClient(id string, at time.Time) error
}

// KeyStore keeps generated signing keys. The current key of an algorithm
// is its newest key (by Created, then KID) that is not retired.
type KeyStore interface {
	SigningKeys() ([]KeyRecord, error)
	// UpdateSigningKeys stores put and deletes the keys del in one
	// transaction.
	UpdateSigningKeys(put []KeyRecord, del []string) error
	// ReplaceCurrentKey stores next as the current key of next.Alg and
	// retires, at next.Created, every other key of that algorithm that is
	// not retired, in one transaction, provided the current key in the
	// store is prev ("": there is none). Otherwise (another instance
	// created or rotated a key meanwhile) it stores nothing and returns
	// ErrKeyChanged.
	ReplaceCurrentKey(prev string, next KeyRecord) error
}

// ErrClientLimit is ClientStore.CreateClient's refusal: the store holds
// as many clients of the partner as it may.
var ErrClientLimit = errors.New("the partner's stored clients are at the limit")

// ErrClientGone is ClientStore.UpdateClient's refusal: the client is not
// stored.
var ErrClientGone = errors.New("the client is not stored")

// ErrKeyChanged is KeyStore.ReplaceCurrentKey's refusal: the current key is
// no longer the one the caller saw.
var ErrKeyChanged = errors.New("the current signing key changed meanwhile")

// CurrentKey returns the current key among recs of alg (see KeyStore), and
// false when there is none. Backends decide ReplaceCurrentKey with it.
func CurrentKey(recs []KeyRecord, alg string) (KeyRecord, bool) {
	var cur KeyRecord
	found := false
	for _, r := range recs {
		if r.Alg != alg || !r.Retired.IsZero() {
			continue
		}
		if !found || r.Created.After(cur.Created) || r.Created.Equal(cur.Created) && r.KID > cur.KID {
			cur, found = r, true
		}
	}
	return cur, found
}

// PartnerRecord is a stored partner created at run time.
type PartnerRecord struct {
	ID            string    `json:"id"`
	Consolidation bool      `json:"consolidation"`
	WebhookKey    string    `json:"webhook_key"`
	Disabled      bool      `json:"disabled,omitempty"`
	Created       time.Time `json:"created"`
}

// ClientRecord is a stored client: the keyed hash of its secret, never the
// secret.
type ClientRecord struct {
	ID      string `json:"id"`
	Partner string `json:"partner"`
	Hash    []byte `json:"hash"`
	Version string `json:"version"`
	// OpaqueVersion: Version is a random value whose tokens carry it keyed;
	// unset, it is the secret digest older versions of the gateway put in
	// tokens unkeyed.
	OpaqueVersion bool      `json:"opaque_version,omitempty"`
	Active        bool      `json:"active"`
	Created       time.Time `json:"created"`
	// Hint is the last characters of the secret, shown to tell secrets
	// apart (never enough to guess one).
	Hint string `json:"hint,omitempty"`
	// PrevHash is the keyed hash of the previous secret, which
	// authenticates until PrevUntil (a rotation's grace period); empty
	// when there is none.
	PrevHash  []byte    `json:"prev_hash,omitempty"`
	PrevUntil time.Time `json:"prev_until,omitzero"`
}

// KeyRecord is a stored generated signing key with its private material.
type KeyRecord struct {
	KID      string    `json:"kid"`
	Alg      string    `json:"alg"`
	Material []byte    `json:"material"`
	Created  time.Time `json:"created"`
	Retired  time.Time `json:"retired,omitzero"`
}

// StaticKeyRecord is the generated webhook key of a partner from the
// configuration that sets no webhook_key.
type StaticKeyRecord struct {
	Partner    string    `json:"partner"`
	WebhookKey string    `json:"webhook_key"`
	Created    time.Time `json:"created"`
	Rotated    time.Time `json:"rotated,omitzero"`
}
