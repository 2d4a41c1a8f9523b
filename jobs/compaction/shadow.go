package compaction

import (
	"context"
	"fmt"
	"time"
)

// shadow lists what a live pass would retry and changes nothing, not even
// retry_count: shadowMode and mutationsFrozen mean no agent data is written.
func (j *Job) shadow(ctx context.Context, s settings, start time.Time, rep *Report) error {
	var rows []struct {
		event
		HasMessages bool `db:"has_messages"`
	}
	q, args, err := j.sql.Candidates.Bind(map[string]any{"stale": start.Add(-s.staleAfter), "lookback": start.Add(-s.lookback),
		"start": start, "n": maxListed})
	if err == nil {
		err = j.db.SelectContext(ctx, &rows, q, args...)
	}
	if err != nil {
		return fmt.Errorf("compaction: list the events a live pass would retry: %w", err)
	}
	rep.WouldRetry = rep.Examined.Due
	rep.EventsNotListed = max(rep.Examined.Due-len(rows), 0)
	for _, r := range rows {
		ev := r.event
		ev.Attempt++ // the attempt a claim would count
		res := resultOf(&ev)
		res.Outcome = OutcomeWouldRetry
		res.Reason = wouldDo(&ev, r.HasMessages, s.maxAttempts)
		rep.Events = append(rep.Events, res)
	}
	return nil
}

func wouldDo(ev *event, hasMessages bool, maxAttempts int) string {
	switch {
	case !ev.validRange():
		return "would be marked failed at once: no valid message range"
	case !hasMessages:
		return "would be marked failed at once: its messages are gone (a summary saying so would be stored)"
	case ev.Attempt >= maxAttempts:
		return fmt.Sprintf("would re-compact (attempt %d of %d: if it fails, the event is given up with a summary)", ev.Attempt, maxAttempts)
	default:
		return fmt.Sprintf("would re-compact (attempt %d of %d)", ev.Attempt, maxAttempts)
	}
}
