package supersession

import (
	"context"
	"sync"
	"sync/atomic"
)

// Planning ahead. A full pass reads and analyses the next batch while it
// decides and writes this one, and the deciding side was the pass's critical
// path: between a batch's writes it planned the batch (built each group's
// blocking index, decided its pairs, encoded its digest: a fifth of the
// binary's CPU) while the analysing goroutines, done with the next batch,
// waited for it to be taken. A plan is pure and needs nothing the writing
// side has (a veto only removes a pair: planVetoed looks vetoes up after
// planning and plans a group again when one hits it), so the goroutines
// that analysed a group plan it too, and Process takes the plan.

// Ahead holds the inputs a pass's Process plans with, for planning its
// batches ahead (Limits.Plan), and their key.
type Ahead struct {
	in  planInput
	key aheadKey
}

// PlanAhead returns what planning ahead for pass needs, or nil when the
// pass cannot be planned ahead: with a focus or remembered keys (the inline
// hook plans what it loaded at once) or the semantic fallback (a plan then
// waits on the LLM's verdicts).
func (e *Engine) PlanAhead(ctx context.Context, cfg Settings, pass Pass) *Ahead {
	in, _ := e.planInput(ctx, cfg, pass, e.currentPolicy())
	return newAhead(in)
}

// newAhead is planning ahead with in, nil when a plan with in cannot be
// made ahead.
func newAhead(in planInput) *Ahead {
	k, ok := aheadKeyOf(in)
	if !ok {
		return nil
	}
	return &Ahead{in: in, key: k}
}

// aheadKey is what a plan made ahead was made with besides its group.
type aheadKey struct {
	thresholds             Thresholds
	shadow, trace, digests bool
}

// aheadKeyOf is in's key, when a plan with in can be made ahead.
func aheadKeyOf(in planInput) (aheadKey, bool) {
	if in.focus != nil || in.keys != nil || in.semantic || in.vetoed != nil || in.known != nil {
		return aheadKey{}, false
	}
	return aheadKey{in.thresholds, in.shadow, in.trace, in.digests}, true
}

// aheadPlan is a group prepared with its plan made ahead (p.ahead).
type aheadPlan struct {
	key aheadKey
	p   *prepared
}

// takeAhead returns the group prepared with its plan made ahead, when it
// was made with in, and forgets it.
func (g *Group) takeAhead(in planInput) *prepared {
	a := g.ahead
	g.ahead = nil
	if k, ok := aheadKeyOf(in); a == nil || !ok || a.key != k {
		return nil
	}
	return a.p
}

// plan plans the groups on up to workers goroutines, a group at a time
// (one group may be most of a batch).
func (a *Ahead) plan(groups []*Group, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, len(groups))) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(groups); i = int(next.Add(1)) - 1 {
				g := groups[i]
				p := prepare(g, a.in)
				out := plan(p, a.in)
				p.ahead = &out
				g.ahead = &aheadPlan{key: a.key, p: p}
			}
		})
	}
	wg.Wait()
}
