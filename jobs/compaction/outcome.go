package compaction

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/store"
)

// HistoryMemoryID is memory_history.memory_id for an event's rows. History
// rows need a non-null memory_id, and an attempt is about an event, not one
// memory (a completion inserts several, a failure one summary): the
// synthetic, stable id compaction:<event id> lets an auditor select every
// row of one event.
func HistoryMemoryID(eventID int64) string { return "compaction:" + strconv.FormatInt(eventID, 10) }

// FactKey is the idempotency key of a re-compacted fact: per event and
// normalised fact text, so the same fact from a repeated retry of the same
// event is inserted once.
func FactKey(eventID int64, fact string) string {
	sum := sha256.Sum256([]byte(normalize(fact)))
	return "compaction:" + strconv.FormatInt(eventID, 10) + ":" + hex.EncodeToString(sum[:16])
}

// SummaryKey is the idempotency key of an event's deterministic summary.
func SummaryKey(eventID int64) string { return "compaction-summary:" + strconv.FormatInt(eventID, 10) }

// normalize is a fact's normalized_content and the input of its key: case
// and spacing do not make a different fact.
func normalize(fact string) string { return strings.ToLower(clean(fact)) }

// historyMeta is memory_history.metadata of the job's rows.
type historyMeta struct {
	AgentID         string     `json:"agent_id"`
	EventID         int64      `json:"event_id"`
	Attempt         int        `json:"attempt"`
	MaxAttempts     int        `json:"max_attempts"`
	Outcome         string     `json:"outcome"`
	Error           *string    `json:"error"` // null on success
	ErrorKind       string     `json:"error_kind,omitempty"`
	Reason          string     `json:"failure_reason,omitempty"`
	MinSeq          *int64     `json:"min_message_seq"`
	MaxSeq          *int64     `json:"max_message_seq"`
	MessagesRead    int        `json:"messages_read"`
	Model           string     `json:"model,omitempty"`
	FactsReturned   *int       `json:"facts_returned,omitempty"`
	FactsInserted   *int       `json:"facts_inserted,omitempty"`
	FactMemoryIDs   []string   `json:"fact_memory_ids,omitempty"`
	SummaryMemoryID string     `json:"summary_memory_id,omitempty"`
	NextAttemptAt   *time.Time `json:"next_attempt_at,omitempty"`
}

func metaOf(ev *event, o outcome, s settings) historyMeta {
	m := historyMeta{AgentID: ev.AgentID, EventID: ev.ID, Attempt: ev.Attempt, MaxAttempts: s.maxAttempts,
		Outcome: o.Outcome, ErrorKind: o.ErrorKind, MinSeq: o.MinSeq, MaxSeq: o.MaxSeq, MessagesRead: len(ev.messages)}
	if o.Error != "" {
		e := o.Error
		m.Error = &e
	}
	return m
}

// errMovedOn means the event is no longer this attempt's to finish.
var errMovedOn = errors.New("moved on")

// withEvent runs fn in a transaction holding ev's row lock, provided the
// event is still pending and, when fenced, still at this attempt (a later
// attempt by another worker, after this one outlived its hold, owns it
// then). Otherwise it returns a skip reason and writes nothing.
func (j *Job) withEvent(ctx context.Context, ev *event, fenced bool, fn func(tx *sqlx.Tx) error) (skip string, err error) {
	err = store.InTx(ctx, j.db, func(tx *sqlx.Tx) error {
		var cur struct {
			Status  string `db:"status"`
			Retries int    `db:"retry_count"`
		}
		if err := tx.GetContext(ctx, &cur, j.sql.LockEvent, ev.ID); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				skip = "the event was deleted meanwhile"
				return errMovedOn
			}
			return err
		}
		switch {
		case cur.Status != "pending":
			skip = fmt.Sprintf("the event became %s meanwhile (another worker or the agent finished it)", cur.Status)
			return errMovedOn
		case fenced && cur.Retries != ev.Attempt:
			skip = fmt.Sprintf("a later attempt (%d) owns the event now", cur.Retries)
			return errMovedOn
		}
		return fn(tx)
	})
	if errors.Is(err, errMovedOn) {
		return skip, nil
	}
	return "", err
}

func (j *Job) insertHistory(ctx context.Context, tx *sqlx.Tx, ev *event, name, content, reason string, meta historyMeta) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	var nc *string
	if content != "" {
		nc = &content
	}
	q, args, err := j.sql.History.Bind(map[string]any{"id": ident.Random("mh_", 8), "memory_id": HistoryMemoryID(ev.ID),
		"event": name, "new_content": nc, "changed_by": "supersessiond:compaction", "reason": reason, "metadata": string(b)})
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, q, args...)
	return err
}

// complete stores the facts and marks the event completed, unless another
// worker finished it first (then nothing is written: the facts it stored are
// the event's).
func (j *Job) complete(ctx context.Context, s settings, ev *event, o outcome, raw []string, model string) outcome {
	var ids, contents, norms, keys []string
	seen := map[string]bool{}
	for _, f := range raw {
		c := truncateRunes(clean(f), 1000)
		k := FactKey(ev.ID, c)
		if c == "" || seen[k] {
			continue
		}
		seen[k] = true
		ids, contents, norms, keys = append(ids, ident.Random("mem_", 8)), append(contents, c), append(norms, normalize(c)), append(keys, k)
	}
	text := strings.Join(contents, "\n")
	o.Outcome = OutcomeCompleted
	meta := metaOf(ev, o, s)
	meta.Model = model
	now := j.now()
	var inserted []string
	skip, err := j.withEvent(ctx, ev, false, func(tx *sqlx.Tx) error {
		inserted = inserted[:0]
		if len(ids) > 0 {
			q, args, err := j.sql.InsertFacts.Bind(map[string]any{"agent": ev.AgentID, "event": strconv.FormatInt(ev.ID, 10),
				"ids": pq.Array(ids), "contents": pq.Array(contents), "normalized": pq.Array(norms), "keys": pq.Array(keys)})
			if err == nil {
				err = tx.SelectContext(ctx, &inserted, q, args...)
			}
			if err != nil {
				return fmt.Errorf("insert facts: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, j.sql.Complete, ev.ID, now, utf8.RuneCountInString(text)); err != nil {
			return fmt.Errorf("mark completed: %w", err)
		}
		n, r := len(inserted), len(contents)
		meta.FactsInserted, meta.FactsReturned, meta.FactMemoryIDs = &n, &r, inserted
		reason := fmt.Sprintf("re-compacted on attempt %d: %d facts extracted, %d inserted", ev.Attempt, r, n)
		return j.insertHistory(ctx, tx, ev, EventRetried, text, reason, meta)
	})
	return j.settle(ev, o, skip, err, func(o *outcome) {
		o.Facts = len(inserted)
		j.m.Completed.Inc()
		j.m.FactsInserted.Add(float64(len(inserted)))
		j.log.Debug("compaction: event re-compacted", "event_id", ev.ID, "agent_id", ev.AgentID, "attempt", ev.Attempt, "facts_inserted", len(inserted))
	})
}

// reschedule records a failed attempt and when to try again.
func (j *Job) reschedule(ctx context.Context, s settings, ev *event, o outcome, cause error) outcome {
	now := j.now()
	next := now.Add(backoff(ev.Attempt, s.initial, s.max, j.rand())).UTC().Truncate(time.Microsecond)
	o.Outcome = OutcomeRescheduled
	o.NextAttemptAt = &next
	meta := metaOf(ev, o, s)
	meta.NextAttemptAt = &next
	skip, err := j.withEvent(ctx, ev, true, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, j.sql.Reschedule, ev.ID, o.Error, next); err != nil {
			return fmt.Errorf("reschedule: %w", err)
		}
		reason := fmt.Sprintf("attempt %d of %d failed (%s); next attempt at %s", ev.Attempt, s.maxAttempts, o.ErrorKind, next.Format(time.RFC3339))
		return j.insertHistory(ctx, tx, ev, EventRetried, "", reason, meta)
	})
	return j.settle(ev, o, skip, err, func(o *outcome) {
		j.m.Rescheduled.Inc()
		j.log.Debug("compaction: attempt failed; rescheduled", "event_id", ev.ID, "attempt", ev.Attempt, "kind", o.ErrorKind, "err", cause, "next_attempt_at", next)
	})
}

// giveUp marks the event failed, storing summary (when not empty) as the
// range's compaction_summary memory in the same transaction.
func (j *Job) giveUp(ctx context.Context, s settings, ev *event, o outcome, reason, lastError, summary string) outcome {
	lastError = truncateRunes(clean(lastError), maxErrorLen)
	o.Outcome = OutcomeFailed
	o.failReason = reason
	o.Error = lastError
	meta := metaOf(ev, o, s)
	meta.Reason = reason
	var summaryID string
	skip, err := j.withEvent(ctx, ev, true, func(tx *sqlx.Tx) error {
		var summaryLen *int
		if summary != "" {
			q, args, err := j.sql.InsertSummary.Bind(map[string]any{"id": ident.Random("mem_", 8), "agent": ev.AgentID,
				"content": summary, "event": strconv.FormatInt(ev.ID, 10), "key": SummaryKey(ev.ID)})
			if err == nil {
				err = tx.GetContext(ctx, &summaryID, q, args...)
			}
			if err != nil {
				return fmt.Errorf("store summary: %w", err)
			}
			n := utf8.RuneCountInString(summary)
			summaryLen = &n
		}
		if _, err := tx.ExecContext(ctx, j.sql.Fail, ev.ID, lastError, summaryLen); err != nil {
			return fmt.Errorf("mark failed: %w", err)
		}
		meta.SummaryMemoryID = summaryID
		return j.insertHistory(ctx, tx, ev, EventFailed, summary, lastError, meta)
	})
	return j.settle(ev, o, skip, err, func(o *outcome) {
		o.SummaryMemoryID = summaryID
		j.m.Failed.WithLabelValues(reason).Inc()
		j.log.Warn("compaction: event given up", "event_id", ev.ID, "agent_id", ev.AgentID, "attempt", ev.Attempt,
			"reason", reason, "last_error", lastError, "summary_memory_id", summaryID)
	})
}

// settle turns a write's result into the outcome: written (ok runs), skipped
// because the event moved on, or not written (err set; the attempt stays
// counted and the event is retried after its hold).
func (j *Job) settle(ev *event, o outcome, skip string, err error, ok func(*outcome)) outcome {
	switch {
	case err != nil:
		o.err = fmt.Errorf("compaction: record the outcome of event %d attempt %d: %w", ev.ID, ev.Attempt, err)
		o.Outcome = OutcomeSkipped
		o.Reason = "outcome not recorded (attempt counted; retried after its backoff): " + truncateRunes(clean(err.Error()), 300)
		j.log.Error("compaction: could not record an attempt's outcome", "event_id", ev.ID, "attempt", ev.Attempt, "err", err)
	case skip != "":
		o.Outcome = OutcomeSkipped
		o.Reason = skip
		o.failReason = ""
	default:
		ok(&o)
	}
	return o
}
