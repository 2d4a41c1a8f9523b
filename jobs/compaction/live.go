package compaction

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/redact"
)

// event is a claimed compaction event.
type event struct {
	ID          int64         `db:"id"`
	AgentID     string        `db:"agent_id"`
	TriggeredAt time.Time     `db:"triggered_at"`
	MinSeq      sql.NullInt64 `db:"min_message_seq"`
	MaxSeq      sql.NullInt64 `db:"max_message_seq"`
	Attempt     int           `db:"retry_count"` // retry_count after this claim
	messages    []llm.Message
	encrypted   int   // messages of the range left out as ciphertext
	loadErr     error // reading its messages failed: the attempt is abandoned
}

// validRange reports whether the event names a usable seq range.
func (e *event) validRange() bool {
	return e.MinSeq.Valid && e.MaxSeq.Valid && e.MinSeq.Int64 <= e.MaxSeq.Int64
}

// live claims and processes every event due at start. A claimer goroutine
// claims batches of `concurrency` events and reads their messages (one query
// per batch); `concurrency` workers call the LLM, outside any transaction,
// and write each outcome in a short transaction of its own. Events touched
// in this pass get a next_attempt_at after start, and only events due at
// start are claimed, so the pass ends.
func (j *Job) live(ctx context.Context, s settings, start time.Time, client *llm.Client, rep *Report) error {
	work := make(chan *event, s.concurrency)
	outcomes := make(chan outcome, s.concurrency)
	var claimErr error
	go func() {
		defer close(work)
		claimErr = j.claimAll(ctx, s, start, work)
	}()

	var wg sync.WaitGroup
	for range s.concurrency {
		wg.Go(func() {
			// Workers drain work even after ctx ends: every claimed event
			// gets an outcome in the report (at worst "interrupted").
			for ev := range work {
				outcomes <- j.process(ctx, s, client, ev)
			}
		})
	}
	go func() {
		wg.Wait()
		close(outcomes)
	}()
	var writeErrs []error
	for o := range outcomes {
		rep.add(o)
		if o.err != nil && len(writeErrs) < 3 {
			writeErrs = append(writeErrs, o.err)
		}
	}
	if errors.Is(claimErr, errStackBusy) {
		rep.StackLockHeld, claimErr = true, nil
	}
	return errors.Join(append([]error{claimErr}, writeErrs...)...)
}

// claimAll claims batches until none is due, handing each event to work.
func (j *Job) claimAll(ctx context.Context, s settings, start time.Time, work chan<- *event) error {
	var after cursor
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("compaction: pass interrupted: %w", err)
		}
		if j.braked() {
			j.log.Warn("compaction: shadowMode or mutationsFrozen turned on during the pass; claiming no more events")
			return nil
		}
		if err := j.guard.Wait(ctx, Name); err != nil {
			return fmt.Errorf("compaction: %w", err)
		}
		evs, err := j.claim(ctx, s, start, after, s.concurrency)
		if errors.Is(err, errStackBusy) {
			j.log.Info("compaction: the stack's own compaction recovery holds its lock; claiming nothing until the next pass")
			return err
		}
		if err != nil {
			return fmt.Errorf("compaction: claim stale events: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, ev := range evs {
			after = after.max(ev)
		}
		j.m.Retries.Add(float64(len(evs)))
		loadErr := j.loadMessages(ctx, evs)
		for _, ev := range evs {
			ev.loadErr = loadErr
			work <- ev
		}
		if loadErr != nil {
			return fmt.Errorf("compaction: read the messages of %d claimed events: %w", len(evs), loadErr)
		}
	}
}

// cursor is a position in the pass's (triggered_at, id) order.
type cursor struct {
	triggeredAt time.Time // zero: before every event
	id          int64
}

func (c cursor) max(ev *event) cursor {
	if ev.TriggeredAt.After(c.triggeredAt) || (ev.TriggeredAt.Equal(c.triggeredAt) && ev.ID > c.id) {
		return cursor{ev.TriggeredAt, ev.ID}
	}
	return c
}

// claim claims up to n due events after the cursor, holding the stack's
// own recovery lock (watch.go) for the claim's transaction; the attempt is
// committed when it returns. errStackBusy: the stack holds it.
func (j *Job) claim(ctx context.Context, s settings, start time.Time, after cursor, n int) ([]*event, error) {
	tx, err := j.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var locked bool
	if err := tx.GetContext(ctx, &locked, stackLockSQL); err != nil {
		return nil, fmt.Errorf("take the stack's compaction recovery lock: %w", err)
	}
	if !locked {
		return nil, errStackBusy
	}
	var evs []*event
	q, args, err := j.sql.Claim.Bind(map[string]any{
		"stale": start.Add(-s.staleAfter), "lookback": start.Add(-s.lookback), "start": start, "n": n,
		"now": j.now(), "hold": s.hold.Seconds(), "initial": s.initial.Seconds(), "max": s.max.Seconds(),
		"after_at": after.triggeredAt, "after_id": after.id, "attempts": s.maxAttempts})
	if err != nil {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &evs, q, args...); err != nil {
		return nil, err
	}
	return evs, tx.Commit()
}

// loadMessages fills in the messages of the events with a valid range, in
// one query for the batch.
func (j *Job) loadMessages(ctx context.Context, evs []*event) error {
	var ids, los, his []int64
	var agents []string
	byID := map[int64]*event{}
	for _, ev := range evs {
		if !ev.validRange() {
			continue
		}
		ids = append(ids, ev.ID)
		agents = append(agents, ev.AgentID)
		los = append(los, ev.MinSeq.Int64)
		his = append(his, ev.MaxSeq.Int64)
		byID[ev.ID] = ev
	}
	if len(ids) == 0 {
		return nil
	}
	q, args, err := j.sql.Messages.Bind(map[string]any{"ids": pq.Array(ids), "agents": pq.Array(agents),
		"los": pq.Array(los), "his": pq.Array(his),
		"messages": maxMessagesRead, "chars": maxBodyChars, "transcript": maxTranscriptChars})
	if err != nil {
		return err
	}
	rows, err := j.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var m llm.Message
		if err := rows.Scan(&id, &m.Seq, &m.Direction, &m.Body); err != nil {
			return err
		}
		if ev := byID[id]; ev != nil {
			if ciphertext(m.Body) {
				ev.encrypted++ // never sent to the LLM
				continue
			}
			ev.messages = append(ev.messages, m)
		}
	}
	return rows.Err()
}

// Failure reasons (the compaction_failed_total label).
const (
	reasonMaxAttempts  = "max_attempts"
	reasonNoRange      = "no_range"
	reasonMessagesGone = "messages_gone"
	reasonEncrypted    = "encrypted"
)

// outcome is what happened to one claimed event.
type outcome struct {
	EventResult
	failReason string // set when Outcome is failed
	llmKind    string // set when the LLM call failed
	err        error  // the outcome could not be written
}

func resultOf(ev *event) EventResult {
	r := EventResult{EventID: ev.ID, AgentID: ev.AgentID, Attempt: ev.Attempt, Messages: len(ev.messages)}
	if ev.MinSeq.Valid {
		r.MinSeq = &ev.MinSeq.Int64
	}
	if ev.MaxSeq.Valid {
		r.MaxSeq = &ev.MaxSeq.Int64
	}
	return r
}

// process runs one claimed event's attempt to its outcome.
func (j *Job) process(ctx context.Context, s settings, client *llm.Client, ev *event) outcome {
	o := outcome{EventResult: resultOf(ev)}
	switch {
	case ev.loadErr != nil:
		return j.interrupted(o, "its messages could not be read: "+clean(ev.loadErr.Error()))
	case !ev.MinSeq.Valid || !ev.MaxSeq.Valid:
		return j.giveUp(ctx, s, ev, o, reasonNoRange,
			"the event has no message range (min_message_seq or max_message_seq is null): nothing to re-compact", "")
	case ev.MinSeq.Int64 > ev.MaxSeq.Int64:
		return j.giveUp(ctx, s, ev, o, reasonNoRange,
			fmt.Sprintf("the event's message range is inverted (min_message_seq %d > max_message_seq %d): nothing to re-compact", ev.MinSeq.Int64, ev.MaxSeq.Int64), "")
	case len(ev.messages) == 0 && ev.encrypted > 0:
		return j.giveUp(ctx, s, ev, o, reasonEncrypted,
			fmt.Sprintf("messages %d–%d of agent %s are encrypted at rest: nothing readable to re-compact", ev.MinSeq.Int64, ev.MaxSeq.Int64, ev.AgentID),
			encryptedSummary(ev.MinSeq.Int64, ev.MaxSeq.Int64, ev.encrypted))
	case len(ev.messages) == 0:
		return j.giveUp(ctx, s, ev, o, reasonMessagesGone,
			fmt.Sprintf("messages gone: none of seq %d–%d remain for agent %s", ev.MinSeq.Int64, ev.MaxSeq.Int64, ev.AgentID),
			goneSummary(ev.MinSeq.Int64, ev.MaxSeq.Int64))
	}

	var facts []string
	err := errNoLLM
	if client != nil {
		facts, err = client.CompactionFacts(ctx, ev.messages)
	}
	if j.braked() {
		return j.interrupted(o, "shadowMode or mutationsFrozen was turned on during the pass: nothing written")
	}
	if err == nil {
		return j.complete(ctx, s, ev, o, facts, model(client))
	}
	kind := llm.KindOf(err)
	if errors.Is(err, errNoLLM) {
		kind = kindNotConfigured
	}
	j.m.LLMErrors.WithLabelValues(kind).Inc()
	o.llmKind, o.ErrorKind, o.Error = kind, kind, errorText(err)
	if kind == llm.KindCanceled {
		// The pass is stopping. The attempt stays counted; the event comes
		// back after its provisional next_attempt_at, as after a crash.
		return j.interrupted(o, "the pass was stopped during the LLM call")
	}
	if ev.Attempt >= s.maxAttempts {
		d, derr := j.digest(ctx, ev)
		if derr != nil {
			o.err = fmt.Errorf("compaction: summarise event %d: %w", ev.ID, derr)
			return j.interrupted(o, "its range could not be read for the summary: "+clean(derr.Error()))
		}
		var summary string
		if d.Total > 0 {
			summary = summarize(d)
		} else {
			summary = goneSummary(ev.MinSeq.Int64, ev.MaxSeq.Int64)
		}
		return j.giveUp(ctx, s, ev, o, reasonMaxAttempts,
			fmt.Sprintf("gave up after attempt %d of %d: %s", ev.Attempt, s.maxAttempts, errorText(err)), summary)
	}
	return j.reschedule(ctx, s, ev, o, err)
}

func (j *Job) interrupted(o outcome, why string) outcome {
	o.Outcome = OutcomeSkipped
	o.Reason = "interrupted (attempt counted; retried after its backoff): " + why
	j.log.Warn("compaction: attempt interrupted", "event_id", o.EventID, "attempt", o.Attempt, "why", why)
	return o
}

func model(c *llm.Client) string {
	if c == nil {
		return ""
	}
	return c.Model()
}

// errorText is err as stored in last_error and history: no control
// characters, bounded, and without credentials (package redact: the llm
// package's errors quote the server's answer, which a misbehaving server or
// proxy may fill with the request's Authorization header, and the endpoint
// URL may carry credentials of its own).
func errorText(err error) string {
	return truncateRunes(redact.Text(clean(err.Error())), maxErrorLen)
}

// digest reads what the deterministic summary of ev's range is built from.
func (j *Job) digest(ctx context.Context, ev *event) (digest, error) {
	d := digest{MinSeq: ev.MinSeq.Int64, MaxSeq: ev.MaxSeq.Int64}
	row := j.db.QueryRowxContext(ctx, j.sql.DigestCounts, ev.AgentID, d.MinSeq, d.MaxSeq)
	if err := row.Scan(&d.Total, &d.Inbound, &d.Outbound); err != nil {
		return d, err
	}
	if d.Total == 0 {
		return d, nil
	}
	q, args, err := j.sql.DigestLines.Bind(map[string]any{"agent": ev.AgentID, "lo": d.MinSeq, "hi": d.MaxSeq,
		"lines": digestLinesPerSide, "chars": digestBodyChars})
	if err != nil {
		return d, err
	}
	rows, err := j.db.QueryContext(ctx, q, args...)
	if err != nil {
		return d, err
	}
	defer rows.Close()
	for rows.Next() {
		var dir, body string
		var seq int64
		if err := rows.Scan(&dir, &seq, &body); err != nil {
			return d, err
		}
		if dir == "inbound" {
			d.User = append(d.User, body)
		} else {
			d.Assistant = append(d.Assistant, body)
		}
	}
	return d, rows.Err()
}
