package pgstore

import (
	"bytes"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// schedulePage is how many entries a schedule reader fetches at a time.
const schedulePage = 256

// ReadSchedule returns a reader that fetches the schedule a page at a
// time, so it shows writes committed while it is open.
func (ws *webhookStore) ReadSchedule() (webhooks.ScheduleReader, error) {
	return &scheduleReader{s: ws.s}, nil
}

type scheduledRow struct {
	pos, record []byte
}

// scheduleReader is a webhooks.ScheduleReader over pages of the
// deliveries table in position order.
type scheduleReader struct {
	s    *Store
	page []scheduledRow
	i    int
	full bool  // the page was full: more may follow it
	err  error // the last fetch's error; the reader is then not Valid
}

func (r *scheduleReader) Seek(pos []byte) { r.fetch(pos, true) }

func (r *scheduleReader) Valid() bool { return r.err == nil && r.i < len(r.page) }

func (r *scheduleReader) Next() {
	if !r.Valid() {
		return
	}
	r.i++
	if r.i == len(r.page) && r.full {
		r.fetch(r.page[r.i-1].pos, false)
	}
}

func (r *scheduleReader) Pos() []byte { return bytes.Clone(r.page[r.i].pos) }

func (r *scheduleReader) Value(fn func(record []byte) error) error {
	if r.err != nil {
		return r.err
	}
	return fn(r.page[r.i].record)
}

// Err is the error that ended the iteration early, if any.
func (r *scheduleReader) Err() error { return r.err }

func (r *scheduleReader) Close() { r.page = nil }

// fetch reads the page from pos (inclusive or not).
func (r *scheduleReader) fetch(pos []byte, inclusive bool) {
	if pos == nil {
		pos = []byte{}
	}
	q := "SELECT pos, record FROM deliveries WHERE pos > $1 ORDER BY pos LIMIT $2"
	if inclusive {
		q = "SELECT pos, record FROM deliveries WHERE pos >= $1 ORDER BY pos LIMIT $2"
	}
	ctx, cancel := op()
	defer cancel()
	rows, _ := r.s.pool.Query(ctx, q, pos, schedulePage)
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (scheduledRow, error) {
		var e scheduledRow
		err := row.Scan(&e.pos, &e.record)
		return e, err
	})
	r.page, r.i, r.full = page, 0, len(page) == schedulePage
	if err != nil {
		r.err = fmt.Errorf("reading the delivery schedule: %w", err)
	}
}
