package daemon

import (
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/compaction"
	"github.com/supersessiond/supersessiond/jobs/inline"
	"github.com/supersessiond/supersessiond/jobs/sweep"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// Settings are a configuration as the layers below the daemon take it:
// each package declares the small settings it needs (thresholds, mode,
// limits, names), and SettingsOf, here, is the one place that reads
// agent.yaml's tree to fill them in, once per load. Nothing below the
// daemon imports config.
type Settings struct {
	// Plan is what the configuration asks of the database.
	Plan schema.Plan
	// Pool is the jobs' connection pool (maintenance.database), and
	// ConsolePool the console and API's own (maintenance.http), apart
	// from the jobs': what readers hold, the jobs never wait for.
	Pool, ConsolePool store.Pool
	// Brake: automatic jobs must not change agent data now (shadowMode or
	// mutationsFrozen), asked before every write batch.
	Brake bool
	// LLM is maintenance.llm, as every job that asks a model takes it.
	LLM llm.Config
	// Engine is what the supersession engine decides under; the jobs'
	// settings below carry it where they decide.
	Engine     supersession.Settings
	Sweep      sweep.Settings
	Inline     inline.Settings
	Compaction compaction.Settings
	Tombstones tombstones.Settings
	// Audit is what the operator commands act under, and Console what the
	// review console serves under.
	Audit   audit.Settings
	Console console.Settings
}

// SettingsOf builds every layer's settings from a loaded configuration.
func SettingsOf(cfg *config.Config) Settings {
	m, p := cfg.Maintenance, cfg.Memory.PipelineV2
	mode := jobs.Mode(cfg.Mode())
	l := llm.Config{Endpoint: m.LLM.Endpoint, Model: m.LLM.Model, APIKeyEnv: m.LLM.APIKeyEnv, Timeout: m.LLM.Timeout,
		MaxConcurrency: m.LLM.MaxConcurrency, Secrets: cfg.Secrets}
	engine := supersession.Settings{
		Thresholds:       supersession.Thresholds{Min: p.Structural.SupersessionMinConfidence, Review: p.Structural.SupersessionReviewConfidence},
		Shadow:           cfg.Shadow(),
		SemanticFallback: cfg.SemanticFallback(),
		SemanticTimeout:  time.Duration(p.SemanticContradictionTimeoutMs) * time.Millisecond,
		LLM:              l,
	}
	sweepSchedule := scheduleOf(m.Schedules.Sweep, cfg.Location())
	if !cfg.SweepScheduled() {
		sweepSchedule.Spec = config.ScheduleOff
	}
	a := audit.Settings{MutationsFrozen: cfg.Frozen(), Enforcement: audit.NewEnforcement(m.Enforcement.Mode, m.Enforcement.TargetPrecision)}
	return Settings{
		Plan:        planOf(cfg),
		Pool:        store.NewPool(m.Database.MaxOpenConns, m.Database.MaxIdleConns),
		ConsolePool: store.NewPool(m.HTTP.MaxOpenConns, m.HTTP.MaxOpenConns),
		Brake:       cfg.Shadow(),
		LLM:         l,
		Engine:      engine,
		Sweep: sweep.Settings{Enabled: p.Structural.SupersessionEnabled, Schedule: sweepSchedule, Mode: mode,
			FullSweepEvery: m.Schedules.FullSweepEvery, InlineHook: cfg.InlineHookEnabled(), Engine: engine},
		Inline: inline.Settings{Enabled: cfg.InlineHookEnabled(), ListenDSN: cfg.ListenDSN(),
			PollInterval: m.InlineHook.PollInterval, Engine: engine},
		Compaction: compaction.Settings{Schedule: m.Schedules.CompactionRetry, Mode: mode,
			StaleAfter: m.Compaction.StaleAfter, Lookback: m.Compaction.Lookback,
			BackoffInitial: m.Compaction.Backoff.Initial, BackoffMax: m.Compaction.Backoff.Max,
			MaxAttempts: m.Compaction.MaxAttempts, StackMaxAttempts: m.Compaction.StackMaxAttempts, LLM: l},
		Tombstones: tombstones.Settings{Schedule: scheduleOf(m.Schedules.Tombstones, cfg.Location()), Mode: mode,
			MinAge: m.Tombstones.MinAge, BatchSize: m.Tombstones.BatchSize, KeepDeleted: m.Tombstones.KeepDeleted},
		Audit:   a,
		Console: consoleOf(cfg, a),
	}
}

// scheduleOf is a schedule spec parsed in the schedules' time zone.
func scheduleOf(spec string, loc *time.Location) jobs.Schedule {
	s := jobs.Schedule{Spec: spec}
	if spec == config.ScheduleOff {
		return s
	}
	if sched, err := config.ParseSchedule(spec); err == nil {
		s.Next = func(after time.Time) time.Time { return sched.Next(after.In(loc)) }
	}
	return s
}

// consoleOf is what the console serves under.
func consoleOf(cfg *config.Config, a audit.Settings) console.Settings {
	h := cfg.Maintenance.HTTP
	tokens := make([]console.TokenEnv, len(h.Tokens))
	for i, t := range h.Tokens {
		tokens[i] = console.TokenEnv{Name: t.Name, Env: t.Env}
	}
	return console.Settings{Audit: a, ShadowMode: cfg.Memory.PipelineV2.ShadowMode, Listen: h.Listen,
		AdminTokenEnv: h.AdminTokenEnv, Tokens: tokens, OpenReadsOnLoopback: h.OpenReadsOnLoopback,
		MaxConcurrentRequests: h.MaxConcurrentRequests, TrustedProxies: h.TrustedProxyNets()}
}

// DefaultPlan is the plan of the default configuration (tests start from
// it without reading agent.yaml's tree themselves).
func DefaultPlan() schema.Plan { return planOf(config.Default()) }

// planOf is the plan of a configuration. Each job's on-condition is SPEC
// §9's: supersession with supersessionEnabled, the scheduled jobs when
// their schedule is not off.
func planOf(cfg *config.Config) schema.Plan {
	m := cfg.Maintenance
	return schema.Plan{
		On: map[schema.Job]bool{
			schema.Supersession: cfg.Memory.PipelineV2.Structural.SupersessionEnabled,
			schema.Compaction:   m.Schedules.CompactionRetry != config.ScheduleOff,
			schema.Tombstones:   m.Schedules.Tombstones != config.ScheduleOff,
		},
		Schema: m.Database.Schema,
		Own:    m.Database.OwnSchema,
		Tables: map[string]string{
			schema.Attributes:       m.Tables.Attributes,
			schema.Aspects:          m.Tables.Aspects,
			schema.History:          m.Tables.History,
			schema.Memories:         m.Tables.Memories,
			schema.Messages:         m.Tables.Messages,
			schema.CompactionEvents: m.Tables.CompactionEvents,
			schema.Documents:        m.Tables.Documents,
			schema.DocumentSources:  m.Tables.DocumentSources,
			schema.Mem0:             m.Tables.Mem0,
		},
		Store:        schema.Store(m.Supersession.Store),
		HonchoLevels: m.Supersession.HonchoLevels,
	}
}
