package compaction

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/jobs"
)

// Outcomes of an event in a pass.
const (
	OutcomeCompleted   = "completed"   // re-compacted: facts stored, event completed
	OutcomeRescheduled = "rescheduled" // attempt failed; next_attempt_at set by backoff
	OutcomeFailed      = "failed"      // given up: event failed (with a summary memory when it has a range)
	OutcomeSkipped     = "skipped"     // claimed, but no outcome written (see Reason)
	OutcomeWouldRetry  = "would_retry" // shadow mode: a live pass would claim it
)

// maxListed bounds the events listed in a report (the counts are complete).
const maxListed = 200

// Report says what one pass did.
type Report struct {
	jobs.Run
	LLMConfigured bool `json:"llm_configured"`
	Settings      struct {
		StaleAfterSeconds float64 `json:"stale_after_seconds"`
		LookbackSeconds   float64 `json:"lookback_seconds"`
		MaxAttempts       int     `json:"max_attempts"`
		Concurrency       int     `json:"concurrency"`
	} `json:"settings"`
	// Examined counts the pending events when the pass started.
	Examined Examined `json:"examined"`

	Claimed       int            `json:"claimed"`
	Completed     int            `json:"completed"`
	Rescheduled   int            `json:"rescheduled"`
	Failed        int            `json:"failed"`
	Interrupted   int            `json:"interrupted"`
	WouldRetry    int            `json:"would_retry"` // shadow mode
	FactsInserted int            `json:"facts_inserted"`
	LLMErrors     map[string]int `json:"llm_errors,omitempty"` // by kind
	// Skipped lists what was left alone, and why.
	Skipped []Skip `json:"skipped"`
	// Events lists the events claimed (or, in shadow mode, that would be),
	// by event id; at most maxListed of them (the first outcomes to arrive).
	Events          []EventResult `json:"events"`
	EventsNotListed int           `json:"events_not_listed,omitempty"`
	// Backlog is the stale backlog after the pass (what the gauges say).
	Backlog Backlog `json:"backlog"`
	// StackLockHeld: the stack's own compaction recovery held its lock, so
	// the pass claimed nothing more (watch.go).
	StackLockHeld bool `json:"stack_lock_held,omitempty"`
	// Watch is what a pass that only watches found (watch.go).
	Watch *Watch `json:"watch,omitempty"`

	skips                map[string]int
	staleAfter, lookback time.Duration // for the text
}

// shadow reports whether the pass changed nothing (shadowMode or
// mutationsFrozen).
func (r *Report) shadow() bool { return r.Mode != jobs.ModeLive }

// Examined counts pending events by what the pass does with them.
type Examined struct {
	Pending        int `json:"pending"`
	Due            int `json:"due"`             // stale, within lookback, next_attempt_at null or past
	BackingOff     int `json:"backing_off"`     // stale, within lookback, next_attempt_at in the future
	Fresh          int `json:"fresh"`           // pending for less than staleAfter
	BeyondLookback int `json:"beyond_lookback"` // pending for longer than lookback
}

// Skip is a reason things were left alone, and the events (some of them).
type Skip struct {
	jobs.Skip
	EventIDs []int64 `json:"event_ids,omitempty"`
}

func skipOf(reason string, n int) Skip { return Skip{Skip: jobs.Skip{Reason: reason, Count: n}} }

// Backlog is the stale pending events (within lookback) after the pass.
type Backlog struct {
	Stale                 int     `json:"stale"`
	OldestStaleAgeSeconds float64 `json:"oldest_stale_age_seconds"`
	BeyondLookback        int     `json:"beyond_lookback"`
}

// EventResult is one event's outcome in a pass.
type EventResult struct {
	EventID         int64      `json:"event_id"`
	AgentID         string     `json:"agent_id"`
	MinSeq          *int64     `json:"min_message_seq"`
	MaxSeq          *int64     `json:"max_message_seq"`
	Attempt         int        `json:"attempt"` // retry_count after the claim (shadow: the attempt it would be)
	Outcome         string     `json:"outcome"`
	Messages        int        `json:"messages_read,omitempty"`
	Facts           int        `json:"facts_inserted,omitempty"`
	SummaryMemoryID string     `json:"summary_memory_id,omitempty"`
	NextAttemptAt   *time.Time `json:"next_attempt_at,omitempty"`
	Error           string     `json:"error,omitempty"`
	ErrorKind       string     `json:"error_kind,omitempty"`
	Reason          string     `json:"reason,omitempty"`
}

func newReport(start time.Time, mode jobs.Mode, llmConfigured bool, s settings) *Report {
	r := &Report{Run: jobs.NewRun(Name, mode, start), LLMConfigured: llmConfigured, Skipped: []Skip{}, Events: []EventResult{},
		staleAfter: s.staleAfter, lookback: s.lookback}
	r.Settings.StaleAfterSeconds = jobs.Seconds(s.staleAfter)
	r.Settings.LookbackSeconds = jobs.Seconds(s.lookback)
	r.Settings.MaxAttempts = s.maxAttempts
	r.Settings.Concurrency = s.concurrency
	return r
}

func (r *Report) examined(st pendingStats) {
	r.Examined = Examined{
		Pending:        st.Fresh + st.Stale + st.BeyondLookback,
		Due:            st.Stale - st.BackingOff,
		BackingOff:     st.BackingOff,
		Fresh:          st.Fresh,
		BeyondLookback: st.BeyondLookback,
	}
	if st.Fresh > 0 {
		r.Skipped = append(r.Skipped, skipOf("not stale yet (pending for less than "+r.staleAfter.String()+")", st.Fresh))
	}
	if st.BackingOff > 0 {
		r.Skipped = append(r.Skipped, skipOf("backing off (next_attempt_at in the future)", st.BackingOff))
	}
	if st.BeyondLookback > 0 {
		r.Skipped = append(r.Skipped, skipOf("beyond lookback (pending for more than "+r.lookback.String()+"; never retried automatically)", st.BeyondLookback))
	}
}

func (r *Report) list(e EventResult) {
	if len(r.Events) < maxListed {
		r.Events = append(r.Events, e)
	} else {
		r.EventsNotListed++
	}
}

// add records a claimed event's outcome.
func (r *Report) add(o outcome) {
	r.Claimed++
	switch o.Outcome {
	case OutcomeCompleted:
		r.Completed++
		r.FactsInserted += o.Facts
	case OutcomeRescheduled:
		r.Rescheduled++
	case OutcomeFailed:
		r.Failed++
	case OutcomeSkipped:
		r.skip(o.Reason, o.EventID)
		if strings.HasPrefix(o.Reason, "interrupted") || strings.HasPrefix(o.Reason, "outcome not recorded") {
			r.Interrupted++
		}
	}
	if o.llmKind != "" {
		if r.LLMErrors == nil {
			r.LLMErrors = map[string]int{}
		}
		r.LLMErrors[o.llmKind]++
	}
	r.list(o.EventResult)
}

func (r *Report) skip(reason string, id int64) {
	if r.skips == nil {
		r.skips = map[string]int{}
	}
	i, ok := r.skips[reason]
	if !ok {
		i = len(r.Skipped)
		r.skips[reason] = i
		r.Skipped = append(r.Skipped, skipOf(reason, 0))
	}
	r.Skipped[i].Count++
	if len(r.Skipped[i].EventIDs) < maxListed {
		r.Skipped[i].EventIDs = append(r.Skipped[i].EventIDs, id)
	}
}

// LogValue keeps the daemon's "job done" log line short: the counts, not
// the event list (which --json and Text give).
func (r *Report) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("mode", string(r.Mode)),
		slog.Int("pending", r.Examined.Pending),
		slog.Int("due", r.Examined.Due),
	}
	if r.shadow() {
		attrs = append(attrs, slog.Int("would_retry", r.WouldRetry))
	} else {
		attrs = append(attrs, slog.Int("claimed", r.Claimed), slog.Int("completed", r.Completed),
			slog.Int("rescheduled", r.Rescheduled), slog.Int("failed", r.Failed), slog.Int("interrupted", r.Interrupted),
			slog.Int("facts_inserted", r.FactsInserted))
	}
	if len(r.LLMErrors) > 0 {
		attrs = append(attrs, slog.Any("llm_errors", r.LLMErrors))
	}
	attrs = append(attrs, slog.Int("backlog", r.Backlog.Stale), slog.Float64("oldest_stale_age_seconds", r.Backlog.OldestStaleAgeSeconds))
	return slog.GroupValue(attrs...)
}

// Text is the report for a person.
func (r *Report) Text() string {
	var b strings.Builder
	mode := string(jobs.ModeLive)
	if r.shadow() {
		mode = string(r.Mode) + " mode: nothing changed"
	}
	llm := "LLM configured"
	if !r.LLMConfigured {
		llm = "no LLM configured: attempts fail and ranges end as deterministic summaries"
	}
	if r.Watch != nil {
		fmt.Fprintf(&b, "compaction watch at %s: ", r.StartedAt.Format(time.RFC3339))
		b.WriteString(r.Watch.text())
		return b.String()
	}
	fmt.Fprintf(&b, "compaction retry pass (%s) at %s; %s\n", mode, r.StartedAt.Format(time.RFC3339), llm)
	e := r.Examined
	fmt.Fprintf(&b, "examined %d pending events: %d due, %d backing off, %d not yet stale, %d beyond lookback\n",
		e.Pending, e.Due, e.BackingOff, e.Fresh, e.BeyondLookback)
	if r.shadow() {
		fmt.Fprintf(&b, "would retry %d events\n", r.WouldRetry)
	} else {
		fmt.Fprintf(&b, "claimed %d: %d completed (%d facts inserted), %d rescheduled, %d failed, %d interrupted\n",
			r.Claimed, r.Completed, r.FactsInserted, r.Rescheduled, r.Failed, r.Interrupted)
	}
	for _, ev := range r.Events {
		fmt.Fprintf(&b, "  %-12s event %d (agent %s, %s) attempt %d", ev.Outcome, ev.EventID, ev.AgentID, seqRange(ev.MinSeq, ev.MaxSeq), ev.Attempt)
		switch ev.Outcome {
		case OutcomeCompleted:
			fmt.Fprintf(&b, ": %d facts inserted from %d messages", ev.Facts, ev.Messages)
		case OutcomeRescheduled:
			fmt.Fprintf(&b, ": %s; next attempt %s", ev.Error, ev.NextAttemptAt.Format(time.RFC3339))
		case OutcomeFailed:
			fmt.Fprintf(&b, ": %s", ev.Error)
			if ev.SummaryMemoryID != "" {
				fmt.Fprintf(&b, "; summary memory %s", ev.SummaryMemoryID)
			}
		case OutcomeSkipped, OutcomeWouldRetry:
			fmt.Fprintf(&b, ": %s", ev.Reason)
		}
		b.WriteByte('\n')
	}
	if r.EventsNotListed > 0 {
		fmt.Fprintf(&b, "  … and %d more events\n", r.EventsNotListed)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("skipped:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "  %d %s", s.Count, s.Reason)
			if len(s.EventIDs) > 0 {
				fmt.Fprintf(&b, " (events %s)", ids(s.EventIDs))
			}
			b.WriteByte('\n')
		}
	}
	if len(r.LLMErrors) > 0 {
		kinds := make([]string, 0, len(r.LLMErrors))
		for k, n := range r.LLMErrors {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "LLM errors: %s\n", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, "backlog: %d stale pending %s", r.Backlog.Stale, plural(int64(r.Backlog.Stale), "event", "events"))
	if r.Backlog.Stale > 0 {
		fmt.Fprintf(&b, ", oldest %s", (time.Duration(r.Backlog.OldestStaleAgeSeconds) * time.Second).String())
	}
	if r.Backlog.BeyondLookback > 0 {
		fmt.Fprintf(&b, "; %d beyond lookback need an operator", r.Backlog.BeyondLookback)
	}
	b.WriteByte('\n')
	return b.String()
}

func seqRange(lo, hi *int64) string {
	if lo == nil || hi == nil {
		return "no seq range"
	}
	return fmt.Sprintf("seq %d–%d", *lo, *hi)
}

func ids(v []int64) string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
