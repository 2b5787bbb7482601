package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// maxLine is the longest line Import reads (a delivery's record with its
// attempt log is a few KiB).
const maxLine = 16 << 20

// ErrNotEmpty is returned by Import when the target store already holds
// state: importing into it would mix two gateways' secrets and queues.
var ErrNotEmpty = errors.New("the target storage is not empty")

// dump is a whole stream, read and checked before anything is written.
type dump struct {
	header     Header
	pepper     []byte
	partners   []tokens.PartnerRecord
	clients    []tokens.ClientRecord
	keys       []tokens.KeyRecord
	static     []tokens.StaticKeyRecord
	subs       []webhooks.Subscription
	deliveries []webhooks.QueueEntry
	dead       []webhooks.DeadLetter
	delivered  []webhooks.QueueEntry
	// deliveredAt marks the subscription and position of each delivered
	// record read.
	deliveredAt map[string]bool
	feeds       []feedLine
	seen        map[string][]seenLine
	rejected    map[string][]feed.Rejected
	audit       []portal.AuditRecord
	counts      Counts
}

// Import reads a stream written by Export (this version's or an older
// one's) into dst, which must be empty (ErrNotEmpty). The whole stream is
// read and checked first (its header, every line, the end line's counts),
// so a damaged or cut stream writes nothing. The writes themselves are
// several transactions: should one fail, dst holds part of the state and
// is to be discarded. It returns the header and how many lines of each
// type it imported.
func Import(r io.Reader, dst Stores) (Header, Counts, error) {
	d, err := read(r)
	if err != nil {
		return Header{}, nil, err
	}
	if err := checkEmpty(dst); err != nil {
		return d.header, nil, err
	}
	for _, part := range []func(*dump, Stores) error{importTokens, importSubscriptions, importQueue, importDelivered, importFeeds, importAudit} {
		if err := part(d, dst); err != nil {
			return d.header, nil, fmt.Errorf("%w (the target now holds part of the state: discard it and import into an empty one)", err)
		}
	}
	return d.header, d.counts, nil
}

// read parses and checks the whole stream.
func read(r io.Reader) (*dump, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	d := &dump{seen: map[string][]seenLine{}, rejected: map[string][]feed.Rejected{}, deliveredAt: map[string]bool{}, counts: Counts{}}
	n := 0
	var end *endLine
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if end != nil {
			return nil, fmt.Errorf("line %d: a line after the end line", n)
		}
		var t struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("line %d is not a JSON object: %w", n, err)
		}
		if n == 1 {
			if err := d.readHeader(t.Type, b); err != nil {
				return nil, err
			}
			continue
		}
		if t.Type == typeEnd {
			end = new(endLine)
			if err := json.Unmarshal(b, end); err != nil {
				return nil, fmt.Errorf("line %d (end): %w", n, err)
			}
			continue
		}
		if err := d.add(t.Type, b); err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", n, t.Type, err)
		}
		d.counts[t.Type]++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading line %d: %w", n+1, err)
	}
	if n == 0 {
		return nil, errors.New("the export is empty: want a header line first")
	}
	if end == nil {
		return nil, errors.New("the export has no end line: it was cut short (an export that failed, or a partial copy)")
	}
	if !maps.Equal(maps.Collect(nonZero(end.Counts)), maps.Collect(nonZero(d.counts))) {
		return nil, fmt.Errorf("the export's end line counts %v but the stream holds %v: it is damaged", end.Counts, d.counts)
	}
	if err := d.checkFeeds(); err != nil {
		return nil, err
	}
	if err := d.checkSubscriptions(); err != nil {
		return nil, err
	}
	if err := d.checkDelivered(); err != nil {
		return nil, err
	}
	return d, nil
}

// checkSubscriptions refuses a subscription id that comes twice: a
// backend would keep one of them (Badger the last, and a delivery log
// checked against the other's partner), another refuse it halfway
// through the import.
func (d *dump) checkSubscriptions() error {
	seen := make(map[string]bool, len(d.subs))
	for _, s := range d.subs {
		if seen[s.ID] {
			return fmt.Errorf("subscription %s comes twice: the export is damaged", s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}

// checkFeeds refuses seen markers and rejected changes of a feed that has
// no feed line.
func (d *dump) checkFeeds() error {
	names := map[string]bool{}
	for _, f := range d.feeds {
		names[f.Name] = true
	}
	for _, m := range []map[string]int{lens(d.seen), lens(d.rejected)} {
		for name := range m {
			if !names[name] {
				return fmt.Errorf("the export holds state of feed %q but no feed line for it: it is damaged", name)
			}
		}
	}
	return nil
}

// lens maps each key of m to the length of its list.
func lens[V any](m map[string][]V) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// nonZero yields the counts that are not zero.
func nonZero(c Counts) func(func(string, int) bool) {
	return func(yield func(string, int) bool) {
		for k, v := range c {
			if v != 0 && !yield(k, v) {
				return
			}
		}
	}
}

func (d *dump) readHeader(typ string, b []byte) error {
	if typ != typeHeader {
		return fmt.Errorf("line 1 is a %q line, want the header: is this a Fulfilgate export?", typ)
	}
	if err := json.Unmarshal(b, &d.header); err != nil {
		return fmt.Errorf("the header: %w", err)
	}
	if d.header.Format != Format {
		return fmt.Errorf("the header names format %q, want %q: is this a Fulfilgate export?", d.header.Format, Format)
	}
	if d.header.Version < 1 || d.header.Version > Version {
		return fmt.Errorf("the export is format version %d and this gateway reads versions 1 to %d: import it with the gateway version that wrote it, or a newer one",
			d.header.Version, Version)
	}
	return nil
}

// add decodes one line of type typ into d.
func (d *dump) add(typ string, b []byte) error {
	switch typ {
	case typePepper:
		var l pepperLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		if d.pepper != nil || len(l.Value) == 0 {
			return errors.New("want one pepper, not empty")
		}
		d.pepper = l.Value
	case typePartner:
		return appendLine(b, &d.partners)
	case typeClient:
		return appendLine(b, &d.clients)
	case typeKey:
		return appendLine(b, &d.keys)
	case typeStaticKey:
		return appendLine(b, &d.static)
	case typeSub:
		return appendLine(b, &d.subs)
	case typeDelivery:
		var l deliveryLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		e, err := webhooks.QueueEntryOf(l.Pos, l.Record)
		if err != nil {
			return err
		}
		d.deliveries = append(d.deliveries, e)
	case typeDead:
		var l deadLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		dl, err := webhooks.DeadLetterOf(l.Record)
		if err != nil {
			return err
		}
		d.dead = append(d.dead, dl)
	case typeDelivered:
		var l deliveredLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		return d.addDelivered(l)
	case typeFeed:
		return appendLine(b, &d.feeds)
	case typeFeedSeen:
		var l seenLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		d.seen[l.Feed] = append(d.seen[l.Feed], l)
	case typeFeedReject:
		var l rejectedLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		d.rejected[l.Feed] = append(d.rejected[l.Feed], l.Rejected)
	case typeAudit:
		if d.header.Version < auditSince {
			return fmt.Errorf("a version %d export holds no audit records (they came in version %d): it is damaged", d.header.Version, auditSince)
		}
		var r portal.AuditRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if err := checkAudit(r); err != nil {
			return err
		}
		d.audit = append(d.audit, r)
	default:
		return fmt.Errorf("unknown line type %q", typ)
	}
	return nil
}

// appendLine decodes b into a T and appends it to list.
func appendLine[T any](b []byte, list *[]T) error {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// checkEmpty refuses a store that holds any state, saying what it holds.
func checkEmpty(dst Stores) error {
	ts := dst.Tokens()
	pepper, err := storedPepper(ts)
	if err != nil {
		return err
	}
	var found []string
	if pepper != nil {
		found = append(found, "a pepper")
	}
	add := func(n int, err error, what string) error {
		if err != nil {
			return fmt.Errorf("reading the target's %s: %w", what, err)
		}
		if n > 0 {
			found = append(found, fmt.Sprintf("%d %s", n, what))
		}
		return nil
	}
	partners, err := ts.Partners()
	if err := add(len(partners), err, "partners"); err != nil {
		return err
	}
	clients, err := ts.Clients()
	if err := add(len(clients), err, "clients"); err != nil {
		return err
	}
	keys, err := ts.SigningKeys()
	if err := add(len(keys), err, "signing keys"); err != nil {
		return err
	}
	static, err := ts.StaticWebhookKeys()
	if err := add(len(static), err, "static webhook keys"); err != nil {
		return err
	}
	subs, err := dst.Webhooks().Subscriptions()
	if err := add(len(subs), err, "subscriptions"); err != nil {
		return err
	}
	queued, dead, err := dst.Webhooks().Depth()
	if err := add(int(queued), err, "queued deliveries"); err != nil {
		return err
	}
	if err := add(int(dead), nil, "dead letters"); err != nil {
		return err
	}
	withLog, err := dst.Webhooks().DeliveredSubscriptions()
	if err := add(len(withLog), err, "subscriptions with delivered records"); err != nil {
		return err
	}
	feeds, err := dst.FeedNames()
	if err := add(len(feeds), err, "feeds"); err != nil {
		return err
	}
	audit, err := dst.Portal().Audit("", time.Time{}, 1)
	if err := add(len(audit), err, "portal audit records"); err != nil {
		return err
	}
	if len(found) > 0 {
		return fmt.Errorf("%w: it holds %v; import into a new database or data directory (a gateway that started on it generated a pepper and a signing key)",
			ErrNotEmpty, found)
	}
	return nil
}

func importTokens(d *dump, dst Stores) error {
	ts := dst.Tokens()
	if d.pepper != nil {
		got, err := ts.Pepper(func() ([]byte, error) { return d.pepper, nil })
		if err != nil {
			return fmt.Errorf("storing the pepper: %w", err)
		}
		if !bytes.Equal(got, d.pepper) {
			return errors.New("storing the pepper: the target got another pepper meanwhile (is a gateway running on it?)")
		}
	}
	for _, p := range d.partners {
		if err := ts.CreatePartner(p); err != nil {
			return fmt.Errorf("storing partner %s: %w", p.ID, err)
		}
	}
	for _, c := range d.clients {
		if err := ts.PutClient(c); err != nil {
			return fmt.Errorf("storing client %s: %w", c.ID, err)
		}
	}
	if len(d.keys) > 0 {
		if err := ts.UpdateSigningKeys(d.keys, nil); err != nil {
			return fmt.Errorf("storing the signing keys: %w", err)
		}
	}
	if len(d.static) > 0 {
		if err := ts.PutStaticWebhookKeys(d.static); err != nil {
			return fmt.Errorf("storing the static partners' webhook keys: %w", err)
		}
	}
	return nil
}

func importSubscriptions(d *dump, dst Stores) error {
	for _, s := range d.subs {
		_, created, err := dst.Webhooks().CreateSubscription(context.Background(), s, math.MaxInt)
		if err != nil {
			return fmt.Errorf("storing subscription %s: %w", s.ID, err)
		}
		if !created {
			return fmt.Errorf("subscription %s repeats another of partner %s (same event and URL)", s.ID, s.PartnerID)
		}
	}
	return nil
}

// importChunk is how many deliveries or dead letters one call stores.
const importChunk = 500

func importQueue(d *dump, dst Stores) error {
	ws := dst.Webhooks()
	for chunk := range slices.Chunk(d.deliveries, importChunk) {
		if err := ws.Enqueue(chunk, nil); err != nil {
			return fmt.Errorf("queueing the deliveries: %w", err)
		}
	}
	for chunk := range slices.Chunk(d.dead, importChunk) {
		if err := ws.LoadDead(chunk); err != nil {
			return fmt.Errorf("storing the dead letters: %w", err)
		}
	}
	return nil
}

// seenChunk is how many seen markers one commit stores.
const seenChunk = 1000

func importFeeds(d *dump, dst Stores) error {
	for _, f := range d.feeds {
		fs := dst.Feed(f.Name)
		w := feed.PageWrites{Cursor: &f.Cursor, Rejected: d.rejected[f.Name], RejectedTotal: f.RejectedTotal}
		if err := fs.Commit(fs.PageWrites(w)); err != nil {
			return fmt.Errorf("feed %s: storing the cursor and rejected changes: %w", f.Name, err)
		}
		// One commit per expiry time (a page's markers share theirs).
		byUntil := map[time.Time][]string{}
		for _, s := range d.seen[f.Name] {
			byUntil[s.Until] = append(byUntil[s.Until], s.ChangeID)
		}
		for until, ids := range byUntil {
			for chunk := range slices.Chunk(ids, seenChunk) {
				if err := fs.Commit(fs.PageWrites(feed.PageWrites{Seen: chunk, SeenUntil: until})); err != nil {
					return fmt.Errorf("feed %s: storing the seen changes: %w", f.Name, err)
				}
			}
		}
	}
	return nil
}
