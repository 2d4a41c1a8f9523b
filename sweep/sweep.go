package sweep

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// Name is the job's name (lease, metrics, logs).
const Name = "sweep"

// Batch limits: aspects per batch, and attributes per batch (an aspect with
// more siblings than that still comes whole, alone in its batch).
const (
	batchAspects    = 500
	batchAttributes = 20000
)

// Job is the sweep.
type Job struct {
	db     *sqlx.DB
	sql    statements
	log    *slog.Logger
	now    func() time.Time
	braked func() bool
	engine *supersession.Engine
	// BatchAspects overrides batchAspects (tests exercise batch boundaries).
	BatchAspects int
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
func New(deps job.Deps, engine *supersession.Engine) *Job {
	deps = deps.WithDefaults()
	n := deps.Names
	return &Job{db: deps.DB, sql: statements{loadCursor: n.SQL(loadCursorSQL), saveCursor: n.SQL(saveCursorSQL)},
		log: deps.Logger.With("job", Name), now: deps.Now, braked: deps.Braked, engine: engine, BatchAspects: batchAspects}
}

// The sweep's own SQL: its cursor in the daemon's state table.
const (
	loadCursorSQL = `SELECT value FROM {{.State}} WHERE name = $1`
	saveCursorSQL = `
INSERT INTO {{.State}} (name, value, updated_at) VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
)

type statements struct{ loadCursor, saveCursor string }

func (j *Job) Name() string { return Name }

// Schedule is maintenance.schedules.sweep while supersessionEnabled and
// supersessionSweepEnabled, else off.
func (j *Job) Schedule(cfg *config.Config) string {
	if !cfg.SweepScheduled() {
		return config.ScheduleOff
	}
	return cfg.Maintenance.Schedules.Sweep
}

// Report is what a sweep found and did.
type Report struct {
	RunID   string      `json:"run_id"`
	Mode    config.Mode `json:"mode"`
	Agent   string      `json:"agent,omitempty"`
	Batches int         `json:"batches"`
	supersession.Tally
	// Complete is true when the pass reached the last aspect. Stopped says
	// why it did not: "budget" (the time budget ran out; the next run
	// resumes at the cursor), "error" (see Error) or "cancelled".
	Complete bool          `json:"complete"`
	Stopped  string        `json:"stopped,omitempty"`
	Error    string        `json:"error,omitempty"`
	Resumed  bool          `json:"resumed"`
	Disabled string        `json:"disabled,omitempty"`
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"duration_seconds"`
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
	fmt.Fprintf(&b, "sweep (%s mode, %s) run %s\n", r.Mode, scope, r.RunID)
	fmt.Fprintf(&b, "  examined       %d aspects, %d attributes, %d pairs in %d batches\n", r.Groups, r.Attributes, r.Pairs, r.Batches)
	fmt.Fprintf(&b, "  supersessions  %d\n", r.Supersessions)
	fmt.Fprintf(&b, "  proposals      %d shadow, %d review\n", r.ProposalsShadow, r.ProposalsReview)
	if r.SemanticAsked+r.SemanticCacheHits > 0 {
		fmt.Fprintf(&b, "  semantic       %d asked, %d cached, %d failed\n", r.SemanticAsked, r.SemanticCacheHits, r.SemanticFailures)
	}
	if len(r.Skips) > 0 {
		reasons := make([]string, 0, len(r.Skips))
		for k := range r.Skips {
			reasons = append(reasons, k)
		}
		sort.Strings(reasons)
		parts := make([]string, 0, len(reasons))
		for _, k := range reasons {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Skips[k]))
		}
		fmt.Fprintf(&b, "  skipped        %s\n", strings.Join(parts, " "))
	}
	state := "complete"
	switch {
	case r.Complete:
	case r.Stopped == stoppedBudget:
		state = "stopped at its time budget; the next run resumes there"
	case r.Stopped == stoppedCancelled:
		state = "cancelled; the next run resumes where it stopped"
	default:
		state = "FAILED: " + r.Error + "; the next run resumes where it stopped"
	}
	fmt.Fprintf(&b, "  pass           %s (%.2fs)\n", state, r.Seconds)
	return b.String()
}

// cursor is the keyset position and the start of the pass it belongs to.
type cursor struct {
	supersession.Cursor
	PassStartedAt time.Time `json:"pass_started_at"`
}

const cursorName = "sweep_cursor"

// Run is a scheduled run: resume at the stored cursor, stop at the budget.
func (j *Job) Run(ctx context.Context, cfg *config.Config) (job.Report, error) {
	if !cfg.Memory.PipelineV2.Structural.SupersessionEnabled {
		return &Report{Disabled: "memory.pipelineV2.structural.supersessionEnabled is false"}, nil
	}
	budget := j.Budget
	if budget == 0 {
		budget = budgetFor(cfg, j.now())
	}
	return j.sweep(ctx, cfg, "", budget, true)
}

// Once is a full pass now (sweep --once): no budget, no stored cursor.
func (j *Job) Once(ctx context.Context, cfg *config.Config, agent string) (*Report, error) {
	if !cfg.Memory.PipelineV2.Structural.SupersessionEnabled {
		return &Report{Disabled: "memory.pipelineV2.structural.supersessionEnabled is false " +
			"(override once with SUPERSESSIOND_MEMORY__PIPELINEV2__STRUCTURAL__SUPERSESSIONENABLED=true)"}, nil
	}
	return j.sweep(ctx, cfg, agent, 0, false)
}

// budgetFor is most of the time until the next tick, within [1m, 30m]: a
// run should end before the next one is due, and a tiny interval should not
// starve progress.
func budgetFor(cfg *config.Config, now time.Time) time.Duration {
	s, err := config.ParseSchedule(cfg.Maintenance.Schedules.Sweep)
	if err != nil {
		return 10 * time.Minute
	}
	gap := s.Next(now.In(cfg.Location())).Sub(now)
	return min(max(gap*8/10, time.Minute), 30*time.Minute)
}

// Why a pass stopped before its end.
const (
	stoppedBudget    = "budget"
	stoppedError     = "error"
	stoppedCancelled = "cancelled"
)

// sweep runs a pass and records in the report why it ended.
func (j *Job) sweep(ctx context.Context, cfg *config.Config, agent string, budget time.Duration, resumable bool) (*Report, error) {
	r, err := j.pass(ctx, cfg, agent, budget, resumable)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		r.Stopped, r.Error = stoppedCancelled, err.Error()
	default:
		r.Stopped, r.Error = stoppedError, err.Error()
	}
	return r, err
}

func (j *Job) pass(ctx context.Context, cfg *config.Config, agent string, budget time.Duration, resumable bool) (*Report, error) {
	start := j.now()
	r := &Report{RunID: ident.Random("", 8), Mode: cfg.Mode(), Agent: agent}
	var cur cursor
	if resumable {
		var err error
		if cur, err = j.loadCursor(ctx); err != nil {
			return r, err
		}
		r.Resumed = cur.AspectID != "" || cur.AgentID != ""
		if !r.Resumed {
			cur.PassStartedAt = start.UTC()
		}
	}
	pass := supersession.Pass{
		Actor:     supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system", RequestID: r.RunID},
		Source:    Name,
		Questions: supersession.NewBudget(supersession.DefaultQuestions),
	}
	pass.Brake = j.braked
	defer func() {
		r.Duration = j.now().Sub(start)
		r.Seconds = r.Duration.Seconds()
	}()
	for {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		groups, err := j.engine.LoadBatch(ctx, cur.Cursor, agent, j.BatchAspects, batchAttributes)
		if err != nil {
			return r, err
		}
		if len(groups) == 0 {
			r.Complete = true
			if agent == "" && !cfg.InlineHookEnabled() && j.PruneOutbox != nil {
				passStart := start
				if resumable {
					passStart = cur.PassStartedAt
				}
				if err := j.PruneOutbox(ctx, passStart); err != nil {
					return r, fmt.Errorf("sweep: prune the inline outbox: %w", err)
				}
			}
			if resumable {
				if err := j.saveCursor(ctx, cursor{}); err != nil {
					return r, err
				}
				j.log.Info("sweep pass complete", "pass_started_at", cur.PassStartedAt)
			}
			return r, nil
		}
		t, err := j.engine.Process(ctx, cfg, groups, pass)
		r.Tally.Add(t)
		if err != nil {
			return r, err
		}
		r.Batches++
		last := groups[len(groups)-1]
		cur.AgentID, cur.AspectID = last.AgentID, last.AspectID
		if resumable {
			if err := j.saveCursor(ctx, cur); err != nil {
				return r, err
			}
		}
		// Checked after a batch, so every run makes progress.
		if budget > 0 && j.now().Sub(start) > budget {
			r.Stopped = stoppedBudget
			return r, nil
		}
	}
}

func (j *Job) loadCursor(ctx context.Context) (cursor, error) {
	var raw []byte
	err := j.db.GetContext(ctx, &raw, j.sql.loadCursor, cursorName)
	if errors.Is(err, sql.ErrNoRows) {
		return cursor{}, nil
	}
	if err != nil {
		return cursor{}, fmt.Errorf("sweep: load cursor: %w", err)
	}
	var c cursor
	if err := json.Unmarshal(raw, &c); err != nil {
		j.log.Warn("sweep cursor unreadable; starting a new pass", "err", err)
		return cursor{}, nil
	}
	return c, nil
}

func (j *Job) saveCursor(ctx context.Context, c cursor) error {
	raw, _ := json.Marshal(c)
	_, err := j.db.ExecContext(ctx, j.sql.saveCursor, cursorName, string(raw))
	if err != nil {
		return fmt.Errorf("sweep: save cursor: %w", err)
	}
	return nil
}
