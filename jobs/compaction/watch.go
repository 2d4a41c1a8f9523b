package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// Two things about a stack that retries its own compactions (SPEC §14),
// clawbolt's startup recovery: its lock, and its watch.
//
// The lock. clawbolt's recovery takes the session-level advisory lock
// hashtext('compaction_recovery:cleanup') for its whole sweep, and counts
// its attempts in the same retry_count. Wherever the daemon retries, each
// claim takes that lock too, at transaction level and shared
// (pg_try_advisory_xact_lock_shared on the same key: it conflicts with
// clawbolt's exclusive lock, not with another replica's claim), so it is
// released with the claim's commit and can never outlive it on a pooled
// connection, and two daemons claiming at once never mistake each other
// for the stack's recovery. While
// clawbolt holds it the daemon claims nothing, says so in its report and
// metrics, and the next pass tries again; the attempt a claim counts is one
// clawbolt sees, and its cap applies to it.
//
// The watch. Where the daemon cannot re-compact (clawbolt keeps its
// conversations encrypted at rest and has no memories table: the layout
// says so, schema.Names.CompactionWatch), the job writes nothing and
// watches instead: the events pending past staleAfter, and those at the
// stack's own retry cap (maintenance.compaction.stackMaxAttempts), which
// clawbolt leaves pending for good "for admin visibility" and nobody shows
// an admin. They are counted in metrics (and alerts), listed in the
// report (compact --once --json) and in the console (Watchlist).

// stackLockSQL takes clawbolt's own recovery lock, shared, for the claim's
// transaction, without waiting.
const stackLockSQL = `SELECT pg_try_advisory_xact_lock_shared(hashtext('compaction_recovery:cleanup'))`

// errStackBusy: the stack's own compaction recovery holds its lock.
var errStackBusy = errors.New("the stack's own compaction recovery holds its advisory lock (compaction_recovery:cleanup)")

// stackBusyReason is the report's skip reason for events not claimed while
// the stack's recovery holds its lock.
const stackBusyReason = "not claimed: the stack's own compaction recovery (clawbolt's, at its start-up) holds its advisory lock " +
	"compaction_recovery:cleanup, so the two never retry one event at once; the next pass tries again"

// watchStatsSQL counts the pending events the watch reports. $1 stale
// cutoff (now - staleAfter), $2 lookback cutoff, $3 the stack's cap.
const watchStatsSQL = `
SELECT
  count(*) FILTER (WHERE triggered_at >= $1)                        AS fresh,
  count(*) FILTER (WHERE triggered_at < $1 AND triggered_at >= $2)  AS stale,
  count(*) FILTER (WHERE triggered_at < $2)                         AS beyond_lookback,
  count(*) FILTER (WHERE retry_count >= $3)                         AS at_cap,
  count(*) FILTER (WHERE triggered_at < $1 OR retry_count >= $3)    AS watched,
  min(triggered_at) FILTER (WHERE triggered_at < $1 AND triggered_at >= $2) AS oldest_stale
FROM {{.Events}}
WHERE status = 'pending'`

// watchListSQL lists them, oldest first: pending past staleAfter, or at
// the stack's cap. $1 stale cutoff, $2 the stack's cap, $3 limit.
const watchListSQL = `
SELECT id, user_id AS agent_id, triggered_at, min_message_seq, max_message_seq, retry_count
FROM {{.Events}}
WHERE status = 'pending' AND (triggered_at < $1 OR retry_count >= $2)
ORDER BY triggered_at, id
LIMIT $3`

// Watch is what the watch found: the report's "watch" and the console's
// compaction page.
type Watch struct {
	// Why the job watches instead of retrying.
	Why              string  `json:"why"`
	StackMaxAttempts int     `json:"stack_max_attempts"`
	Pending          int     `json:"pending"`
	Stale            int     `json:"stale"`        // pending past staleAfter, within lookback
	AtStackCap       int     `json:"at_stack_cap"` // retry_count at or past the stack's cap: never retried again
	BeyondLookback   int     `json:"beyond_lookback"`
	OldestStaleAge   float64 `json:"oldest_stale_age_seconds"`
	// Events are the stale and capped events, oldest first (at most
	// maxListed).
	Events          []WatchedEvent `json:"events"`
	EventsNotListed int            `json:"events_not_listed,omitempty"`
}

// WatchedEvent is one event the watch lists.
type WatchedEvent struct {
	EventID     int64     `json:"event_id"`
	AgentID     string    `json:"agent_id"` // clawbolt's user_id
	TriggeredAt time.Time `json:"triggered_at"`
	AgeSeconds  float64   `json:"age_seconds"`
	MinSeq      *int64    `json:"min_message_seq"`
	MaxSeq      *int64    `json:"max_message_seq"`
	RetryCount  int       `json:"retry_count"`
	AtStackCap  bool      `json:"at_stack_cap"`
	Reason      string    `json:"reason"`
}

// watchWhy says why the job watches, in the report and the console.
const watchWhy = "clawbolt's schema: conversations encrypted at rest and no memories table, so the daemon cannot re-compact; " +
	"it lists what clawbolt's own recovery (at its start-up, three attempts) has left pending, and changes nothing"

// Watchlist reads what the watch reports, now: for the console, which
// shows it between passes.
func Watchlist(ctx context.Context, db sqlx.QueryerContext, n *schema.Names, staleAfter, lookback time.Duration, stackMaxAttempts int, now time.Time) (*Watch, error) {
	w := &Watch{Why: watchWhy, StackMaxAttempts: stackMaxAttempts, Events: []WatchedEvent{}}
	var st struct {
		pendingStats
		AtCap   int `db:"at_cap"`
		Watched int `db:"watched"`
	}
	if err := sqlx.GetContext(ctx, db, &st, n.SQL(watchStatsSQL), now.Add(-staleAfter), now.Add(-lookback), stackMaxAttempts); err != nil {
		return nil, fmt.Errorf("compaction: count the watched events: %w", err)
	}
	w.Pending, w.Stale, w.AtStackCap, w.BeyondLookback = st.Fresh+st.Stale+st.BeyondLookback, st.Stale, st.AtCap, st.BeyondLookback
	if st.OldestStale.Valid {
		w.OldestStaleAge = max(now.Sub(st.OldestStale.Time).Seconds(), 0)
	}
	var evs []event
	if err := sqlx.SelectContext(ctx, db, &evs, n.SQL(watchListSQL), now.Add(-staleAfter), stackMaxAttempts, maxListed); err != nil {
		return nil, fmt.Errorf("compaction: list the watched events: %w", err)
	}
	for _, ev := range evs {
		r := resultOf(&ev)
		we := WatchedEvent{EventID: ev.ID, AgentID: ev.AgentID, TriggeredAt: ev.TriggeredAt, AgeSeconds: max(now.Sub(ev.TriggeredAt).Seconds(), 0),
			MinSeq: r.MinSeq, MaxSeq: r.MaxSeq, RetryCount: ev.Attempt, AtStackCap: ev.Attempt >= stackMaxAttempts}
		we.Reason = watchReason(&ev, we.AtStackCap, stackMaxAttempts, now.Sub(ev.TriggeredAt) > lookback)
		w.Events = append(w.Events, we)
	}
	w.EventsNotListed = max(st.Watched-len(w.Events), 0)
	return w, nil
}

func watchReason(ev *event, atCap bool, cap int, beyondLookback bool) string {
	var parts []string
	if atCap {
		parts = append(parts, fmt.Sprintf("at the stack's retry cap (%d of %d attempts): it will never be retried again", ev.Attempt, cap))
	} else {
		parts = append(parts, fmt.Sprintf("pending past staleAfter after %d attempts: retried only when clawbolt starts again", ev.Attempt))
	}
	if !ev.validRange() {
		parts = append(parts, "no message range: nothing to re-compact (clawbolt's recovery skips it)")
	}
	if beyondLookback {
		parts = append(parts, "beyond lookback: clawbolt's recovery no longer looks at it")
	}
	return strings.Join(parts, "; ")
}

// watch is a pass where the job only watches: it counts, lists and sets
// the gauges; it claims and writes nothing.
func (j *Job) watch(ctx context.Context, s settings, start time.Time, rep *Report) error {
	w, err := Watchlist(ctx, j.db, j.names, s.staleAfter, s.lookback, s.stackMaxAttempts, start)
	if err != nil {
		return err
	}
	rep.Watch = w
	rep.Examined = Examined{Pending: w.Pending, Fresh: w.Pending - w.Stale - w.BeyondLookback, BeyondLookback: w.BeyondLookback}
	rep.Backlog = Backlog{Stale: w.Stale, OldestStaleAgeSeconds: w.OldestStaleAge, BeyondLookback: w.BeyondLookback}
	j.m.Backlog.Set(float64(w.Stale))
	j.m.OldestStale.Set(w.OldestStaleAge)
	j.m.BeyondLookback.Set(float64(w.BeyondLookback))
	j.m.AtStackCap.Set(float64(w.AtStackCap))
	j.m.Watching.Set(1)
	return nil
}

// text is the watch's part of the report's text.
func (w *Watch) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "watching only (%s)\n", w.Why)
	fmt.Fprintf(&b, "%d pending: %d past staleAfter, %d at the stack's retry cap (%d attempts), %d beyond lookback\n",
		w.Pending, w.Stale, w.AtStackCap, w.StackMaxAttempts, w.BeyondLookback)
	for _, e := range w.Events {
		fmt.Fprintf(&b, "  event %d (user %s, %s) triggered %s ago: %s\n", e.EventID, e.AgentID, seqRange(e.MinSeq, e.MaxSeq),
			(time.Duration(e.AgeSeconds) * time.Second).String(), e.Reason)
	}
	if w.EventsNotListed > 0 {
		fmt.Fprintf(&b, "  … and %d more events\n", w.EventsNotListed)
	}
	return b.String()
}
