package supersession

import "github.com/supersessiond/supersessiond/heuristics"

// Judgment is what a sweep would decide about one group, made with no
// database: the decisions a live pass would write (one per old attribute at
// most, by the newest contradicting sibling) and every ordered pair's own
// verdict, for measuring the judgment where it acts (`eval --aspects`).
type Judgment struct {
	// Decisions are the plan's candidates: ModeLive at or above
	// Thresholds.Min, ModeReview in the review band.
	Decisions []Candidate
	// Pairs are every ordered pair (older, newer) of eligible attributes
	// with the confidence the heuristics give it (0 when nothing fired).
	Pairs []PairVerdict
	// Skips count what took no part, by reason.
	Skips map[string]int
}

// PairVerdict is one ordered pair's verdict, taken alone.
type PairVerdict struct {
	Old, New   *Attribute
	Confidence float64
	Signals    []heuristics.Signal
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
	if !p.ok {
		return j
	}
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
				v.Confidence, v.Signals = c.Confidence, c.Signals
			}
			j.Pairs = append(j.Pairs, v)
		}
	}
	return j
}
