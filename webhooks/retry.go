package webhooks

import (
	"fmt"
	"strings"
	"time"
)

// RetryPolicy is exponential back-off with full jitter: after the n-th failed
// attempt the next one waits a uniformly random delay in
// [Base, min(Cap, Base·2^(n-1))]. With Base 1 s and Cap 16 min the ceiling is
// reached after 11 attempts; the mean delay is then 8 min, so 185 attempts
// take about 23–24 h and the attempts spread over the whole retry period.
// Retrying stops after MaxAttempts attempts, or when the next attempt would
// fall more than Period after the first attempt, whichever comes first.
type RetryPolicy struct {
	Base        time.Duration // first ceiling, default 1s
	Cap         time.Duration // ceiling of any delay, default 16m
	MaxAttempts int           // default 185
	Period      time.Duration // default 24h, counted from the first attempt
}

// DefaultRetryPolicy retries with exponential back-off and jitter from 1s,
// capped at 16m so that the attempts spread over the whole period, and gives
// up after 185 attempts or 24 hours after the first, whichever comes first.
var DefaultRetryPolicy = RetryPolicy{
	Base:        time.Second,
	Cap:         16 * time.Minute,
	MaxAttempts: DefaultMaxAttempts,
	Period:      DefaultRetryPeriod,
}

// Ceiling returns the largest delay after the attempt-th failed attempt
// (attempt ≥ 1).
func (p RetryPolicy) Ceiling(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt && d < p.Cap; i++ {
		d *= 2
	}
	return min(d, p.Cap)
}

// Delay returns the delay after the attempt-th failed attempt for r uniform
// in [0,1): Base + r·(Ceiling − Base).
func (p RetryPolicy) Delay(attempt int, r float64) time.Duration {
	r = min(max(r, 0), 1)
	c := p.Ceiling(attempt)
	return p.Base + time.Duration(r*float64(c-p.Base))
}

// Next returns when attempt number attempt+1 is due, given that attempt
// attempts have been made (the last one failing at now) and the first one
// was made at first; ok is false when the delivery must give up: attempt
// reached MaxAttempts, or the next attempt would be later than first+Period.
func (p RetryPolicy) Next(attempt int, first, now time.Time, r float64) (time.Time, bool) {
	if attempt >= p.MaxAttempts {
		return time.Time{}, false
	}
	next := now.Add(p.Delay(attempt, r))
	if next.After(first.Add(p.Period)) {
		return time.Time{}, false
	}
	return next, true
}

// ScheduleRow is one line of the retry schedule: the delay range before
// attempt Attempt (the wait after attempt Attempt−1 failed) and the range of
// elapsed time since the first attempt.
type ScheduleRow struct {
	Attempt                int
	MinDelay, MaxDelay     time.Duration
	MinElapsed, MaxElapsed time.Duration
	MeanElapsed            time.Duration
}

// Schedule returns the rows for attempts 2..MaxAttempts, ignoring Period
// (Elapsed shows where Period cuts the schedule short).
func (p RetryPolicy) Schedule() []ScheduleRow {
	var rows []ScheduleRow
	var lo, hi, mean time.Duration
	for a := 2; a <= p.MaxAttempts; a++ {
		c := p.Ceiling(a - 1)
		lo += p.Base
		hi += c
		mean += (p.Base + c) / 2
		rows = append(rows, ScheduleRow{Attempt: a, MinDelay: p.Base, MaxDelay: c,
			MinElapsed: lo, MaxElapsed: hi, MeanElapsed: mean})
	}
	return rows
}

// ScheduleMarkdown renders Schedule as a Markdown table, collapsing the run
// of rows whose delay range is the same (the capped tail).
func (p RetryPolicy) ScheduleMarkdown() string {
	var b strings.Builder
	b.WriteString("| attempt | delay before it | elapsed since attempt 1 (min – mean – max) |\n|---|---|---|\n")
	rows := p.Schedule()
	for i := 0; i < len(rows); i++ {
		r := rows[i]
		j := i
		for j+1 < len(rows) && rows[j+1].MaxDelay == r.MaxDelay && rows[j+1].MinDelay == r.MinDelay {
			j++
		}
		label := fmt.Sprint(r.Attempt)
		last := rows[j]
		if j > i {
			label = fmt.Sprintf("%d–%d", r.Attempt, last.Attempt)
		}
		fmt.Fprintf(&b, "| %s | %v – %v | %v – %v – %v |\n", label, r.MinDelay, r.MaxDelay,
			last.MinElapsed.Round(time.Second), last.MeanElapsed.Round(time.Second), last.MaxElapsed.Round(time.Second))
		i = j
	}
	return b.String()
}
