package supersession

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/llm"
	"github.com/supersessiond/supersessiond/store"
)

// Engine decides and writes supersessions for groups of siblings.
type Engine struct {
	db      *sqlx.DB
	log     *slog.Logger
	metrics *Metrics
	llms    *llm.Provider
}

// New returns an Engine. llms may be nil (no semantic fallback).
func New(db *sqlx.DB, log *slog.Logger, m *Metrics, llms *llm.Provider) *Engine {
	return &Engine{db: db, log: log, metrics: m, llms: llms}
}

// Tally counts what a pass over some groups found and did.
type Tally struct {
	Groups            int            `json:"aspects"`
	Attributes        int            `json:"attributes"`
	Pairs             int            `json:"pairs"`
	ProposalsShadow   int            `json:"proposals_shadow"`
	ProposalsReview   int            `json:"proposals_review"`
	Supersessions     int            `json:"supersessions"`
	SemanticAsked     int            `json:"semantic_asked"`
	SemanticCacheHits int            `json:"semantic_cache_hits"`
	SemanticFailures  int            `json:"semantic_failures"`
	Skips             map[string]int `json:"skips"`
}

func (t *Tally) skip(reason string, n int) {
	if n == 0 {
		return
	}
	if t.Skips == nil {
		t.Skips = map[string]int{}
	}
	t.Skips[reason] += n
}

// Add merges u into t.
func (t *Tally) Add(u Tally) {
	t.Groups += u.Groups
	t.Attributes += u.Attributes
	t.Pairs += u.Pairs
	t.ProposalsShadow += u.ProposalsShadow
	t.ProposalsReview += u.ProposalsReview
	t.Supersessions += u.Supersessions
	t.SemanticAsked += u.SemanticAsked
	t.SemanticCacheHits += u.SemanticCacheHits
	t.SemanticFailures += u.SemanticFailures
	for k, v := range u.Skips {
		t.skip(k, v)
	}
}

// Pass configures one call of Process.
type Pass struct {
	Actor Actor
	// Source labels metrics: sweep | inline.
	Source string
	// Focus limits pairs to those touching these attribute ids (inline).
	Focus map[string]bool
	// SemanticBudget bounds new LLM questions in this pass; pairs beyond it
	// are deferred to a later pass.
	SemanticBudget *int
}

// Process decides every group and writes the results: supersessions in
// live mode at or above the threshold, proposals in shadow mode and in the
// review band. Decisions use the configuration given, read once per pass.
func (e *Engine) Process(ctx context.Context, cfg *config.Config, groups []*Group, pass Pass) (Tally, error) {
	var t Tally
	if len(groups) == 0 {
		return t, nil
	}
	st := cfg.Memory.PipelineV2.Structural
	in := planInput{
		thresholds: Thresholds{Min: st.SupersessionMinConfidence, Review: st.SupersessionReviewConfidence},
		shadow:     cfg.Shadow(),
		focus:      pass.Focus,
	}
	var client *llm.Client
	if cfg.SemanticFallback() && e.llms != nil {
		client = e.llms.Client(cfg.Maintenance.LLM)
		in.semantic = client != nil
	}

	var oldIDs []string
	agents := map[string]bool{}
	for _, g := range groups {
		t.Groups++
		t.Attributes += len(g.Attrs)
		agents[g.AgentID] = true
		for _, a := range g.Attrs {
			oldIDs = append(oldIDs, a.ID)
		}
	}
	tv := time.Now()
	vetoed, err := loadVetoes(ctx, e.db, oldIDs, pass.Focus, keys(agents))
	if err != nil {
		return t, err
	}
	in.vetoed = vetoed
	dVeto := time.Since(tv)

	var candidates []Candidate
	var again []*Group
	pending := map[pairKey]pendingPair{}
	groupOf := map[*Attribute]*Group{}
	for _, g := range groups {
		out := plan(g, in)
		t.Pairs += out.pairs
		for k, v := range out.skips {
			t.skip(k, v)
		}
		candidates = append(candidates, out.candidates...)
		if len(out.pending) > 0 {
			again = append(again, g)
			for k, p := range out.pending {
				pending[k] = p
				groupOf[p.old] = g
			}
		}
	}
	if len(pending) > 0 {
		budget := pass.SemanticBudget
		if budget == nil {
			b := 256
			budget = &b
		}
		in.known, err = e.resolve(ctx, cfg, client, pending, groupOf, budget, &t)
		if err != nil {
			return t, err
		}
		// Plan the waiting groups again with the verdicts: only the old
		// attributes that were waiting yield new candidates, because the
		// others were decided (or found nothing) the first time.
		decided := map[string]bool{}
		for _, c := range candidates {
			decided[c.Old.ID] = true
		}
		for _, g := range again {
			out := plan(g, in)
			for _, c := range out.candidates {
				if !decided[c.Old.ID] {
					candidates = append(candidates, c)
				}
			}
		}
	}
	dPlan := time.Since(tv) - dVeto
	if err := e.write(ctx, candidates, pass, &t); err != nil {
		return t, err
	}
	e.log.Debug("supersession: pass", "source", pass.Source, "vetoes", dVeto.String(), "plan", dPlan.String(), "write", (time.Since(tv) - dVeto - dPlan).String(), "candidates", len(candidates))
	return t, nil
}

// write applies and proposes in chunks, each its own short transaction.
func (e *Engine) write(ctx context.Context, cands []Candidate, pass Pass, t *Tally) error {
	const chunk = 500
	// Oldest old attribute first, so that a chain found in one pass (O1 → O2,
	// O2 → N) is written link by link: O1 → O2 is checked while O2 is still
	// active, whatever the chunk boundaries.
	sort.SliceStable(cands, func(i, j int) bool { return cands[j].Old.newer(cands[i].Old) })
	var applies []Supersession
	var proposals []Proposal
	for _, c := range cands {
		meta := Metadata{
			AgentID: c.Old.AgentID, OldAttributeID: c.Old.ID, NewAttributeID: c.New.ID, AspectID: c.Old.AspectID,
			Method: c.Method, Confidence: round3(c.Confidence), Signals: nonNil(c.Signals), Reasoning: c.Reasoning,
			Mode: c.Mode, RunID: pass.Actor.RequestID,
		}
		reason := describe(c)
		if c.Mode == "live" {
			applies = append(applies, Supersession{Meta: meta, OldContent: c.Old.Content.String, NewContent: c.New.Content.String, Reason: reason})
		} else {
			proposals = append(proposals, Proposal{Meta: meta, NewContent: c.New.Content.String, Reason: reason})
		}
	}
	for start := 0; start < len(applies); start += chunk {
		batch := applies[start:min(start+chunk, len(applies))]
		var done []Applied
		err := withRetry(ctx, func() error {
			var err error
			done, err = Apply(ctx, e.db, pass.Actor, batch)
			return err
		})
		if err != nil {
			return err
		}
		t.Supersessions += len(done)
		t.skip(SkipChanged, len(batch)-len(done))
		e.metrics.Supersessions.WithLabelValues(pass.Source).Add(float64(len(done)))
	}
	for start := 0; start < len(proposals); start += chunk {
		batch := proposals[start:min(start+chunk, len(proposals))]
		var written []Proposed
		err := withRetry(ctx, func() error {
			var err error
			written, err = Propose(ctx, e.db, pass.Actor, batch)
			return err
		})
		if err != nil {
			return err
		}
		for _, w := range written {
			if w.Mode == "shadow" {
				t.ProposalsShadow++
			} else {
				t.ProposalsReview++
			}
			e.metrics.Proposals.WithLabelValues(pass.Source, w.Mode).Inc()
		}
		t.skip(SkipDuplicate, len(batch)-len(written))
	}
	for reason, n := range t.Skips {
		e.metrics.Skips.WithLabelValues(pass.Source, reason).Add(float64(n))
	}
	return nil
}

// withRetry retries a write once on a deadlock or serialization failure:
// the agent's own transactions may lock attribute rows in another order.
func withRetry(ctx context.Context, fn func() error) error {
	err := fn()
	if err != nil && store.IsRetryable(err) && ctx.Err() == nil {
		err = fn()
	}
	return err
}

func describe(c Candidate) string {
	if c.Method == "semantic" {
		return fmt.Sprintf("semantic contradiction (%.2f): %s", c.Confidence, c.Reasoning)
	}
	parts := make([]string, 0, len(c.Signals))
	for _, s := range c.Signals {
		parts = append(parts, fmt.Sprintf("%s (%.2f): %s", s.Name, s.Confidence, s.Detail))
	}
	if len(parts) == 0 {
		return c.Reasoning
	}
	return strings.Join(parts, "; ")
}

func nonNil(s []heuristics.Signal) []heuristics.Signal {
	if s == nil {
		return []heuristics.Signal{}
	}
	return s
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
