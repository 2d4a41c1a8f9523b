package supersession

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/supersessiond/supersessiond/heuristics"
)

// Attribute is one active, classified attribute as the engine sees it.
type Attribute struct {
	ID        string         `db:"id"`
	AgentID   string         `db:"agent_id"`
	AspectID  string         `db:"aspect_id"`
	Kind      Kind           `db:"kind"`
	Content   sql.NullString `db:"content"`
	CreatedAt time.Time      `db:"-"`
	Protected bool           `db:"protected"`
	// BadTime: created_at is NULL, infinite or more than a day in the
	// future. Such a row has no place in the newer/older order, so it takes
	// no part in any pair (skipped with SkipBadTime).
	BadTime bool `db:"-"`
	// AspectName is its aspect's name ("home city"), which the analysis
	// reads: its group's (Group.AspectName), set with it (Group.Name).
	AspectName string `db:"-"`

	// The analysis and its blocking keys, made on first use (by one
	// goroutine: Analyze's workers, or the pass).
	stmt            *heuristics.Statement
	anchors, probes []heuristics.Key
	keyed           bool
	elig            uint8  // eligibility's answer (elig...), eligUnknown until asked
	failure         string // why the heuristics failed on the content (see heuristics.Statement.Failure)
	// sum is the content's SHA-256 once summed: a pair's key (keyOf) is
	// asked for every pair the LLM may judge.
	sum    [32]byte
	summed bool
}

// contentSum is the SHA-256 of the content, computed once.
func (a *Attribute) contentSum() [32]byte {
	if !a.summed {
		a.sum, a.summed = sha256.Sum256([]byte(a.Content.String)), true
	}
	return a.sum
}

// statement analyses the content once, however many pairs it is part of.
func (a *Attribute) statement() *heuristics.Statement {
	if a.stmt == nil {
		a.stmt = heuristics.Analyze(a.input())
		a.failure = a.stmt.Failure()
	}
	return a.stmt
}

// input is what the analysis reads of a.
func (a *Attribute) input() heuristics.Input {
	return heuristics.Input{Content: a.Content.String, CreatedAt: a.CreatedAt, Kind: string(a.Kind), Aspect: a.AspectName}
}

// blockKeys are the statement's blocking keys, computed once.
func (a *Attribute) blockKeys() (anchors, probes []heuristics.Key) {
	if !a.keyed {
		st := a.statement()
		a.anchors, a.probes = st.BlockKeys(nil, nil)
		a.keyed, a.failure = true, st.Failure()
	}
	return a.anchors, a.probes
}

// newer reports whether a is newer than b: created later, ties broken by id.
func (a *Attribute) newer(b *Attribute) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// Group is the active attributes of one (agent, aspect), oldest first.
type Group struct {
	AgentID    string
	AspectID   string
	AspectName string
	// Dangling: aspect_id names no entity_aspects row (a database without
	// the foreign key). Such a group is skipped: without its aspect we cannot
	// be sure the rows are about the same thing.
	Dangling bool
	Attrs    []*Attribute
	// Unsettled: a pair of the group awaits a verdict the LLM did not give
	// this pass (over the pass's question budget, or failed); a later pass
	// must decide the group again.
	Unsettled bool
	// Keys is the group's key digest, when the pass was asked for digests
	// (Pass.Digests) and the group is large enough to have one: the sweep
	// stores it for later incremental passes.
	Keys []byte

	// ahead is the group planned on the goroutines that analysed it
	// (Limits.Plan), with the inputs its Process will use.
	ahead *aheadPlan
}

// Name gives the group and its attributes the aspect's name. An attribute
// analysed under another name is analysed again: the name is part of what
// the analysis reads (heuristics.Input.Aspect), so every loader names a
// group before its keys are made.
func (g *Group) Name(name string) {
	g.AspectName = name
	for _, a := range g.Attrs {
		if a.AspectName != name {
			a.AspectName, a.stmt, a.keyed, a.anchors, a.probes = name, nil, false, nil, nil
		}
	}
}

// Skip reasons, for reports and the skips metric.
const (
	SkipProtected       = "protected"
	SkipConstraint      = "constraint"
	SkipEmptyContent    = "empty_content"
	SkipInvalidUTF8     = "invalid_utf8"
	SkipTooLong         = "content_too_long"
	SkipBadTime         = "invalid_created_at"
	SkipUnknownKind     = "unknown_kind"
	SkipDanglingAspect  = "dangling_aspect"
	SkipVetoed          = "vetoed_by_operator"
	SkipSemanticFailed  = "semantic_unavailable"
	SkipSemanticPending = "semantic_deferred"
	SkipChanged         = "changed_since_decision"
	SkipDuplicate       = "proposal_exists"
	SkipWriteFailed     = "write_failed"
	// SkipHeuristicsFailed: the heuristics failed on the attribute (or the
	// pair), a bug some content reaches; it is left alone and logged.
	SkipHeuristicsFailed = heuristics.BlockedFailure
)

// MaxContentBytes bounds the attribute content the engine reads: attributes
// are one-line facts, and a megabyte of text in one is a bug upstream that
// should not cost an analysis (or an LLM prompt) on every pass.
const MaxContentBytes = 16 << 10

// eligibility says whether an attribute may take part, and why not. It is
// worked out once per attribute, as its analysis is (an attribute is not
// changed once read): a pass asks when it analyses a batch and again when
// it plans it, and checking every content for blanks and invalid UTF-8
// twice was a fortieth of a full pass.
func eligibility(a *Attribute) (old, new bool, reason string) {
	if a.elig == eligUnknown {
		a.elig = eligibilityOf(a)
	}
	e := eligibilities[a.elig]
	return e.old, e.new, e.reason
}

// The answers eligibility keeps on an attribute (Attribute.elig).
const (
	eligUnknown uint8 = iota // not asked yet
	eligBoth
	eligProtected
	eligConstraint
	eligUnknownKind
	eligBadTime
	eligEmpty
	eligInvalidUTF8
	eligTooLong
)

var eligibilities = [...]struct {
	old, new bool
	reason   string
}{
	eligBoth:        {true, true, ""},
	eligProtected:   {false, true, SkipProtected},
	eligConstraint:  {false, false, SkipConstraint},
	eligUnknownKind: {false, false, SkipUnknownKind},
	eligBadTime:     {false, false, SkipBadTime},
	eligEmpty:       {false, false, SkipEmptyContent},
	eligInvalidUTF8: {false, false, SkipInvalidUTF8},
	eligTooLong:     {false, false, SkipTooLong},
}

func eligibilityOf(a *Attribute) uint8 {
	switch {
	case a.Kind == KindConstraint:
		return eligConstraint
	case a.Kind != KindAttribute:
		return eligUnknownKind
	case a.BadTime:
		return eligBadTime
	case !a.Content.Valid || strings.TrimSpace(a.Content.String) == "":
		return eligEmpty
	case !utf8.ValidString(a.Content.String):
		return eligInvalidUTF8
	case len(a.Content.String) > MaxContentBytes:
		return eligTooLong
	case a.Protected:
		return eligProtected
	}
	return eligBoth
}

// Thresholds are the confidence cut-offs in force.
type Thresholds struct {
	Min    float64 // at or above: apply (live) or propose (shadow)
	Review float64 // at or above but below Min: propose for review
}

// pairKey names an (old, new) pair by contents, the semantic cache's key.
type pairKey struct{ old, new [32]byte }

func keyOf(old, new *Attribute) pairKey {
	return pairKey{old.contentSum(), new.contentSum()}
}

// Verdicts maps content pairs to semantic decisions known so far.
type verdicts map[pairKey]semanticVerdict

type semanticVerdict struct {
	contradicts bool
	confidence  float64
	reasoning   string
	failed      bool // the LLM could not answer this run
}

// Candidate is a decided pair and what to do with it.
type Candidate struct {
	Old, New   *Attribute
	Group      *Group
	Method     Method
	Confidence float64
	Signals    []heuristics.Signal
	Reasoning  string
	Mode       Mode
	// Model is the LLM's that decided (MethodSemantic); Rule, on a
	// decision in probation, the rule that has not earned auto-apply.
	Model, Rule string
}

// Kind is an attribute's kind (SPEC §4).
type Kind string

const (
	KindAttribute  Kind = "attribute"  // may supersede and be superseded
	KindConstraint Kind = "constraint" // never on either side
)

// Method says what decided a pair.
type Method string

const (
	MethodHeuristic Method = "heuristic"
	MethodSemantic  Method = "semantic" // the LLM fallback
	MethodManual    Method = "manual"   // an operator's supersede
)

// Mode says how a decision is written.
type Mode string

const (
	ModeLive     Mode = "live"     // applied now
	ModeShadow   Mode = "shadow"   // proposed: shadowMode or mutationsFrozen (or the brake engaged mid-run)
	ModeReview   Mode = "review"   // proposed: in the review band
	ModeManual   Mode = "manual"   // supersede by an operator
	ModeProposal Mode = "proposal" // applied from a proposal by an operator
	// ModeProbation: proposed, a live decision whose rule has not earned
	// auto-apply (maintenance.enforcement.mode earned).
	ModeProbation Mode = "probation"
)

// Proposed reports whether the mode writes a proposal rather than a
// supersession.
func (m Mode) Proposed() bool { return m == ModeShadow || m == ModeReview || m == ModeProbation }

// planInput is everything plan needs besides the group.
type planInput struct {
	thresholds Thresholds
	shadow     bool
	// focus, when non-nil, limits the pairs to those with at least one side
	// in it (the inline hook: the newly classified attributes).
	focus map[string]bool
	// vetoed pairs are never applied or proposed.
	vetoed *Vetoes
	// semantic enables the LLM fallback; gate says which pairs the
	// heuristics left undecided it may ask about; known holds the verdicts
	// known.
	semantic bool
	gate     Gate
	known    verdicts
	model    string // the LLM's, named on its decisions (their rule)
	// keys, when set, remembers blocking keys across passes (Pass.Reloads).
	keys *keyCache
	// trace collects every pair examined, for the debug log.
	trace bool
	// digests: encode each large group's key digest (Group.Keys).
	digests bool
}

// planOutput is what plan found in one group.
type planOutput struct {
	candidates []Candidate
	// pending are the pairs that need a semantic verdict before the group
	// can be decided; the caller resolves them and plans the group again.
	pending map[pairKey]pendingPair
	pairs   int
	skips   map[string]int
	// traces are the pairs examined (with planInput.trace), except those of
	// old attributes left pending: they are traced when planned again.
	traces []PairTrace
	// failures are the attributes and pairs the heuristics failed on.
	failures []failure
}

// failure is an attribute (new == nil) or a pair the heuristics failed on.
type failure struct {
	old, new *Attribute
	why      string
}

type pendingPair struct{ old, new *Attribute }

// prepared is a group ready to be planned: who may take part, and (built
// when needed, dropped after planning) the blocking index of who may pair
// with whom.
type prepared struct {
	g     *Group
	el    []elig
	cands *candidates
	skips map[string]int
	ok    bool // not dangling
	// ahead is the plan made ahead with the pass's inputs and no vetoes
	// (PlanAhead), until planVetoed takes it.
	ahead *planOutput
}

// prepare reads a group's eligibility and builds its blocking index. It is
// pure: no database, no network, no clock.
func prepare(g *Group, in planInput) *prepared {
	p := &prepared{g: g, skips: map[string]int{}}
	if g.Dangling {
		p.skips[SkipDanglingAspect] += len(g.Attrs)
		return p
	}
	p.ok = true
	p.el = make([]elig, len(g.Attrs))
	for i, a := range g.Attrs {
		o, n, why := eligibility(a)
		p.el[i] = elig{o, n}
		if why != "" && (in.focus == nil || in.focus[a.ID]) {
			p.skips[why]++
		}
	}
	if in.focus != nil {
		// Who may be decided depends on the index: build it now.
		p.cands = newCandidates(g.Attrs, p.el, in.pairing(), in.focus, in.keys)
	}
	return p
}

// deciding appends to ids the old attributes the plan decided or waits on:
// the only ones whose vetoes can change it.
func (out planOutput) deciding(ids []string) []string {
	for _, c := range out.candidates {
		ids = append(ids, c.Old.ID)
	}
	for _, pp := range out.pending {
		ids = append(ids, pp.old.ID)
	}
	return ids
}

// plan decides one prepared group. It is pure: no database, no network, no
// clock. Every old attribute it decides is decided by the full rule: its
// newer siblings newest first, the first at or above the threshold wins.
// With a focus (the inline hook), the old attributes decided are the focus
// and those a focus attribute contradicts, so a classification can never
// make an older sibling lose to it when a newer sibling contradicts that
// sibling too.
func plan(p *prepared, in planInput) planOutput {
	out := planOutput{skips: map[string]int{}}
	for k, v := range p.skips {
		out.skips[k] = v
	}
	if !p.ok {
		return out
	}
	cands := p.cands
	g := p.g
	if cands == nil {
		// Without a focus the index is built for this plan only: a batch of
		// thousands of groups need not hold thousands of indexes at once.
		cands = newCandidates(p.g.Attrs, p.el, in.pairing(), nil, in.keys)
		defer cands.release()
		if in.digests && len(g.Attrs) >= digestMinAttributes {
			g.Keys = encodeDigest(g.Attrs, cands.anchorIx, cands.probeIx)
		}
	}
	for _, a := range g.Attrs {
		if a.failure != "" { // its keys meet none: it is in no pair
			out.skips[SkipHeuristicsFailed]++
			out.failures = append(out.failures, failure{old: a, why: a.failure})
		}
	}
	for i, old := range g.Attrs {
		if !cands.decidable[i] {
			continue
		}
		newer := cands.newerThan(i)
		if in.focus != nil && !in.focus[old.ID] && !touchesFocus(old, g, newer, in) {
			continue
		}
		traced := len(out.traces)
		c, pending := decideOld(old, g, newer, cands.met, in, &out)
		if len(pending) > 0 {
			out.traces = out.traces[:traced]
			// A newer pair awaits its verdict: deciding now could pick an
			// older target than the rule allows. Decide after resolution.
			if out.pending == nil {
				out.pending = map[pairKey]pendingPair{}
			}
			for k, v := range pending {
				out.pending[k] = v
			}
			continue
		}
		if c != nil {
			out.candidates = append(out.candidates, *c)
		}
	}
	return out
}

// touchesFocus reports whether a focus attribute among old's newer
// candidates contradicts it (or may, once the LLM answers).
func touchesFocus(old *Attribute, g *Group, newer []int, in planInput) bool {
	for _, j := range newer {
		nw := g.Attrs[j]
		if !in.focus[nw.ID] || in.vetoed.Has(old, nw) {
			continue
		}
		c, need, _ := decide(old, nw, in)
		if need || (c != nil && c.Confidence >= in.thresholds.Review) {
			return true
		}
	}
	return false
}

// decideOld applies the rule to one old attribute: its newer candidates
// newest first, the first at or above the threshold wins, else the newest
// in the review band becomes a proposal. pending holds the pairs that need
// a semantic verdict first.
func decideOld(old *Attribute, g *Group, newer []int, met func(int) bool, in planInput, out *planOutput) (*Candidate, map[pairKey]pendingPair) {
	var review *Candidate
	reviewTrace := -1
	var pending map[pairKey]pendingPair
	for _, j := range newer {
		nw := g.Attrs[j]
		out.pairs++
		if in.vetoed.Has(old, nw) {
			out.skips[SkipVetoed]++
			out.trace(in, old, nw, nil, outcomeVetoed)
			continue
		}
		c, need, failed := decideMet(old, nw, met(j), in)
		if failed != "" {
			out.skips[SkipHeuristicsFailed]++
			out.failures = append(out.failures, failure{old: old, new: nw, why: failed})
			continue
		}
		if need {
			if pending == nil {
				pending = map[pairKey]pendingPair{}
			}
			pending[keyOf(old, nw)] = pendingPair{old, nw}
			out.trace(in, old, nw, nil, outcomePending)
			continue
		}
		if c == nil {
			out.trace(in, old, nw, nil, outcomeNone)
			continue
		}
		c.Group = g
		if c.Confidence >= in.thresholds.Min && pending == nil {
			c.Mode = ModeLive
			if in.shadow {
				c.Mode = ModeShadow
			}
			out.trace(in, old, nw, c, outcomeOf(c.Mode))
			return c, nil
		}
		i := out.trace(in, old, nw, c, outcomeContradiction)
		if c.Confidence >= in.thresholds.Min {
			return nil, pending
		}
		if c.Confidence >= in.thresholds.Review && review == nil {
			review, reviewTrace = c, i
		}
	}
	if pending != nil {
		return nil, pending
	}
	if review != nil {
		review.Mode = ModeReview
		if reviewTrace >= 0 {
			out.traces[reviewTrace].Outcome = outcomeReview
		}
	}
	return review, nil
}

// Outcomes of a traced pair (PairTrace.Outcome).
const (
	outcomeSupersede     = "supersede"
	outcomeShadow        = "propose_shadow"
	outcomeReview        = "propose_review"
	outcomeContradiction = "contradiction"
	outcomeNone          = "none"
	outcomeVetoed        = "vetoed"
	outcomePending       = "semantic_pending"
)

func outcomeOf(m Mode) string {
	switch m {
	case ModeShadow:
		return outcomeShadow
	case ModeReview:
		return outcomeReview
	}
	return outcomeSupersede
}

// trace records a pair examined when the plan traces; it returns the
// trace's index, or -1.
func (out *planOutput) trace(in planInput, old, nw *Attribute, c *Candidate, outcome string) int {
	if !in.trace {
		return -1
	}
	t := PairTrace{Old: old, New: nw, Outcome: outcome}
	if c != nil {
		t.Confidence, t.Method = c.Confidence, c.Method
		for _, s := range c.Signals {
			t.Signals = append(t.Signals, s.Name)
		}
	}
	out.traces = append(out.traces, t)
	return len(out.traces) - 1
}

// decide returns the pair's decision, or need=true when it hinges on a
// semantic verdict not known yet. A nil candidate means "no contradiction";
// failed says why the heuristics failed on the pair itself (an attribute
// they failed on is counted once, by plan).
func decide(old, nw *Attribute, in planInput) (c *Candidate, need bool, failed string) {
	return decideMet(old, nw, true, in)
}

// decideMet is decide, told whether the pair's blocking keys meet: when
// they do not, no heuristic signal can fire and the heuristics are not run.
func decideMet(old, nw *Attribute, met bool, in planInput) (c *Candidate, need bool, failed string) {
	os, ns := old.statement(), nw.statement()
	var d heuristics.Decision
	if met {
		d = heuristics.DecideAnalyzed(os, ns)
	}
	if d.Blocked == heuristics.BlockedFailure && old.failure == "" && nw.failure == "" {
		return nil, false, d.Reason
	}
	if d.Blocked != "" {
		return nil, false, ""
	}
	var weak *Candidate
	if d.Method != "" && d.Confidence > 0 {
		c := &Candidate{Old: old, New: nw, Method: MethodHeuristic, Confidence: d.Confidence, Signals: d.Signals, Reasoning: d.Reason}
		// A signal below the review band decides nothing (it writes
		// nothing): with the semantic fallback the pair is the LLM's.
		if !in.semantic || d.Confidence >= in.thresholds.Review {
			return c, false, ""
		}
		weak = c
	}
	if !in.semantic || !in.gate.admits(os, ns) {
		return weak, false, ""
	}
	v, ok := in.known[keyOf(old, nw)]
	if !ok {
		return nil, true, ""
	}
	if v.failed || !v.contradicts {
		return weak, false, ""
	}
	return &Candidate{
		Old: old, New: nw, Method: MethodSemantic, Confidence: v.confidence, Model: in.model,
		Signals:   []heuristics.Signal{{Name: "semantic_contradiction", Confidence: v.confidence, Detail: v.reasoning}},
		Reasoning: fmt.Sprintf("LLM: %s", v.reasoning),
	}, false, ""
}
