package badgerstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// Keys of the token state, all under "tok/".
const (
	keyPepper              = "tok/pepper"
	prefixPartner          = "tok/partner/"
	prefixClient           = "tok/client/"
	prefixSigningKey       = "tok/key/"
	prefixStaticWebhookKey = "tok/static-webhook-key/"
)

// tokenStore is tokens.Store; records are JSON.
type tokenStore struct {
	db *badger.DB
}

func (s *tokenStore) Pepper(generate func() ([]byte, error)) ([]byte, error) {
	var pepper []byte
	err := update(s.db, func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keyPepper))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			if pepper, err = generate(); err != nil {
				return err
			}
			return txn.Set([]byte(keyPepper), pepper)
		case err != nil:
			return err
		}
		pepper, err = item.ValueCopy(nil)
		return err
	})
	return pepper, err
}

func (s *tokenStore) Partners() ([]tokens.PartnerRecord, error) {
	return listJSON[tokens.PartnerRecord](s.db, prefixPartner)
}

// CreatePartner stores p and its clients in one transaction unless p.ID
// is stored, first deleting any stored client of p.ID (an orphan of a
// deleted partner of the same id).
func (s *tokenStore) CreatePartner(p tokens.PartnerRecord, clients ...tokens.ClientRecord) error {
	return update(s.db, func(txn *badger.Txn) error {
		if err := refuseStored(txn, prefixPartner+p.ID, "partner "+p.ID); err != nil {
			return err
		}
		if err := deleteClientsOf(txn, p.ID); err != nil {
			return err
		}
		if err := setJSON(txn, prefixPartner+p.ID, p); err != nil {
			return err
		}
		for _, c := range clients {
			if err := refuseStored(txn, prefixClient+c.ID, "client "+c.ID); err != nil {
				return err
			}
			if err := setJSON(txn, prefixClient+c.ID, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// refuseStored returns an error wrapping tokens.ErrExists, naming what,
// when key is stored.
func refuseStored(txn *badger.Txn, key, what string) error {
	_, err := txn.Get([]byte(key))
	switch {
	case err == nil:
		return fmt.Errorf("%s %w", what, tokens.ErrExists)
	case errors.Is(err, badger.ErrKeyNotFound):
		return nil
	}
	return err
}

// deleteClientsOf deletes every stored client of partner id.
func deleteClientsOf(txn *badger.Txn, id string) error {
	var ids []string
	err := eachJSON(txn, prefixClient, func(r *tokens.ClientRecord) error {
		if r.Partner == id {
			ids = append(ids, r.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, cid := range ids {
		if err := txn.Delete([]byte(prefixClient + cid)); err != nil {
			return err
		}
	}
	return nil
}

func (s *tokenStore) PutPartner(p tokens.PartnerRecord) error {
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, prefixPartner+p.ID, p) })
}

func (s *tokenStore) DeletePartner(id string, clientIDs []string) error {
	return update(s.db, func(txn *badger.Txn) error {
		for _, cid := range clientIDs {
			if err := txn.Delete([]byte(prefixClient + cid)); err != nil {
				return err
			}
		}
		if err := deleteClientsOf(txn, id); err != nil {
			return err
		}
		return errors.Join(txn.Delete([]byte(prefixPartner+id)), txn.Delete([]byte(prefixClientCreate+id)))
	})
}

func (s *tokenStore) StaticWebhookKeys() ([]tokens.StaticKeyRecord, error) {
	return listJSON[tokens.StaticKeyRecord](s.db, prefixStaticWebhookKey)
}

func (s *tokenStore) PutStaticWebhookKeys(recs []tokens.StaticKeyRecord) error {
	return update(s.db, func(txn *badger.Txn) error {
		for _, r := range recs {
			if err := setJSON(txn, prefixStaticWebhookKey+r.Partner, r); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *tokenStore) Clients() ([]tokens.ClientRecord, error) {
	return listJSON[tokens.ClientRecord](s.db, prefixClient)
}

func (s *tokenStore) PutClient(c tokens.ClientRecord) error {
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, prefixClient+c.ID, c) })
}

// UpdateClient replaces a stored client of c.Partner, reading it in the
// transaction that writes it.
func (s *tokenStore) UpdateClient(c tokens.ClientRecord) error {
	err := update(s.db, func(txn *badger.Txn) error {
		var old tokens.ClientRecord
		item, err := txn.Get([]byte(prefixClient + c.ID))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return tokens.ErrClientGone
		}
		if err != nil {
			return err
		}
		if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &old) }); err != nil {
			return err
		}
		if old.Partner != c.Partner {
			return tokens.ErrClientGone
		}
		return setJSON(txn, prefixClient+c.ID, c)
	})
	if err != nil {
		return fmt.Errorf("storing client %s: %w", c.ID, err)
	}
	return nil
}

// prefixClientCreate keys one empty marker per partner that every
// CreateClient of the partner reads and writes, so two concurrent creates
// conflict (counting the clients reads only the keys that exist, and a
// client another transaction adds is not one of them) and the loser counts
// again.
const prefixClientCreate = "tok/client-create/"

// CreateClient counts the partner's clients and stores c in one
// transaction.
func (s *tokenStore) CreateClient(c tokens.ClientRecord, max int) error {
	marker := []byte(prefixClientCreate + c.Partner)
	var n int
	err := update(s.db, func(txn *badger.Txn) error {
		if _, err := txn.Get(marker); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		n = 0
		err := eachJSON(txn, prefixClient, func(r *tokens.ClientRecord) error {
			if r.Partner == c.Partner {
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n >= max {
			return tokens.ErrClientLimit
		}
		if err := refuseStored(txn, prefixClient+c.ID, "client "+c.ID); err != nil {
			return err
		}
		return errors.Join(txn.Set(marker, nil), setJSON(txn, prefixClient+c.ID, c))
	})
	if errors.Is(err, tokens.ErrClientLimit) {
		return fmt.Errorf("%d clients of partner %s stored, at most %d: %w", n, c.Partner, max, err)
	}
	if err != nil {
		return fmt.Errorf("storing client %s: %w", c.ID, err)
	}
	return nil
}

func (s *tokenStore) SigningKeys() ([]tokens.KeyRecord, error) {
	return listJSON[tokens.KeyRecord](s.db, prefixSigningKey)
}

func (s *tokenStore) UpdateSigningKeys(put []tokens.KeyRecord, del []string) error {
	return update(s.db, func(txn *badger.Txn) error {
		for _, k := range put {
			if err := setJSON(txn, prefixSigningKey+k.KID, k); err != nil {
				return err
			}
		}
		for _, kid := range del {
			if err := txn.Delete([]byte(prefixSigningKey + kid)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *tokenStore) AddStaticWebhookKeys(recs []tokens.StaticKeyRecord) error {
	return update(s.db, func(txn *badger.Txn) error {
		for _, r := range recs {
			_, err := txn.Get([]byte(prefixStaticWebhookKey + r.Partner))
			switch {
			case err == nil:
				continue
			case !errors.Is(err, badger.ErrKeyNotFound):
				return err
			}
			if err := setJSON(txn, prefixStaticWebhookKey+r.Partner, r); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *tokenStore) ReplaceCurrentKey(prev string, next tokens.KeyRecord) error {
	return update(s.db, func(txn *badger.Txn) error {
		var recs []tokens.KeyRecord
		if err := eachJSON(txn, prefixSigningKey, func(r *tokens.KeyRecord) error { recs = append(recs, *r); return nil }); err != nil {
			return err
		}
		if cur, ok := tokens.CurrentKey(recs, next.Alg); ok != (prev != "") || cur.KID != prev {
			return tokens.ErrKeyChanged
		}
		for _, r := range recs {
			if r.Alg == next.Alg && r.Retired.IsZero() && r.KID != next.KID {
				r.Retired = next.Created
				if err := setJSON(txn, prefixSigningKey+r.KID, r); err != nil {
					return err
				}
			}
		}
		return setJSON(txn, prefixSigningKey+next.KID, next)
	})
}

// prefixClientUsage keys the clients' last use (a JSON time), apart from
// the client records so that noting a use never rewrites a client.
const prefixClientUsage = "tok/client-used/"

func (s *tokenStore) DeleteClient(id string) error {
	return update(s.db, func(txn *badger.Txn) error { return txn.Delete([]byte(prefixClient + id)) })
}

func (s *tokenStore) ClientUsage() (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixClientUsage), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var at time.Time
			if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, &at) }); err != nil {
				return fmt.Errorf("decoding %s: %w", it.Item().Key(), err)
			}
			out[strings.TrimPrefix(string(it.Item().Key()), prefixClientUsage)] = at
		}
		return nil
	})
	return out, err
}

func (s *tokenStore) TouchClient(id string, at time.Time) error {
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, prefixClientUsage+id, at) })
}
