package sweep

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/supersession"
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
	log    *slog.Logger
	engine *supersession.Engine
	// BatchAspects overrides batchAspects (tests exercise batch boundaries).
	BatchAspects int
	// Budget, when set, replaces the schedule-derived budget of Run.
	Budget time.Duration
	// Current, when set, returns the configuration in force now (the
	// daemon's, which a reload replaces). A run decides under the
	// configuration it started with, but asks Current before every write
	// batch whether shadowMode or mutationsFrozen was turned on since.
	Current func() *config.Config
}

// New returns the sweep job.
func New(db *sqlx.DB, log *slog.Logger, engine *supersession.Engine) *Job {
	return &Job{db: db, log: log.With("job", Name), engine: engine, BatchAspects: batchAspects}
}

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
	RunID   string `json:"run_id"`
	Mode    string `json:"mode"` // live | shadow | frozen
	Agent   string `json:"agent,omitempty"`
	Batches int    `json:"batches"`
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

// cursor is the keyset position: the last (agent, aspect) fully handled.
type cursor struct {
	AgentID       string    `json:"agent_id"`
	AspectID      string    `json:"aspect_id"`
	PassStartedAt time.Time `json:"pass_started_at"`
}

const cursorName = "sweep_cursor"

// Run is a scheduled run: resume at the stored cursor, stop at the budget.
func (j *Job) Run(ctx context.Context, cfg *config.Config) (any, error) {
	if !cfg.Memory.PipelineV2.Structural.SupersessionEnabled {
		return &Report{Disabled: "memory.pipelineV2.structural.supersessionEnabled is false"}, nil
	}
	budget := j.Budget
	if budget == 0 {
		budget = budgetFor(cfg, time.Now())
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
	start := time.Now()
	r := &Report{RunID: newRunID(), Mode: mode(cfg), Agent: agent}
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
	budgetSem := 256
	pass := supersession.Pass{
		Actor:          supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system", RequestID: r.RunID},
		Source:         Name,
		SemanticBudget: &budgetSem,
	}
	if j.Current != nil {
		pass.Brake = func() bool { return j.Current().Shadow() }
	}
	defer func() {
		r.Duration = time.Since(start)
		r.Seconds = r.Duration.Seconds()
	}()
	for {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		groups, err := j.loadBatch(ctx, cur, agent)
		if err != nil {
			return r, err
		}
		if len(groups) == 0 {
			r.Complete = true
			if agent == "" && !cfg.InlineHookEnabled() {
				// Nobody drains the inline outbox while the hook is off; a
				// complete pass has covered everything classified before it
				// started, so those rows are done with.
				passStart := start
				if resumable {
					passStart = cur.PassStartedAt
				}
				if _, err := j.db.ExecContext(ctx, `DELETE FROM supersessiond_classified WHERE classified_at < $1`, passStart); err != nil {
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
		if budget > 0 && time.Since(start) > budget {
			r.Stopped = stoppedBudget
			return r, nil
		}
	}
}

// batchSQL finds the next aspects after the cursor that have at least two
// active non-constraint attributes (a GroupAggregate over an index-only scan
// of the sibling index, stopping at the LIMIT), cuts the list so a batch
// holds about batchAttributes attributes, and loads their attributes with
// the aspect's name, oldest first.
const batchSQL = `
WITH aspects AS (
  SELECT agent_id, aspect_id, count(*) AS n
  FROM entity_attributes
  WHERE status = 'active' AND aspect_id IS NOT NULL AND kind <> 'constraint'
    AND (agent_id, aspect_id) > ($1, $2)
    AND ($3 = '' OR agent_id = $3)
  GROUP BY agent_id, aspect_id
  HAVING count(*) >= 2
  ORDER BY agent_id, aspect_id
  LIMIT $4
),
cut AS (
  SELECT agent_id, aspect_id
  FROM (SELECT agent_id, aspect_id, sum(n) OVER (ORDER BY agent_id, aspect_id) - n AS before FROM aspects) s
  WHERE before < $5
)
SELECT ` + supersession.GroupColumns + `
FROM cut
JOIN entity_attributes a ON a.agent_id = cut.agent_id AND a.aspect_id = cut.aspect_id
LEFT JOIN entity_aspects asp ON asp.id = a.aspect_id AND asp.agent_id = a.agent_id
WHERE a.status = 'active' AND a.kind <> 'constraint'
ORDER BY a.agent_id, a.aspect_id, a.created_at, a.id`

func (j *Job) loadBatch(ctx context.Context, cur cursor, agent string) ([]*supersession.Group, error) {
	rows, err := j.db.QueryxContext(ctx, batchSQL, cur.AgentID, cur.AspectID, agent, j.BatchAspects, batchAttributes)
	if err != nil {
		return nil, fmt.Errorf("sweep: load aspects after (%q, %q): %w", cur.AgentID, cur.AspectID, err)
	}
	defer rows.Close()
	groups, err := supersession.ScanGroups(rows)
	if err != nil {
		return nil, fmt.Errorf("sweep: load aspects after (%q, %q): %w", cur.AgentID, cur.AspectID, err)
	}
	return groups, nil
}

func (j *Job) loadCursor(ctx context.Context) (cursor, error) {
	var raw []byte
	err := j.db.GetContext(ctx, &raw, `SELECT value FROM supersessiond_state WHERE name = $1`, cursorName)
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
	_, err := j.db.ExecContext(ctx, `
		INSERT INTO supersessiond_state (name, value, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, cursorName, string(raw))
	if err != nil {
		return fmt.Errorf("sweep: save cursor: %w", err)
	}
	return nil
}

func mode(cfg *config.Config) string {
	switch {
	case cfg.Frozen():
		return "frozen"
	case cfg.Shadow():
		return "shadow"
	}
	return "live"
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
