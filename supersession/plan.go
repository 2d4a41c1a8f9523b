package supersession

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
)

// Attribute is one active, classified attribute as the engine sees it.
type Attribute struct {
	ID        string         `db:"id"`
	AgentID   string         `db:"agent_id"`
	AspectID  string         `db:"aspect_id"`
	MemoryID  sql.NullString `db:"memory_id"`
	Kind      string         `db:"kind"`
	Content   sql.NullString `db:"content"`
	CreatedAt time.Time      `db:"created_at"`
	Protected bool           `db:"protected"`

	stmt *heuristics.Statement // analysed on first use; a pass is single-threaded
}

// AttributeColumns is the select list that scans into Attribute, for the
// queries of the jobs that load siblings (alias the table as a).
const AttributeColumns = `a.id, a.agent_id, a.aspect_id, a.memory_id, a.kind, a.content, a.created_at, a.protected`

// statement analyses the content once, however many pairs it is part of.
func (a *Attribute) statement() *heuristics.Statement {
	if a.stmt == nil {
		a.stmt = heuristics.Analyze(heuristics.Input{Content: a.Content.String, CreatedAt: a.CreatedAt, Kind: a.Kind})
	}
	return a.stmt
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
}

// Skip reasons, for reports and the skips metric.
const (
	SkipProtected       = "protected"
	SkipConstraint      = "constraint"
	SkipEmptyContent    = "empty_content"
	SkipUnknownKind     = "unknown_kind"
	SkipDanglingAspect  = "dangling_aspect"
	SkipVetoed          = "vetoed_by_operator"
	SkipSemanticFailed  = "semantic_unavailable"
	SkipSemanticPending = "semantic_deferred"
	SkipChanged         = "changed_since_decision"
	SkipDuplicate       = "proposal_exists"
)

// eligibility says whether an attribute may take part, and why not.
func eligibility(a *Attribute) (old, new bool, reason string) {
	switch {
	case a.Kind == "constraint":
		return false, false, SkipConstraint
	case a.Kind != "attribute":
		return false, false, SkipUnknownKind
	case !a.Content.Valid || strings.TrimSpace(a.Content.String) == "":
		return false, false, SkipEmptyContent
	case a.Protected:
		return false, true, SkipProtected
	}
	return true, true, ""
}

// Thresholds are the confidence cut-offs in force.
type Thresholds struct {
	Min    float64 // at or above: apply (live) or propose (shadow)
	Review float64 // at or above but below Min: propose for review
}

// pairKey names an (old, new) pair by contents, the semantic cache's key.
type pairKey struct{ old, new [32]byte }

func keyOf(old, new *Attribute) pairKey {
	return pairKey{sha256.Sum256([]byte(old.Content.String)), sha256.Sum256([]byte(new.Content.String))}
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
	Method     string // heuristic | semantic
	Confidence float64
	Signals    []heuristics.Signal
	Reasoning  string
	Mode       string // live | shadow | review
}

// planInput is everything plan needs besides the group.
type planInput struct {
	thresholds Thresholds
	shadow     bool
	// focus, when non-nil, limits the pairs to those with at least one side
	// in it (the inline hook: the newly classified attributes).
	focus map[string]bool
	// vetoed pairs (old id, new id) are never applied or proposed.
	vetoed map[[2]string]bool
	// semantic enables the LLM fallback; known holds the verdicts known.
	semantic bool
	known    verdicts
}

// planOutput is what plan found in one group.
type planOutput struct {
	candidates []Candidate
	// pending are the pairs that need a semantic verdict before the group
	// can be decided; the caller resolves them and plans the group again.
	pending map[pairKey]pendingPair
	pairs   int
	skips   map[string]int
}

type pendingPair struct{ old, new *Attribute }

// plan decides one group. It is pure: no database, no network, no clock.
func plan(g *Group, in planInput) planOutput {
	out := planOutput{skips: map[string]int{}}
	if g.Dangling {
		out.skips[SkipDanglingAspect] += len(g.Attrs)
		return out
	}
	el := make([]elig, len(g.Attrs))
	for i, a := range g.Attrs {
		o, n, why := eligibility(a)
		el[i] = elig{o, n}
		if why != "" && (in.focus == nil || in.focus[a.ID]) {
			out.skips[why]++
		}
	}
	cands := newCandidates(g.Attrs, el, in.semantic, in.focus)
	for i, old := range g.Attrs {
		if !el[i].old || !cands.relevant[i] {
			continue
		}
		var review *Candidate
		var apply *Candidate
		waiting := false
		// Only siblings whose blocking keys meet old's can contradict it
		// (the heuristics' guarantee); newest first, as the rule requires.
		for _, j := range cands.newerThan(i) {
			nw := g.Attrs[j]
			if in.focus != nil && !in.focus[old.ID] && !in.focus[nw.ID] {
				continue
			}
			out.pairs++
			if in.vetoed[[2]string{old.ID, nw.ID}] {
				out.skips[SkipVetoed]++
				continue
			}
			c, need := decide(old, nw, in)
			if need {
				if out.pending == nil {
					out.pending = map[pairKey]pendingPair{}
				}
				out.pending[keyOf(old, nw)] = pendingPair{old, nw}
				waiting = true
				continue
			}
			if c == nil {
				continue
			}
			c.Group = g
			if c.Confidence >= in.thresholds.Min {
				apply = c
				break // the newest contradicting sibling wins
			}
			if c.Confidence >= in.thresholds.Review && review == nil {
				review = c
			}
		}
		if waiting {
			// A newer pair awaits its verdict: deciding now could pick an
			// older target than the rule allows. Decide after resolution.
			continue
		}
		switch {
		case apply != nil && in.shadow:
			apply.Mode = "shadow"
			out.candidates = append(out.candidates, *apply)
		case apply != nil:
			apply.Mode = "live"
			out.candidates = append(out.candidates, *apply)
		case review != nil:
			review.Mode = "review"
			out.candidates = append(out.candidates, *review)
		}
	}
	return out
}

// decide returns the pair's decision, or need=true when it hinges on a
// semantic verdict not known yet. A nil candidate means "no contradiction".
func decide(old, nw *Attribute, in planInput) (c *Candidate, need bool) {
	os, ns := old.statement(), nw.statement()
	d := heuristics.DecideAnalyzed(os, ns)
	if d.Blocked != "" {
		return nil, false
	}
	if d.Method != "" && d.Confidence > 0 {
		return &Candidate{Old: old, New: nw, Method: "heuristic", Confidence: d.Confidence, Signals: d.Signals, Reasoning: d.Reason}, false
	}
	if !in.semantic || heuristics.SharedContentTokens(os, ns) < 3 {
		return nil, false
	}
	v, ok := in.known[keyOf(old, nw)]
	if !ok {
		return nil, true
	}
	if v.failed || !v.contradicts {
		return nil, false
	}
	return &Candidate{
		Old: old, New: nw, Method: "semantic", Confidence: v.confidence,
		Signals:   []heuristics.Signal{{Name: "semantic_contradiction", Confidence: v.confidence, Detail: v.reasoning}},
		Reasoning: fmt.Sprintf("LLM: %s", v.reasoning),
	}, false
}
