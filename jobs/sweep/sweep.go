package sweep

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// Name is the job's name (lease, metrics, logs).
const Name = "sweep"

// Batch limits: aspects per batch, and attributes per batch (an aspect with
// more siblings than that still comes whole, alone in its batch).
const (
	batchAspects    = 500
	batchAttributes = 20000
	chunkRows       = 20000
)

// Job is the sweep.
type Job struct {
	db     *sqlx.DB
	sql    statements
	log    *slog.Logger
	now    func() time.Time
	braked func() bool
	guard  *store.Guard // waited on before each batch
	engine *supersession.Engine
	feed   *supersession.Feed // the change records, as this process claims them
	// BatchAspects overrides batchAspects (tests exercise batch boundaries).
	BatchAspects int
	// ChunkRows overrides chunkRows, the rows a full pass reads per statement.
	ChunkRows int
	// ClaimFor is how long a claim on change records lasts unless renewed.
	ClaimFor time.Duration
	examined func(agent, aspect string) // OnExamine
	// Budget, when set, replaces the schedule-derived budget of Run.
	Budget time.Duration
	// PruneOutbox, when set, is called after a complete pass over all
	// agents while the inline hook is off: nobody else drains its outbox,
	// and the pass covered everything classified before it started.
	PruneOutbox func(ctx context.Context, before time.Time) error
}

// New returns the sweep job for the database deps describe, deciding with
// engine (the daemon shares one with the inline hook). A run asks
// deps.Config before every write batch whether the brake was engaged.
func New(deps jobs.Deps, engine *supersession.Engine) *Job {
	deps = deps.WithDefaults()
	engine.CountsFor(Name)
	return &Job{db: deps.DB, sql: schema.Render(deps.Names, sweepSQL), log: deps.Logger.With("job", Name), now: deps.Now, braked: deps.Braked,
		guard: deps.Guard, engine: engine, feed: engine.Feed(ident.Holder()), BatchAspects: batchAspects, ChunkRows: chunkRows, ClaimFor: time.Minute}
}

func (j *Job) Name() string { return Name }

// OnExamine, when set before a run (tests), is told each aspect a pass
// decides, after its reads and before its decisions.
func (j *Job) OnExamine(f func(agent, aspect string)) { j.examined = f }

// Settings are what a sweep decides and runs under, made once per load of
// the configuration.
type Settings struct {
	// Enabled is supersessionEnabled.
	Enabled bool
	// Schedule is maintenance.schedules.sweep, off unless
	// supersessionEnabled and supersessionSweepEnabled (its Next is the
	// spec's all the same: a run's budget).
	Schedule jobs.Schedule
	Mode     jobs.Mode
	// FullSweepEvery: a full pass at least this often.
	FullSweepEvery time.Duration
	// InlineHook says the inline hook runs (it prunes its own outbox).
	InlineHook bool
	// Engine is what the engine decides under.
	Engine supersession.Settings
}

// Schedule is maintenance.schedules.sweep while supersessionEnabled and
// supersessionSweepEnabled, else off.
func (j *Job) Schedule(cfg Settings) string { return cfg.Schedule.Spec }

// Kind is what a pass examines (SPEC §11).
type Kind string

const (
	KindFull        Kind = "full"        // every aspect
	KindIncremental Kind = "incremental" // the aspects that changed since
)

// Report is what a sweep found and did.
type Report struct {
	jobs.Run
	Kind Kind `json:"kind"`
	// Why says why a scheduled or CLI run is full (see fullReason).
	Why     string `json:"why,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Batches int    `json:"batches"`
	// Changes counts the change records an incremental pass consumed.
	Changes int `json:"changes"`
	// Narrowed counts the aspects an incremental pass examined through
	// their stored keys (the changed attributes and the siblings those can
	// meet); the rest of its aspects were read whole.
	Narrowed int `json:"aspects_narrowed"`
	// ReadWhole counts, by reason, the changed aspects read whole: whole (a
	// record named no attribute), no_digest (small, or new since the last
	// full pass), fragments, old_digest, malformed, many (a change meets a
	// key many siblings hold), semantic (the LLM fallback is on).
	ReadWhole map[string]int `json:"aspects_read_whole,omitempty"`
	supersession.Tally
	Skipped []jobs.Skip `json:"skipped"`
	// Resumed: a scheduled full pass went on from the cursor a previous
	// run left.
	Resumed  bool   `json:"resumed"`
	Disabled string `json:"disabled,omitempty"`
	// DryRun: nothing was written; Planned lists what a real pass would
	// write, and the counts are of those.
	DryRun bool `json:"dry_run"`
}

// Text renders the report for a terminal.
func (r *Report) Text() string {
	var b strings.Builder
	if r.Disabled != "" {
		fmt.Fprintf(&b, "sweep: nothing done: %s\n", r.Disabled)
		return b.String()
	}
	scope := "all agents"
	if r.Agent != "" {
		scope = "agent " + r.Agent
	}
	dry, would := "", ""
	if r.DryRun {
		dry, would = ", dry run: nothing written", "would be "
	}
	fmt.Fprintf(&b, "sweep (%s mode, %s, %s%s) run %s\n", r.Mode, r.Kind, scope, dry, r.RunID)
	if r.Why != "" {
		fmt.Fprintf(&b, "  full because   %s\n", r.Why)
	}
	if r.Kind == KindIncremental {
		fmt.Fprintf(&b, "  changes        %d recorded changes; %d aspects narrowed by their keys, %d read whole%s\n",
			r.Changes, r.Narrowed, r.Groups-r.Narrowed, reasons(r.ReadWhole))
	}
	fmt.Fprintf(&b, "  examined       %d aspects, %d attributes, %d pairs in %d batches\n", r.Groups, r.Attributes, r.Pairs, r.Batches)
	fmt.Fprintf(&b, "  supersessions  %s%d\n", would, r.Supersessions)
	fmt.Fprintf(&b, "  proposals      %s%d shadow, %d review, %d probation\n", would, r.ProposalsShadow, r.ProposalsReview, r.ProposalsProbation)
	if r.SemanticAsked+r.SemanticCacheHits+r.SemanticDeferred > 0 {
		fmt.Fprintf(&b, "  semantic       %d windows asked, %d answered before, %d failed, %d deferred to a later run; %d tokens\n",
			r.SemanticAsked, r.SemanticCacheHits, r.SemanticFailures, r.SemanticDeferred, r.SemanticTokens)
	}
	if len(r.Skipped) > 0 {
		parts := make([]string, 0, len(r.Skipped))
		for _, s := range r.Skipped {
			parts = append(parts, fmt.Sprintf("%s=%d", s.Reason, s.Count))
		}
		fmt.Fprintf(&b, "  skipped        %s\n", strings.Join(parts, " "))
	}
	state := "complete"
	switch {
	case r.Complete:
	case r.Stopped == jobs.StoppedBudget && r.Kind == KindIncremental:
		state = "stopped at its time budget; the next run takes the changes left"
	case r.Stopped == jobs.StoppedBudget:
		state = "stopped at its time budget; the next run resumes there"
	case r.Stopped == jobs.StoppedCancelled:
		state = "cancelled; the next run resumes where it stopped"
	default:
		state = "FAILED: " + r.Error + "; the next run resumes where it stopped"
	}
	fmt.Fprintf(&b, "  pass           %s (%.2fs)\n", state, r.DurationSeconds)
	if r.DryRun {
		writePlanned(&b, r.Planned)
	}
	return b.String()
}

// reasons renders counts by reason, " (reason n, ...)", sorted.
func reasons(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(parts)
	return " (" + strings.Join(parts, ", ") + ")"
}

// writePlanned lists a dry run's decisions, one line each, contents clipped.
func writePlanned(b *strings.Builder, planned []supersession.Planned) {
	if len(planned) == 0 {
		b.WriteString("  would write    nothing\n")
		return
	}
	b.WriteString("  would write:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    ACTION\tAGENT\tOLD → NEW\tCONF\tSIGNALS")
	for _, p := range planned {
		signals := p.Signals.Names()
		if signals == "" {
			signals = "-"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s %s → %s %s\t%.2f\t%s\n", p.Action, p.AgentID,
			p.OldID, strconv.Quote(supersession.Clip(p.OldContent, 40)), p.NewID, strconv.Quote(supersession.Clip(p.NewContent, 40)),
			p.Confidence, signals)
	}
	_ = tw.Flush()
}

// Options of a sweep --once.
type Options struct {
	// Agent limits the pass to one agent's aspects: a full pass of them,
	// which leaves the daemon's records alone.
	Agent string
	// Full forces a full pass where an incremental one would do.
	Full bool
	// DryRun is a full pass that decides exactly as a real one and writes
	// nothing at all: no supersession, proposal, cursor, record of the
	// pass, consumed change record or cached LLM verdict. The report lists
	// the decisions (Planned).
	DryRun bool
}

// Run is a scheduled run: a full pass when one is due (resuming at the
// stored cursor, stopping at the budget), else an incremental one.
func (j *Job) Run(ctx context.Context, cfg Settings) (jobs.Report, error) {
	if !cfg.Enabled {
		return &Report{Disabled: "memory.pipelineV2.structural.supersessionEnabled is false"}, nil
	}
	budget := j.Budget
	if budget == 0 {
		budget = budgetFor(cfg, j.now())
	}
	return j.run(ctx, cfg, Options{}, budget, true)
}

// Once is a pass now (sweep --once): incremental when that would do, full
// with opt.Full or opt.Agent or when a full pass is due. No budget; a full
// pass does not touch the scheduled runs' cursor.
func (j *Job) Once(ctx context.Context, cfg Settings, opt Options) (*Report, error) {
	if !cfg.Enabled {
		return &Report{Disabled: "memory.pipelineV2.structural.supersessionEnabled is false " +
			"(override once with SUPERSESSIOND_MEMORY__PIPELINEV2__STRUCTURAL__SUPERSESSIONENABLED=true)"}, nil
	}
	return j.run(ctx, cfg, opt, 0, false)
}

// budgetFor is most of the time until the next tick, within [1m, 30m]: a
// run should end before the next one is due, and a tiny interval should not
// starve progress.
func budgetFor(cfg Settings, now time.Time) time.Duration {
	if cfg.Schedule.Next == nil {
		return 10 * time.Minute
	}
	gap := cfg.Schedule.Next(now).Sub(now)
	return min(max(gap*8/10, time.Minute), 30*time.Minute)
}

// run chooses the kind of pass, runs it and records in the report why it
// ended.
func (j *Job) run(ctx context.Context, cfg Settings, opt Options, budget time.Duration, scheduled bool) (*Report, error) {
	start := j.now()
	r := &Report{Run: jobs.NewRun(Name, cfg.Mode, start), Agent: opt.Agent, DryRun: opt.DryRun}
	go heuristics.Prepare() // while the state and the first rows are read
	err := func() error {
		st, err := j.loadState(ctx)
		if err != nil {
			return err
		}
		r.Why = fullReason(cfg, j.judgment(cfg), st, opt, scheduled, start)
		if r.Why == "" {
			r.Kind = KindIncremental
			return j.incremental(ctx, cfg, budget, start, r)
		}
		r.Kind = KindFull
		return j.full(ctx, cfg, st, opt.Agent, budget, scheduled, start, r)
	}()
	r.Finish(ctx, j.now().Sub(start), err)
	r.Skipped = jobs.Skips(r.Skips)
	return r, err
}

// judgment names what decisions depend on besides the rows: the
// heuristics' version, the thresholds, the LLM fallback and the mode (a
// shadow pass proposes what a live one applies), and the engine's policy
// (the LLM judge's gate, windows and prompt; the enforcement). A full pass
// records it; a new one calls for a full pass.
func (j *Job) judgment(cfg Settings) string {
	semantic := "off"
	if cfg.Engine.SemanticFallback && cfg.Engine.LLM.Endpoint != "" {
		semantic = cfg.Engine.LLM.Model
	}
	return fmt.Sprintf("heuristics %s; min %g; review %g; semantic %s; mode %s%s",
		heuristics.Version, cfg.Engine.Thresholds.Min, cfg.Engine.Thresholds.Review, semantic, cfg.Mode,
		j.engine.Judgment(semantic != "off"))
}

// fullReason says why this run must be a full pass, or "" when an
// incremental one will do.
func fullReason(cfg Settings, judgment string, st state, opt Options, scheduled bool, now time.Time) string {
	switch {
	case opt.DryRun:
		return "a dry run examines every aspect (--dry-run)"
	case opt.Agent != "":
		return "one agent's aspects (--agent)"
	case opt.Full:
		return "asked for (--full)"
	case scheduled && st.cursor.Started():
		return "resuming the full pass started " + st.cursor.PassStartedAt.Format(time.RFC3339)
	case st.last.CompletedAt.IsZero():
		return "no full pass has completed yet"
	case st.last.Judgment != judgment:
		return "the judgment changed (was: " + st.last.Judgment + ")"
	case now.Sub(st.last.CompletedAt) >= cfg.FullSweepEvery:
		return fmt.Sprintf("the last full pass started %s ago (fullSweepEvery %s)",
			now.Sub(st.last.CompletedAt).Round(time.Minute), cfg.FullSweepEvery)
	}
	return ""
}
