package supersession

import (
	"context"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// The change log: what the daemon changed, in the log, so an operator
// watching journald sees what was retired without querying history. One
// line per applied supersession, whoever applied it (the sweep, the inline
// hook, an operator); one line per batch of proposals, with counts; and at
// debug level one line per pair examined. Contents are clipped: an
// attribute may hold a megabyte of text, a log line may not.

// SourceOperator is the change log's source for the operator's commands
// (the automatic paths say sweep or inline, Pass.Source).
const SourceOperator = "operator"

// logContent is how many characters of an attribute's content a log line
// carries.
const logContent = 80

// Clip shortens s to n characters on one line, marking a cut with "…".
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Short is content shortened for a log line.
func Short(s string) string { return Clip(s, logContent) }

// Logger is the engine's logger; the operator's commands built on the
// engine log their changes through it.
func (e *Engine) Logger() *slog.Logger { return e.log }

// LogApplied writes one line per supersession that was applied and
// committed: items are what was asked, applied what the guarded write did.
func (e *Engine) LogApplied(source string, items []Supersession, applied []Applied) {
	if len(applied) == 0 || !e.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	byOld := make(map[string]*Supersession, len(items))
	for i := range items {
		byOld[items[i].Meta.OldAttributeID] = &items[i]
	}
	for _, a := range applied {
		it := byOld[a.OldAttributeID]
		if it == nil {
			continue
		}
		m := it.Meta
		attrs := []any{"source", source, "history_id", a.HistoryID, "agent_id", m.AgentID,
			"old_attribute_id", m.OldAttributeID, "new_attribute_id", m.NewAttributeID,
			"old_content", Short(it.OldContent), "new_content", Short(it.NewContent),
			"method", string(m.Method), "confidence", m.Confidence, "signals", m.Signals.Names()}
		if m.ProposalID != "" {
			attrs = append(attrs, "proposal_id", m.ProposalID)
		}
		if m.RunID != "" {
			attrs = append(attrs, "run_id", m.RunID)
		}
		e.log.Info("supersession applied", attrs...)
	}
}

// logProposed summarises one written batch of proposals.
func (e *Engine) logProposed(pass Pass, asked int, modes map[Mode]int, w written) {
	if w.ok == 0 && w.failed == 0 {
		return
	}
	e.log.Info("supersession proposals written", "source", pass.Source, "run_id", pass.Actor.RequestID,
		"shadow", modes[ModeShadow], "review", modes[ModeReview], "already_proposed", w.noop, "failed", w.failed, "decisions", asked)
}

// PairTrace is what the plan found about one pair it examined: logged at
// debug level (maintenance.log.level: debug).
type PairTrace struct {
	Old, New   *Attribute
	Confidence float64
	Signals    []string
	Method     Method
	// Outcome: supersede, propose_shadow, propose_review (the pair the old
	// attribute's decision picked), contradiction (a contradiction that was
	// not picked: below the review band, or a newer one won), none (nothing
	// fired), vetoed, or semantic_pending (awaiting the LLM's verdict).
	Outcome string
}

// logTraces writes the pairs a plan examined, at debug level.
func (e *Engine) logTraces(ctx context.Context, source string, traces []PairTrace) {
	for _, t := range traces {
		e.log.LogAttrs(ctx, slog.LevelDebug, "supersession pair examined",
			slog.String("source", source), slog.String("agent_id", t.Old.AgentID), slog.String("aspect_id", t.Old.AspectID),
			slog.String("old_attribute_id", t.Old.ID), slog.String("new_attribute_id", t.New.ID),
			slog.String("old_content", Short(t.Old.Content.String)), slog.String("new_content", Short(t.New.Content.String)),
			slog.Bool("decided", t.Outcome == outcomeSupersede || t.Outcome == outcomeShadow || t.Outcome == outcomeReview),
			slog.String("outcome", t.Outcome), slog.Float64("confidence", round3(t.Confidence)),
			slog.String("method", string(t.Method)), slog.String("signals", strings.Join(t.Signals, ",")))
	}
}

// logFailures logs the attributes and pairs the heuristics failed on: a
// bug that their content reaches, which leaves them alone (they neither
// supersede nor are superseded) while everything else is decided.
func (e *Engine) logFailures(ctx context.Context, source string, failures []failure) {
	for _, f := range failures {
		attrs := []slog.Attr{slog.String("source", source), slog.String("agent_id", f.old.AgentID),
			slog.String("aspect_id", f.old.AspectID), slog.String("err", f.why)}
		if f.new == nil {
			attrs = append(attrs, slog.String("attribute_id", f.old.ID))
		} else {
			attrs = append(attrs, slog.String("old_attribute_id", f.old.ID), slog.String("new_attribute_id", f.new.ID))
		}
		e.log.LogAttrs(ctx, slog.LevelError, "heuristics failed: left alone and counted as heuristics_failed; please report this with the ids", attrs...)
	}
}

// Names are the signals' names, comma-separated.
func (s Signals) Names() string {
	names := make([]string, len(s))
	for i, sig := range s {
		names[i] = sig.Name
	}
	return strings.Join(names, ",")
}
