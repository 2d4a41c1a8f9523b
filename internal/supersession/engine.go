package supersession

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/jobs"
)

// Engine decides and writes supersessions for groups of siblings.
type Engine struct {
	db      *sqlx.DB
	sql     statements
	log     *slog.Logger
	metrics *Metrics
	llms    *llm.Provider
	attrs   *attributeStore // what reads and writes the agent's attributes
	keys    *keyCache
	windows *windowStore // the LLM judge's windows and spend
	policy  func() Policy
	// background bounds the batches the background asker holds
	// (AskLater); pending counts them.
	background chan struct{}
	pending    sync.WaitGroup
}

// New returns an Engine for the database deps describe. Its metrics are
// registered on deps.Registry; without an LLM there is no semantic
// fallback.
func New(deps jobs.Deps) *Engine {
	deps = deps.WithDefaults()
	names := deps.Names
	if names == nil {
		names = schema.ReferenceNames()
	}
	return &Engine{db: deps.DB, sql: schema.Render(names, engineSQL), log: deps.Logger, metrics: NewMetrics(deps.Registry), llms: deps.LLM,
		attrs:      newStore(deps.DB, names),
		keys:       newKeyCache(keyCacheSize),
		windows:    &windowStore{db: deps.DB, sql: schema.Render(names, windowSQL), holder: ident.Holder()},
		background: make(chan struct{}, backgroundBatches)}
}

// Settings are what the engine decides under, made once per load of the
// configuration: the thresholds (supersessionMinConfidence and
// supersessionReviewConfidence), the mode (shadow: shadowMode or
// mutationsFrozen), and the semantic fallback with its LLM.
type Settings struct {
	Thresholds Thresholds
	Shadow     bool
	// SemanticFallback: both semantic flags on and an LLM configured.
	SemanticFallback bool
	// SemanticTimeout bounds one semantic question
	// (semanticContradictionTimeoutMs).
	SemanticTimeout time.Duration
	LLM             llm.Config
}

// Tally counts what a pass over some groups found and did.
type Tally struct {
	Groups            int `json:"aspects"`
	Attributes        int `json:"attributes"`
	Pairs             int `json:"pairs"`
	ProposalsShadow   int `json:"proposals_shadow"`
	ProposalsReview   int `json:"proposals_review"`
	Supersessions     int `json:"supersessions"`
	SemanticAsked     int `json:"semantic_asked"`
	SemanticCacheHits int `json:"semantic_cache_hits"`
	SemanticFailures  int `json:"semantic_failures"`
	// SemanticDeferred counts windows left for a later pass (over budget,
	// claimed by another asker, backing off); SemanticTokens the tokens the answers cost; SemanticIgnored
	// the retirements replies named that were ignored.
	SemanticDeferred int `json:"semantic_deferred"`
	SemanticTokens   int `json:"semantic_tokens"`
	SemanticIgnored  int `json:"semantic_ignored"`
	// ProposalsProbation counts live decisions written as proposals because
	// their rule has not earned auto-apply (maintenance.enforcement.mode
	// earned).
	ProposalsProbation int `json:"proposals_probation"`
	// Braked counts supersessions written as proposals because shadowMode
	// or mutationsFrozen was turned on while the pass ran.
	Braked int            `json:"braked,omitempty"`
	Skips  map[string]int `json:"-"` // the report lists them (job.Skips)
	// Planned lists, in a dry run, the decisions a real pass would write
	// (then Supersessions and Proposals* count them).
	Planned []Planned `json:"planned,omitempty"`
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
	t.SemanticDeferred += u.SemanticDeferred
	t.SemanticTokens += u.SemanticTokens
	t.SemanticIgnored += u.SemanticIgnored
	t.ProposalsProbation += u.ProposalsProbation
	t.Braked += u.Braked
	for k, v := range u.Skips {
		t.skip(k, v)
	}
	t.Planned = append(t.Planned, u.Planned...)
}

// Pass configures one call of Process.
type Pass struct {
	Actor Actor
	// Source labels metrics: sweep | inline.
	Source string
	// Focus limits the pass to the old attributes a classification may
	// change the fate of (inline): the focus and those it contradicts.
	Focus map[string]bool
	// Questions bounds the windows the pass may ask the LLM (one Budget
	// may span several Process calls of one run); windows beyond it are
	// deferred to a later pass. Nil: DefaultQuestions for this call.
	Questions *Budget
	// Reloads says the pass loads aspects it (or another) loaded before: the
	// inline hook. Their attributes' blocking keys are then remembered
	// across passes, so that only new or edited attributes are analysed
	// whole.
	Reloads bool
	// Brake, when set, is asked before every write batch whether the
	// configuration now in force forbids changing agent data (shadowMode or
	// mutationsFrozen turned on while the pass ran). Once it says yes, the
	// rest of the pass writes proposals instead of supersessions.
	Brake func() bool
	// DryRun decides exactly as a real pass would and writes nothing at
	// all: no supersession, no proposal, no cached LLM verdict. The
	// decisions come back in Tally.Planned.
	DryRun bool
	// Digests asks for each large group's key digest (Group.Keys), made
	// from the blocking index the plan builds anyway (the heuristics' keys,
	// with the semantic fallback too: the hook narrows by them). Not with a
	// focus.
	Digests bool
}

// Budget bounds how many windows a run may ask the LLM: a slow or paid
// model must not be asked about every aspect of a first sweep at once. A
// run asks the rest on later runs (the answers are stored).
type Budget struct{ left int }

// DefaultQuestions is a sweep run's budget of LLM requests (windows).
const DefaultQuestions = 256

// NewBudget returns a budget of n questions.
func NewBudget(n int) *Budget { return &Budget{left: n} }

// take spends one question; false when none is left.
func (b *Budget) take() bool {
	if b.left <= 0 {
		return false
	}
	b.left--
	return true
}

// Process decides every group and writes the results: supersessions in
// live mode at or above the threshold, proposals in shadow mode and in the
// review band. Decisions use the configuration given, read once per pass;
// only the brake is observed as it changes.
func (e *Engine) Process(ctx context.Context, cfg Settings, groups []*Group, pass Pass) (Tally, error) {
	var t Tally
	if len(groups) == 0 {
		return t, nil
	}
	pol := e.currentPolicy()
	in, client := e.planInput(ctx, cfg, pass, pol)

	preps := make([]*prepared, len(groups))
	agents := map[string]bool{}
	for i, g := range groups {
		t.Groups++
		t.Attributes += len(g.Attrs)
		agents[g.AgentID] = true
		preps[i] = g.takeAhead(in)
		if preps[i] == nil {
			preps[i] = prepare(g, in)
		}
	}
	var a *asking
	if client != nil {
		a = &asking{client: client, policy: pol, budget: pass.Questions, dryRun: pass.DryRun,
			timeout: cfg.SemanticTimeout}
		if a.budget == nil {
			a.budget = NewBudget(DefaultQuestions)
		}
	}
	candidates, err := e.decideAll(ctx, a, preps, in, keys(agents), pass, &t)
	if err != nil {
		return t, err
	}
	if err := e.enforce(ctx, candidates, pol); err != nil {
		return t, err
	}
	if pass.DryRun {
		return t, e.dryRun(ctx, candidates, &t)
	}
	return t, e.write(ctx, candidates, pass, &t)
}

// planInput is what Process plans a pass's groups with, and the LLM client
// when the semantic fallback is on.
func (e *Engine) planInput(ctx context.Context, cfg Settings, pass Pass, pol Policy) (planInput, *llm.Client) {
	in := planInput{
		thresholds: cfg.Thresholds,
		shadow:     cfg.Shadow,
		focus:      pass.Focus,
		trace:      e.log.Enabled(ctx, slog.LevelDebug),
		digests:    pass.Digests && pass.Focus == nil,
	}
	if pass.Reloads {
		in.keys = e.keys
	}
	var client *llm.Client
	if cfg.SemanticFallback && e.llms != nil {
		client = e.llms.Client(cfg.LLM)
		in.semantic = client != nil
		in.gate = pol.Gate
		if client != nil {
			in.model = client.Model()
		}
	}
	return in, client
}

// decideAll plans every prepared group, asks the LLM about the pairs that
// need it (outside any transaction) and plans the waiting groups again with
// the verdicts.
func (e *Engine) decideAll(ctx context.Context, a *asking, preps []*prepared, in planInput, agents []string, pass Pass, t *Tally) ([]Candidate, error) {
	outs, err := e.planVetoed(ctx, preps, &in, agents)
	if err != nil {
		return nil, err
	}
	var candidates []Candidate
	var again []*prepared
	pending := map[pairKey]pendingPair{}
	groupOf := map[*Attribute]*Group{}
	for i, out := range outs {
		t.Pairs += out.pairs
		for k, v := range out.skips {
			t.skip(k, v)
		}
		e.logFailures(ctx, pass.Source, out.failures)
		e.logTraces(ctx, pass.Source, out.traces)
		candidates = append(candidates, out.candidates...)
		if len(out.pending) > 0 {
			again = append(again, preps[i])
			for k, pp := range out.pending {
				pending[k] = pp
				groupOf[pp.old] = preps[i].g
			}
		}
	}
	if len(pending) == 0 || a == nil {
		return candidates, nil
	}
	in.known, err = e.resolve(ctx, *a, pending, groupOf, t)
	if err != nil {
		return candidates, err
	}
	// Only the old attributes that were waiting yield new candidates: the
	// others were decided (or found nothing) the first time.
	decided := map[string]bool{}
	for _, c := range candidates {
		decided[c.Old.ID] = true
	}
	waiting := map[*Attribute]bool{}
	for _, pp := range pending {
		waiting[pp.old] = true
	}
	for _, p := range again {
		out := plan(p, in)
		for _, c := range out.candidates {
			if !decided[c.Old.ID] {
				candidates = append(candidates, c)
			}
		}
		traces := out.traces[:0]
		for _, tr := range out.traces {
			if waiting[tr.Old] {
				traces = append(traces, tr)
			}
		}
		e.logTraces(ctx, pass.Source, traces)
	}
	return candidates, nil
}

// planVetoed plans every group, respecting the pairs operators vetoed. A
// veto only ever removes a pair, so the vetoes that matter are those of the
// old attributes a plan without them decides or waits on: a few in a
// hundred, where asking about every attribute of a batch cost the database
// more than reading the batch. Those are looked up, and only the groups
// holding one are planned again, with them. in.vetoed is set for the
// plans that follow.
func (e *Engine) planVetoed(ctx context.Context, preps []*prepared, in *planInput, agents []string) ([]planOutput, error) {
	outs := make([]planOutput, len(preps))
	var olds []string
	for i, p := range preps {
		if p.ahead != nil {
			outs[i], p.ahead = *p.ahead, nil
		} else {
			outs[i] = plan(p, *in)
		}
		olds = outs[i].deciding(olds)
	}
	vetoed, err := e.attrs.vetoes(ctx, olds, agents)
	if err != nil || vetoed.empty() {
		return outs, err
	}
	in.vetoed = vetoed
	for i, p := range preps {
		if slices.ContainsFunc(outs[i].deciding(nil), vetoed.touches) {
			outs[i] = plan(p, *in)
		}
	}
	return outs, nil
}

// writeChunk is how many decisions one write transaction carries.
const writeChunk = 500

// write applies and proposes in chunks, each its own short transaction.
// Before each chunk the brake is asked; once it is on, what remains is
// written as proposals. A chunk refused for one row's fault (store.RowFault:
// a constraint of the stack's, data the database will not take) is written
// again one decision at a time, so that row is skipped with its reason and
// never takes the rest of its chunk down with it. Any other failure (a busy,
// full or unreachable server) stops the pass with its error: nothing is
// skipped, so the caller consumes nothing and the decisions are made again.
func (e *Engine) write(ctx context.Context, cands []Candidate, pass Pass, t *Tally) error {
	// Oldest old attribute first, so that a chain found in one pass (O1 → O2,
	// O2 → N) is written link by link: O1 → O2 is checked while O2 is still
	// active, whatever the chunk boundaries.
	sort.SliceStable(cands, func(i, j int) bool { return cands[j].Old.newer(cands[i].Old) })
	braked := false
	for start := 0; start < len(cands); start += writeChunk {
		chunk := cands[start:min(start+writeChunk, len(cands))]
		if !braked && pass.Brake != nil && pass.Brake() {
			braked = true
			e.log.Warn("supersession: shadowMode or mutationsFrozen turned on during the pass; the rest of it only proposes",
				"source", pass.Source, "decisions_left", len(cands)-start)
		}
		var applies []Supersession
		var proposals []Proposal
		for _, c := range chunk {
			if braked && c.Mode == ModeLive {
				c.Mode = ModeShadow
				t.Braked++
			}
			meta := Metadata{
				AgentID: c.Old.AgentID, OldAttributeID: c.Old.ID, NewAttributeID: c.New.ID, AspectID: c.Old.AspectID,
				Method: c.Method, Confidence: round3(c.Confidence), Signals: c.Signals, Reasoning: c.Reasoning,
				Mode: c.Mode, RunID: pass.Actor.RequestID, Model: c.Model, Rule: c.Rule,
			}
			if c.Mode == ModeLive {
				applies = append(applies, Supersession{Meta: meta, OldContent: c.Old.Content.String, NewContent: c.New.Content.String,
					Reason: describe(c), RespectVetoes: true})
			} else {
				proposals = append(proposals, Proposal{Meta: meta, NewContent: c.New.Content.String, Reason: describe(c)})
			}
		}
		if err := e.applyChunk(ctx, applies, pass, t); err != nil {
			return err
		}
		if err := e.proposeChunk(ctx, proposals, pass, t); err != nil {
			return err
		}
	}
	for reason, n := range t.Skips {
		e.metrics.Skips.WithLabelValues(pass.Source, reason).Add(float64(n))
	}
	return nil
}

func (e *Engine) applyChunk(ctx context.Context, items []Supersession, pass Pass, t *Tally) error {
	written, err := isolate(ctx, e, pass, items, func(batch []Supersession) (int, error) {
		var done []Applied
		err := withRetry(ctx, func() error {
			return store.InTx(ctx, e.db, func(tx *sqlx.Tx) error {
				var err error
				done, err = e.Apply(ctx, tx, pass.Actor, batch)
				return err
			})
		})
		if err == nil {
			e.LogApplied(pass.Source, batch, done)
		}
		return len(done), err
	}, func(s Supersession) Metadata { return s.Meta })
	if err != nil {
		return err
	}
	t.Supersessions += written.ok
	t.skip(SkipChanged, written.noop)
	t.skip(SkipWriteFailed, written.failed)
	e.metrics.Supersessions.WithLabelValues(pass.Source).Add(float64(written.ok))
	return nil
}

func (e *Engine) proposeChunk(ctx context.Context, items []Proposal, pass Pass, t *Tally) error {
	var modes = map[Mode]int{}
	written, err := isolate(ctx, e, pass, items, func(batch []Proposal) (int, error) {
		var done []Proposed
		err := withRetry(ctx, func() error {
			var err error
			done, err = e.Propose(ctx, e.db, pass.Actor, batch)
			return err
		})
		for _, w := range done {
			modes[w.Mode]++
		}
		return len(done), err
	}, func(p Proposal) Metadata { return p.Meta })
	if err != nil {
		return err
	}
	e.logProposed(pass, len(items), modes, written)
	t.ProposalsShadow += modes[ModeShadow]
	t.ProposalsReview += modes[ModeReview]
	t.ProposalsProbation += modes[ModeProbation]
	for m, n := range modes {
		e.metrics.Proposals.WithLabelValues(pass.Source, string(m)).Add(float64(n))
	}
	t.skip(SkipDuplicate, written.noop)
	t.skip(SkipWriteFailed, written.failed)
	return nil
}

// written counts a chunk's outcome: written, guarded no-ops, and rows whose
// write failed and were skipped.
type written struct{ ok, noop, failed int }

// isolate writes a chunk; when that fails for one row's fault (and the pass
// goes on), it writes each item on its own, skipping (with a log line naming
// the attribute and the reason) those that fail for their own fault again.
// Any other failure is returned as it is, from the chunk or from an item.
func isolate[T any](ctx context.Context, e *Engine, pass Pass, items []T, fn func([]T) (int, error), meta func(T) Metadata) (written, error) {
	var w written
	if len(items) == 0 {
		return w, nil
	}
	n, err := fn(items)
	if err == nil {
		return written{ok: n, noop: len(items) - n}, nil
	}
	if !isolatable(ctx, err) {
		return w, err
	}
	for _, it := range items {
		n, err := fn([]T{it})
		switch {
		case err == nil:
			w.ok += n
			w.noop += 1 - n
		case !isolatable(ctx, err):
			return w, err
		default:
			w.failed++
			m := meta(it)
			e.log.Warn("supersession: a write was refused for this row's own data or the stack's constraint; skipped, the rest of the batch is written",
				"source", pass.Source, "agent_id", m.AgentID, "old_attribute_id", m.OldAttributeID,
				"new_attribute_id", m.NewAttributeID, "mode", string(m.Mode), "err", err)
		}
	}
	return w, nil
}

// isolatable reports whether a failed write is the fault of one row
// (store.RowFault decides which errors are), while the pass goes on.
func isolatable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && store.RowFault(err)
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
	if c.Method == MethodSemantic {
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

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
