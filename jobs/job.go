// Package jobs is what every scheduled job and long-running service of the
// daemon is built from, and what a run of one says it did. One Deps for all
// of them: the database and its names, the logger, the metrics registry, the
// LLM, the clock, and the brake in force; so a job is built the same way by
// the daemon, by its one-shot command and by its tests. What a run decides
// under comes with the run, as the job package's own Settings (the daemon
// makes them from agent.yaml once per load: nothing here reads config).
package jobs

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
)

// Deps are the dependencies a job or service is built from. Zero values are
// usable: nil Names is the reference schema, a nil Logger discards, a nil
// Registry counts without exporting, a nil LLM has no model, a nil Now is
// the wall clock, a nil Brake never engages the brake mid-run, and a nil
// Guard never waits.
type Deps struct {
	DB       *sqlx.DB
	Names    *schema.Names
	Logger   *slog.Logger
	Registry prometheus.Registerer
	LLM      *llm.Provider
	Now      func() time.Time
	// Brake reports whether the configuration in force now forbids
	// changing agent data (shadowMode, mutationsFrozen). A run decides
	// under the settings it was given, but asks this before each write
	// batch.
	Brake func() bool
	// Guard, when set, is waited on before each batch that may open a
	// connection, so a crowded server's last slots stay the agent's (nil:
	// no guard).
	Guard *store.Guard
}

// WithDefaults fills the zero values in.
func (d Deps) WithDefaults() Deps {
	if d.Names == nil {
		d.Names = schema.ReferenceNames()
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// Braked reports whether the configuration in force now forbids changing
// agent data (false when there is no way to know).
func (d Deps) Braked() bool { return d.Brake != nil && d.Brake() }

// Mode is how automatic jobs may act under a configuration.
type Mode string

const (
	ModeLive   Mode = "live"   // they change agent data
	ModeShadow Mode = "shadow" // they only propose and report
	ModeFrozen Mode = "frozen" // the emergency brake: like shadow, and operator commands refuse too
)

// Shadow reports whether automatic jobs only propose and report.
func (m Mode) Shadow() bool { return m != ModeLive }

// ScheduleOff is the schedule spec of a job that is not scheduled.
const ScheduleOff = "off"

// Schedule is a scheduled job's maintenance.schedules entry as the daemon
// parsed it: its spec ("off": not scheduled) and, when the spec parses,
// the time of its next tick after a given time (in the schedules' time
// zone).
type Schedule struct {
	Spec string
	Next func(after time.Time) time.Time // nil: the spec does not parse
}

// Report is what a run says it did: printed as text on a terminal, encoded
// as one JSON document by --json, logged by the daemon.
type Report interface {
	Text() string
}

// Run is what every job's report begins with, and the convention every
// --json report follows: the same names for the same things (job, run_id,
// mode, started_at, complete, stopped, error, skipped), and durations in
// seconds, as numbers, under names that end in _seconds.
type Run struct {
	Job   string `json:"job"`
	RunID string `json:"run_id"`
	// Mode is the configuration's: live, shadow or frozen (the automatic
	// jobs change agent data only in live).
	Mode            Mode      `json:"mode"`
	StartedAt       time.Time `json:"started_at"`
	DurationSeconds float64   `json:"duration_seconds"`
	// Complete is true when the pass reached its end. Stopped says why it
	// did not: "budget" (its time budget ran out; the next run goes on),
	// "cancelled", or "error" (see Error).
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped"`
	Error    string `json:"error,omitempty"`
}

// Why a pass stopped before its end (Run.Stopped).
const (
	StoppedBudget    = "budget"
	StoppedCancelled = "cancelled"
	StoppedError     = "error"
)

// NewRun starts the record of a run of job, with a fresh run id.
func NewRun(job string, mode Mode, start time.Time) Run {
	return Run{Job: job, RunID: ident.Random("", 8), Mode: mode, StartedAt: start.UTC()}
}

// Finish records how long the run took and, when err is not nil, why it
// stopped (ctx tells a cancellation from a failure). A run that ends with
// no error and no other reason to stop is complete.
func (r *Run) Finish(ctx context.Context, took time.Duration, err error) {
	r.DurationSeconds = Seconds(took)
	switch {
	case err != nil && ctx.Err() != nil:
		r.Stopped, r.Error = StoppedCancelled, err.Error()
	case err != nil:
		r.Stopped, r.Error = StoppedError, err.Error()
	}
	r.Complete = r.Stopped == ""
}

// Duration is how long the run took.
func (r *Run) Duration() time.Duration {
	return time.Duration(r.DurationSeconds * float64(time.Second))
}

// Seconds is a duration in seconds, rounded to the microsecond.
func Seconds(d time.Duration) float64 { return d.Round(time.Microsecond).Seconds() }

// Skip counts things a run left alone, and why; every report lists them
// under "skipped", sorted by reason.
type Skip struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Skips lists counts by reason, sorted by reason; never nil.
func Skips(counts map[string]int) []Skip {
	out := make([]Skip, 0, len(counts))
	for reason, n := range counts {
		out = append(out, Skip{Reason: reason, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}
