package compaction

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/jobs"
)

// Name is the job's name: its lease, log and metrics label.
const Name = "compaction"

// ChangedBy is memory_history.changed_by on the job's rows.
const ChangedBy = "supersessiond:compaction"

// History events (SPEC §5).
const (
	EventRetried = "compaction_retried"
	EventFailed  = "compaction_failed"
)

// Limits on what one event costs.
const (
	// maxMessagesRead bounds the messages read per event for the LLM; the
	// prompt could not hold more (llm keeps a 60k-character transcript).
	maxMessagesRead = 1000
	// maxBodyChars cuts each message body read for the LLM (llm cuts at
	// 4000 bytes anyway): a 1 MB body costs 4000 characters, not 1 MB.
	maxBodyChars = 4000
	// maxTranscriptChars bounds the characters read per event for the LLM.
	maxTranscriptChars = 64000
	// digestLinesPerSide and digestBodyChars bound what the deterministic
	// summary reads: it lists first lines until 500 characters are used.
	digestLinesPerSide = 60
	digestBodyChars    = 400
	// maxErrorLen caps last_error and the history's error.
	maxErrorLen = 1000
)

// errNoLLM is the attempt's error when maintenance.llm is not configured: the
// attempt fails like any other and follows the backoff, so that after
// maxAttempts the range still ends up summarised.
var errNoLLM = errors.New("no LLM configured: set maintenance.llm.endpoint and model")

// kindNotConfigured labels errNoLLM in metrics and reports.
const kindNotConfigured = "not_configured"

// Options tune a Job. The zero value is the daemon's.
type Options struct {
	// Rand returns uniform numbers in [0, 1) for the backoff jitter (nil:
	// math/rand/v2).
	Rand func() float64
}

// Job retries stale compaction events. It is safe for concurrent use, and
// any number of Jobs (in this or other processes) may run against one
// database at once.
type Job struct {
	db     *sqlx.DB
	sql    statements
	log    *slog.Logger
	m      *Metrics
	llm    *llm.Provider
	now    func() time.Time // staleness, backoff and completion times
	rand   func() float64
	braked func() bool  // asked before every claim and every outcome
	guard  *store.Guard // waited on before every claim
	// names and watching: where the job cannot re-compact it only watches
	// (watch.go).
	names    *schema.Names
	watching bool
}

// New builds the job for the database deps describe.
func New(deps jobs.Deps, opts Options) *Job {
	deps = deps.WithDefaults()
	j := &Job{db: deps.DB, sql: schema.Render(deps.Names, compactionSQL), log: deps.Logger, m: NewMetrics(deps.Registry), llm: deps.LLM,
		now: deps.Now, rand: opts.Rand, braked: deps.Braked, guard: deps.Guard, names: deps.Names, watching: deps.Names.CompactionWatch}
	if j.rand == nil {
		j.rand = mrand.Float64
	}
	return j
}

func (j *Job) Name() string { return Name }

// Settings are what a pass runs under, made once per load of the
// configuration: maintenance.compaction's keys, the mode, and the LLM that
// re-compacts.
type Settings struct {
	Schedule         string // maintenance.schedules.compactionRetry
	Mode             jobs.Mode
	StaleAfter       time.Duration
	Lookback         time.Duration
	BackoffInitial   time.Duration
	BackoffMax       time.Duration
	MaxAttempts      int
	StackMaxAttempts int
	LLM              llm.Config
}

// Schedule is maintenance.schedules.compactionRetry.
func (j *Job) Schedule(s Settings) string { return s.Schedule }

// Metrics are the job's collectors.
func (j *Job) Metrics() *Metrics { return j.m }

// Run is one retry pass (daemon.Job). The report is a *Report.
func (j *Job) Run(ctx context.Context, cfg Settings) (jobs.Report, error) {
	return j.Pass(ctx, cfg)
}

// settings are the configuration a pass runs under.
type settings struct {
	staleAfter, lookback time.Duration
	initial, max         time.Duration
	maxAttempts          int
	stackMaxAttempts     int // the stack's own retry cap (clawbolt: 3)
	concurrency          int
	// hold bounds how long a claimed event may take before its outcome is
	// written: a wait in this run's queue (at most two batches ahead, each
	// bounded by the LLM timeout) plus its own call. A crashed attempt is not
	// retried sooner than this.
	hold time.Duration
}

func settingsOf(c Settings) settings {
	timeout := c.LLM.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return settings{
		staleAfter:       c.StaleAfter,
		lookback:         c.Lookback,
		initial:          c.BackoffInitial,
		max:              c.BackoffMax,
		maxAttempts:      max(c.MaxAttempts, 1),
		stackMaxAttempts: max(c.StackMaxAttempts, 1),
		concurrency:      max(c.LLM.MaxConcurrency, 1),
		hold:             3*timeout + time.Minute,
	}
}

// Pass is one retry pass. It always returns a report, also with an error
// (which means some work was left for the next pass: nothing is half-written).
func (j *Job) Pass(ctx context.Context, cfg Settings) (*Report, error) {
	s := settingsOf(cfg)
	start := j.now()
	var client *llm.Client
	if j.llm != nil {
		client = j.llm.Client(cfg.LLM)
	}
	rep := newReport(start, cfg.Mode, client != nil, s)
	var err error
	if j.watching {
		err = j.watch(ctx, s, start, rep)
	} else {
		err = j.pass(ctx, cfg, s, client, start, rep)
	}
	rep.Finish(ctx, j.now().Sub(start), err)
	return rep, err
}

func (j *Job) pass(ctx context.Context, cfg Settings, s settings, client *llm.Client, start time.Time, rep *Report) error {
	before, err := j.stats(ctx, s, start)
	if err != nil {
		return fmt.Errorf("compaction: count pending events: %w", err)
	}
	rep.examined(before)
	if cfg.Mode.Shadow() {
		err := j.shadow(ctx, s, start, rep)
		j.setBacklog(rep, before, start)
		return err
	}
	runErr := j.live(ctx, s, start, client, rep)
	if rep.StackLockHeld {
		j.m.ClaimsBlocked.Inc()
	}
	// Outcomes arrive in completion order; a report reads better by event.
	slices.SortFunc(rep.Events, func(a, b EventResult) int { return cmp.Compare(a.EventID, b.EventID) })
	if n := rep.Examined.Due - rep.Claimed; n > 0 && rep.StackLockHeld {
		rep.Skipped = append(rep.Skipped, skipOf(stackBusyReason, n))
	} else if n > 0 && runErr == nil {
		rep.Skipped = append(rep.Skipped, skipOf("due at the start but taken meanwhile (by another daemon or `compact --once`, or finished by the agent)", n))
	}
	end := j.now()
	after, err := j.stats(ctx, s, end)
	if err != nil {
		return errors.Join(runErr, fmt.Errorf("compaction: count pending events after the pass: %w", err))
	}
	j.setBacklog(rep, after, end)
	if n := len(rep.LLMErrors); n > 0 {
		j.log.Warn("compaction: LLM calls failed; events rescheduled or given up", "llm_errors", rep.LLMErrors)
	}
	return runErr
}

// pendingStats is what statsSQL counts.
type pendingStats struct {
	Fresh          int          `db:"fresh"`
	Stale          int          `db:"stale"`
	BackingOff     int          `db:"backing_off"`
	BeyondLookback int          `db:"beyond_lookback"`
	OldestStale    sql.NullTime `db:"oldest_stale"`
}

func (j *Job) stats(ctx context.Context, s settings, now time.Time) (pendingStats, error) {
	var st pendingStats
	err := j.db.GetContext(ctx, &st, j.sql.Stats, now.Add(-s.staleAfter), now.Add(-s.lookback), now)
	return st, err
}

func (j *Job) setBacklog(rep *Report, st pendingStats, now time.Time) {
	age := 0.0
	if st.OldestStale.Valid {
		age = max(now.Sub(st.OldestStale.Time).Seconds(), 0)
	}
	rep.Backlog = Backlog{Stale: st.Stale, OldestStaleAgeSeconds: age, BeyondLookback: st.BeyondLookback}
	j.m.Backlog.Set(float64(st.Stale))
	j.m.OldestStale.Set(age)
	j.m.BeyondLookback.Set(float64(st.BeyondLookback))
}

// newID returns prefix followed by 24 random hex digits. Ids are not what
// makes writes idempotent (idempotency keys and row locks are), so they only
// need to be unique.
