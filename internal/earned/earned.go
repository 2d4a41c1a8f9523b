// Package earned is the arithmetic of earned auto-apply (SPEC §13): which
// rules of the judgment (each heuristic signal; the LLM judge of one model)
// the reviews say may apply their decisions without a human.
//
// A rule's record is its reviewed precision (SPEC §10): of its decided
// proposals, those judged right (accepted or applied, and not undone), plus
// each supersession it applied on its own that an operator undid, judged
// wrong. Its bound is the lower end of the 95% Wilson score interval of
// that precision, which is low on little evidence and rises with it: a rule
// has earned auto-apply when the bound reaches the target precision, and a
// rejection or an undo can take it back below. The bound needs no prior and
// behaves at precision 1 (where the normal approximation claims certainty
// after a single review). It is pure: no database, no clock.
package earned

import "math"

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// DefaultTarget is maintenance.enforcement.targetPrecision's default.
const DefaultTarget = 0.9

// WilsonLower is the lower bound of the 95% Wilson score interval of a
// proportion: correct of n. It is 0 when n is 0.
func WilsonLower(correct, n int) float64 {
	if n <= 0 {
		return 0
	}
	c := float64(min(max(correct, 0), n))
	nf := float64(n)
	p := c / nf
	z2 := Z95 * Z95
	centre := p + z2/(2*nf)
	margin := Z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, (centre-margin)/(1+z2/nf))
}

// State is whether a rule applies its decisions or proposes them.
type State string

const (
	Earned    State = "earned"    // its decisions at or above the minimum confidence are applied
	Probation State = "probation" // they are proposals, whose reviews may earn it
)

// Record is what reviews say about one rule.
type Record struct {
	Rule string
	// Decided: decided proposals, and supersessions of its own an
	// operator undid. Correct: those judged right.
	Decided, Correct int
}

// Standing is a rule's state under a target.
type Standing struct {
	Rule      string   `json:"rule"`
	State     State    `json:"state"`
	Bound     float64  `json:"bound"`
	Decided   int      `json:"decided"`
	Correct   int      `json:"correct"`
	Precision *float64 `json:"precision"`
	// ReviewsNeeded is how many more accepted reviews (and no rejection)
	// would earn it; 0 when it has.
	ReviewsNeeded int `json:"reviews_needed"`
}

// Judge is r's standing against target (in (0, 1)).
func Judge(r Record, target float64) Standing {
	s := Standing{Rule: r.Rule, Decided: r.Decided, Correct: r.Correct, Bound: WilsonLower(r.Correct, r.Decided), State: Probation}
	if r.Decided > 0 {
		p := float64(r.Correct) / float64(r.Decided)
		s.Precision = &p
	}
	if s.Bound >= target {
		s.State = Earned
		return s
	}
	s.ReviewsNeeded = ReviewsNeeded(r.Correct, r.Decided, target)
	return s
}

// maxReviews bounds the search: past it a target is out of reach in
// practice (a target of 0.999 after many rejections).
const maxReviews = 1 << 24

// ReviewsNeeded is the fewest k such that correct+k of decided+k reaches
// target: how many more accepted reviews would earn the rule. The bound
// rises with each accepted review and tends to 1, so every target below 1
// is reached; -1 when it is not within maxReviews.
func ReviewsNeeded(correct, decided int, target float64) int {
	reached := func(k int) bool { return WilsonLower(correct+k, decided+k) >= target }
	if reached(0) {
		return 0
	}
	hi := 1
	for !reached(hi) {
		if hi >= maxReviews {
			return -1
		}
		hi *= 2
	}
	lo := hi / 2 // not reached at lo (or lo is 0, checked above)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if reached(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// LLMRule names the LLM judge of a model as a rule.
func LLMRule(model string) string {
	if model == "" {
		model = "unknown"
	}
	return "llm:" + model
}
