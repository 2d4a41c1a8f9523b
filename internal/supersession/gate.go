package supersession

import "github.com/supersessiond/supersessiond/heuristics"

// Gate says which of the pairs the heuristics left undecided the LLM is
// asked about (maintenance.llm.gate, SPEC §13).
type Gate string

const (
	// GateAspect asks about every undecided pair of an aspect: the aspect
	// is the scope, as the agent's classifier made it. Of the true updates
	// the heuristics leave in the aspect corpora of testdata/, a token rule
	// lets 82 of 599 reach the LLM at all ("Drives a 2011 Corolla" → "Bikes
	// everywhere now" share no content word).
	GateAspect Gate = "aspect"
	// GateOverlap is the Signet spec's rule: only pairs sharing at least
	// three content tokens. The zero Gate behaves as GateOverlap.
	GateOverlap Gate = "overlap"
)

// overlapTokens is GateOverlap's threshold.
const overlapTokens = 3

// admits reports whether the gate lets an undecided pair reach the LLM.
func (g Gate) admits(old, nw *heuristics.Statement) bool {
	return g == GateAspect || heuristics.SharedContentTokens(old, nw) >= overlapTokens
}

// pairing is which pairs beyond those whose blocking keys meet are
// candidates of a plan.
type pairing uint8

const (
	pairKeys    pairing = iota // the heuristics' only
	pairOverlap                // and those sharing three content keys (GateOverlap)
	pairEvery                  // every eligible pair (GateAspect)
)

// pairing is the candidates a plan with in needs.
func (in planInput) pairing() pairing {
	switch {
	case !in.semantic:
		return pairKeys
	case in.gate == GateAspect:
		return pairEvery
	}
	return pairOverlap
}
