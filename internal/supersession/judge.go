package supersession

import (
	"context"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/llm"
)

// Judgment is what a sweep would decide about one group, made with no
// database: the decisions a live pass would write (one per old attribute at
// most, by the newest contradicting sibling) and every ordered pair's own
// verdict, for measuring the judgment where it acts (`eval --aspects`).
type Judgment struct {
	// Decisions are the plan's candidates: ModeLive at or above
	// Thresholds.Min, ModeReview in the review band.
	Decisions []Candidate
	// Pairs are every ordered pair (older, newer) of eligible attributes
	// with the confidence the heuristics give it (0 when nothing fired), or,
	// when the LLM settled it (JudgeWindows), the LLM's.
	Pairs []PairVerdict
	// Skips count what took no part, by reason.
	Skips map[string]int
	// Windows are the windows the LLM was asked (JudgeWindows).
	Windows []AskedWindow
}

// PairVerdict is one ordered pair's verdict, taken alone.
type PairVerdict struct {
	Old, New   *Attribute
	Confidence float64
	Signals    []heuristics.Signal
	// Method is what decided the pair: heuristic, or semantic when the LLM
	// settled it (retired or not); "" when neither did.
	Method Method
}

// Judge decides g as a live sweep would, at the thresholds given: the same
// eligibility, blocking and rule (each old attribute retired at most once,
// by its newest contradicting sibling) as Process, with no vetoes, no LLM
// and nothing written. It is pure.
func Judge(g *Group, th Thresholds) Judgment {
	sortGroup(g)
	in := planInput{thresholds: th}
	p := prepare(g, in)
	out := plan(p, in)
	j := Judgment{Decisions: out.candidates, Skips: out.skips}
	j.Pairs = pairVerdicts(g, p, in)
	return j
}

// Asker answers one window: the LLM client's Window, or a test's.
type Asker func(ctx context.Context, req llm.WindowRequest) (llm.WindowVerdict, error)

// WindowJudge is the LLM judge as the daemon's configuration makes it
// (SPEC §13).
type WindowJudge struct {
	Gate          Gate
	MaxStatements int // 0: DefaultMaxStatements
	Ask           Asker
}

// AskedWindow is one window put to the LLM and its answer.
type AskedWindow struct {
	Request llm.WindowRequest
	// Pairs is how many pending pairs the window settles.
	Pairs   int
	Verdict llm.WindowVerdict
	Err     error
	// Unowned counts retirements the reply named of pairs this window
	// does not settle (they are not used).
	Unowned int
}

// JudgeWindows decides g as a live sweep with the semantic fallback would:
// the heuristics first, then the pairs they left (those the plan needs a
// verdict on, under the gate) put to the LLM a window at a time, then the
// plan again with the verdicts. A window that fails leaves its pairs
// undecided, as a pass that asks again later would. Nothing is cached or
// written; windows are asked one after another.
func JudgeWindows(ctx context.Context, g *Group, th Thresholds, wj WindowJudge) Judgment {
	sortGroup(g)
	in := planInput{thresholds: th, semantic: true, gate: wj.Gate}
	p := prepare(g, in)
	out := plan(p, in)
	var asked []AskedWindow
	if len(out.pending) > 0 {
		in.known, asked = askWindows(ctx, g, out.pending, wj)
		out = plan(p, in)
	}
	return Judgment{Decisions: out.candidates, Skips: out.skips, Windows: asked, Pairs: pairVerdicts(g, p, in)}
}

// askWindows puts the pending pairs of g to the LLM, a window at a time, and
// returns a verdict for each: the answer's, or failed.
func askWindows(ctx context.Context, g *Group, pending map[pairKey]pendingPair, wj WindowJudge) (verdicts, []AskedWindow) {
	limit := wj.MaxStatements
	if limit <= 0 {
		limit = DefaultMaxStatements
	}
	pairs := make([]pendingPair, 0, len(pending))
	for _, pp := range pending {
		pairs = append(pairs, pp)
	}
	known := verdicts{}
	var asked []AskedWindow
	for _, w := range planWindows(g, pairs, limit) {
		aw := AskedWindow{Request: w.Request(), Pairs: len(w.Pairs)}
		aw.Verdict, aw.Err = wj.Ask(ctx, aw.Request)
		if aw.Err != nil {
			w.failed(known)
		} else {
			var got verdicts
			got, aw.Unowned = w.answer(aw.Verdict)
			for k, v := range got {
				known[k] = v
			}
		}
		asked = append(asked, aw)
	}
	return known, asked
}

// pairVerdicts is every ordered pair's own verdict under in.
func pairVerdicts(g *Group, p *prepared, in planInput) []PairVerdict {
	if !p.ok {
		return nil
	}
	var pairs []PairVerdict
	for i, old := range g.Attrs {
		if !p.el[i].old || old.failure != "" {
			continue
		}
		for _, nw := range g.Attrs[i+1:] {
			if nw.failure != "" {
				continue
			}
			if _, n, _ := eligibility(nw); !n {
				continue
			}
			v := PairVerdict{Old: old, New: nw}
			if c, _, _ := decide(old, nw, in); c != nil {
				v.Confidence, v.Signals, v.Method = c.Confidence, c.Signals, c.Method
			}
			if sv, ok := in.known[keyOf(old, nw)]; ok && !sv.failed && v.Method != MethodHeuristic {
				v.Method = MethodSemantic
			}
			pairs = append(pairs, v)
		}
	}
	return pairs
}
