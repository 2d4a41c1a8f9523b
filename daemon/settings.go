package daemon

import (
	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
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
}

// SettingsOf builds every layer's settings from a loaded configuration.
func SettingsOf(cfg *config.Config) Settings {
	m := cfg.Maintenance
	return Settings{
		Plan:        planOf(cfg),
		Pool:        store.NewPool(m.Database.MaxOpenConns, m.Database.MaxIdleConns),
		ConsolePool: store.NewPool(m.HTTP.MaxOpenConns, m.HTTP.MaxOpenConns),
	}
}

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
