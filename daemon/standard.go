package daemon

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/compaction"
	"github.com/supersessiond/supersessiond/jobs/inline"
	"github.com/supersessiond/supersessiond/jobs/sweep"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// Standard is the composition root: the one place that builds the
// supersession engine, the four jobs and the operators' commands from what
// jobs are built from. `supersessiond run` and the one-shot commands
// (sweep, compact and reconcile --once, the operator commands) build
// through it, so a job is wired the same way everywhere: the sweep and the
// inline hook share one engine, and every engine of a process (the
// console's, on its own pool) counts in the same metrics.
type Standard struct {
	deps       jobs.Deps
	policy     func() supersession.Policy
	Engine     *supersession.Engine
	Hook       *inline.Hook
	Sweep      *sweep.Job
	Compaction *compaction.Job
	Tombstones *tombstones.Job
}

// StandardOptions tune what NewStandard builds; the zero value is the
// daemon's defaults.
type StandardOptions struct {
	Tombstones tombstones.Options
	// Policy is the engine's policy in force (EnginePolicy of the
	// configuration in force), read at the start of each pass; nil: the
	// defaults.
	Policy func() supersession.Policy
}

// NewStandard builds the engine and the jobs on deps.
func NewStandard(deps jobs.Deps, opts StandardOptions) *Standard {
	engine := supersession.New(deps)
	if opts.Policy != nil {
		engine.WithPolicy(opts.Policy)
	}
	hook := inline.New(deps, engine)
	sw := sweep.New(deps, engine)
	// While the hook is off nobody else drains its outbox: a full pass
	// prunes what it covered.
	sw.PruneOutbox = hook.Prune
	return &Standard{deps: deps, policy: opts.Policy, Engine: engine, Hook: hook, Sweep: sw,
		Compaction: compaction.New(deps, compaction.Options{}), Tombstones: tombstones.New(deps, opts.Tombstones)}
}

// Ops are the operators' commands on db (a pool of their own, such as the
// console's), deciding with an engine that counts in the standard one's
// metrics.
func (s *Standard) Ops(db *sqlx.DB) *audit.Ops {
	d := s.deps
	d.DB = db
	engine := supersession.New(d)
	if s.policy != nil {
		engine.WithPolicy(s.policy)
	}
	return audit.New(db, d.Names, engine)
}

// jobs are the scheduled jobs, each given its settings from the
// configuration in force (settings makes them).
func (s *Standard) jobs(settings func(*config.Config) Settings) []Job {
	return []Job{
		scheduled[sweep.Settings]{s.Sweep, func(c *config.Config) sweep.Settings { return settings(c).Sweep }},
		scheduled[compaction.Settings]{s.Compaction, func(c *config.Config) compaction.Settings { return settings(c).Compaction }},
		scheduled[tombstones.Settings]{s.Tombstones, func(c *config.Config) tombstones.Settings { return settings(c).Tombstones }},
	}
}

// services are the long-running services.
func (s *Standard) services(settings func(*config.Config) Settings) []Service {
	return []Service{hookService{s.Hook, settings}}
}

// scheduled is a job package's job as the daemon schedules it: its
// settings are the configuration's, picked by of.
type scheduled[S any] struct {
	job interface {
		Name() string
		Schedule(S) string
		Run(context.Context, S) (jobs.Report, error)
	}
	of func(*config.Config) S
}

func (j scheduled[S]) Name() string                       { return j.job.Name() }
func (j scheduled[S]) Schedule(cfg *config.Config) string { return j.job.Schedule(j.of(cfg)) }
func (j scheduled[S]) Run(ctx context.Context, cfg *config.Config) (jobs.Report, error) {
	return j.job.Run(ctx, j.of(cfg))
}

// hookService is the inline hook as the daemon runs it: before each drain
// it reads the settings of the configuration in force.
type hookService struct {
	*inline.Hook
	settings func(*config.Config) Settings
}

func (h hookService) Enabled(cfg *config.Config) bool { return h.Hook.Enabled(h.settings(cfg).Inline) }
func (h hookService) Run(ctx context.Context, current func() *config.Config) error {
	return h.Hook.Run(ctx, func() inline.Settings { return h.settings(current()).Inline })
}
