package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// errNoPepper tells a store's Pepper not to generate one: the store has
// none.
var errNoPepper = errors.New("no pepper stored")

// storedPepper returns the store's pepper, nil when it has none (it never
// creates one).
func storedPepper(s tokens.Store) ([]byte, error) {
	p, err := s.Pepper(func() ([]byte, error) { return nil, errNoPepper })
	if errors.Is(err, errNoPepper) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pepper: %w", err)
	}
	return p, nil
}

// writer writes the stream's lines and counts them.
type writer struct {
	w      *bufio.Writer
	counts Counts
}

// line writes v, a JSON object, as a line of type typ.
func (w *writer) line(typ string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a %s: %w", typ, err)
	}
	w.w.WriteString(`{"type":"` + typ + `"`)
	if len(b) > 2 {
		w.w.WriteByte(',')
	}
	w.w.Write(b[1:])
	if err := w.w.WriteByte('\n'); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if typ != typeHeader && typ != typeEnd {
		w.counts[typ]++
	}
	return nil
}

// Export writes the whole state of src to w as the stream described in the
// package comment, source naming its backend, and returns how many lines
// of each type it wrote. The stores should not change meanwhile (the
// gateways using them are stopped): each part is read on its own.
func Export(w io.Writer, src Stores, source string, now time.Time) (Counts, error) {
	out := &writer{w: bufio.NewWriterSize(w, 64<<10), counts: Counts{}}
	if err := out.line(typeHeader, Header{Format: Format, Version: Version, Source: source, Created: now.UTC()}); err != nil {
		return nil, err
	}
	for _, part := range []func(*writer, Stores) error{exportTokens, exportSubscriptions, exportQueue, exportDead, exportDelivered, exportFeeds, exportAudit} {
		if err := part(out, src); err != nil {
			return out.counts, err
		}
	}
	if err := out.line(typeEnd, endLine{Counts: out.counts}); err != nil {
		return out.counts, err
	}
	if err := out.w.Flush(); err != nil {
		return out.counts, fmt.Errorf("writing the export: %w", err)
	}
	return out.counts, nil
}

func exportTokens(out *writer, src Stores) error {
	ts := src.Tokens()
	pepper, err := storedPepper(ts)
	if err != nil {
		return err
	}
	if pepper != nil {
		if err := out.line(typePepper, pepperLine{Value: pepper}); err != nil {
			return err
		}
	}
	partners, err := ts.Partners()
	if err != nil {
		return fmt.Errorf("reading the partners: %w", err)
	}
	slices.SortFunc(partners, func(a, b tokens.PartnerRecord) int { return strings.Compare(a.ID, b.ID) })
	for _, p := range partners {
		p.Created = p.Created.UTC()
		if err := out.line(typePartner, p); err != nil {
			return err
		}
	}
	clients, err := ts.Clients()
	if err != nil {
		return fmt.Errorf("reading the clients: %w", err)
	}
	slices.SortFunc(clients, func(a, b tokens.ClientRecord) int { return strings.Compare(a.ID, b.ID) })
	for _, c := range clients {
		c.Created = c.Created.UTC()
		if err := out.line(typeClient, c); err != nil {
			return err
		}
	}
	keys, err := ts.SigningKeys()
	if err != nil {
		return fmt.Errorf("reading the signing keys: %w", err)
	}
	slices.SortFunc(keys, func(a, b tokens.KeyRecord) int { return strings.Compare(a.KID, b.KID) })
	for _, k := range keys {
		k.Created, k.Retired = utc(k.Created), utc(k.Retired)
		if err := out.line(typeKey, k); err != nil {
			return err
		}
	}
	static, err := ts.StaticWebhookKeys()
	if err != nil {
		return fmt.Errorf("reading the static partners' webhook keys: %w", err)
	}
	slices.SortFunc(static, func(a, b tokens.StaticKeyRecord) int { return strings.Compare(a.Partner, b.Partner) })
	for _, k := range static {
		k.Created, k.Rotated = utc(k.Created), utc(k.Rotated)
		if err := out.line(typeStaticKey, k); err != nil {
			return err
		}
	}
	return nil
}

func exportSubscriptions(out *writer, src Stores) error {
	subs, err := src.Webhooks().Subscriptions()
	if err != nil {
		return fmt.Errorf("reading the subscriptions: %w", err)
	}
	slices.SortFunc(subs, func(a, b webhooks.Subscription) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range subs {
		s.CreatedAt = s.CreatedAt.UTC()
		if err := out.line(typeSub, s); err != nil {
			return err
		}
	}
	return nil
}

func exportQueue(out *writer, src Stores) error {
	r, err := src.Webhooks().ReadSchedule()
	if err != nil {
		return fmt.Errorf("reading the delivery queue: %w", err)
	}
	defer r.Close()
	for r.Seek(nil); r.Valid(); r.Next() {
		l := deliveryLine{Pos: r.Pos()}
		if err := r.Value(func(v []byte) error { l.Record = bytes.Clone(v); return nil }); err != nil {
			return fmt.Errorf("reading the delivery queue: %w", err)
		}
		if err := out.line(typeDelivery, l); err != nil {
			return err
		}
	}
	if e, ok := r.(interface{ Err() error }); ok && e.Err() != nil {
		return fmt.Errorf("reading the delivery queue: %w", e.Err())
	}
	return nil
}

func exportDead(out *writer, src Stores) error {
	err := src.Webhooks().ScanDead(func(v []byte) (bool, error) {
		return true, out.line(typeDead, deadLine{Record: bytes.Clone(v)})
	})
	if err != nil {
		return fmt.Errorf("reading the dead letters: %w", err)
	}
	return nil
}

func exportFeeds(out *writer, src Stores) error {
	names, err := src.FeedNames()
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, name := range names {
		fs := src.Feed(name)
		cursor, err := fs.Cursor()
		if err != nil {
			return fmt.Errorf("feed %s: reading the cursor: %w", name, err)
		}
		rejected, total, err := fs.Rejected()
		if err != nil {
			return fmt.Errorf("feed %s: reading the rejected changes: %w", name, err)
		}
		if err := out.line(typeFeed, feedLine{Name: name, Cursor: cursor, RejectedTotal: total}); err != nil {
			return err
		}
		// Seen markers expire in whole seconds (the coarsest backend's
		// unit), so a marker reads the same from every backend.
		err = fs.ScanSeen(func(id string, until time.Time) error {
			return out.line(typeFeedSeen, seenLine{Feed: name, ChangeID: id, Until: until.UTC().Truncate(time.Second)})
		})
		if err != nil {
			return fmt.Errorf("feed %s: reading the seen changes: %w", name, err)
		}
		for _, r := range rejected {
			r.RejectedAt = r.RejectedAt.UTC()
			if err := out.line(typeFeedReject, rejectedLine{Feed: name, Rejected: r}); err != nil {
				return err
			}
		}
	}
	return nil
}

// utc is t in UTC, the zero time kept zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
