package config

import (
	"time"
)

// Config is the part of the agent's agent.yaml this daemon reads: the agent's
// own supersession keys under memory.pipelineV2 (Signet's names) and the
// daemon's settings under maintenance. A Config is immutable once loaded; a
// reload builds a new one.
type Config struct {
	Memory      Memory      `koanf:"memory"`
	Maintenance Maintenance `koanf:"maintenance"`
}

type Memory struct {
	PipelineV2 PipelineV2 `koanf:"pipelineV2"`
}

type PipelineV2 struct {
	ShadowMode                     bool       `koanf:"shadowMode"`
	MutationsFrozen                bool       `koanf:"mutationsFrozen"`
	SemanticContradictionEnabled   bool       `koanf:"semanticContradictionEnabled"`
	SemanticContradictionTimeoutMs int        `koanf:"semanticContradictionTimeoutMs"`
	Structural                     Structural `koanf:"structural"`
}

type Structural struct {
	SupersessionEnabled          bool    `koanf:"supersessionEnabled"`
	SupersessionSweepEnabled     bool    `koanf:"supersessionSweepEnabled"`
	SupersessionSemanticFallback bool    `koanf:"supersessionSemanticFallback"`
	SupersessionMinConfidence    float64 `koanf:"supersessionMinConfidence"`
	SupersessionReviewConfidence float64 `koanf:"supersessionReviewConfidence"`
}

type Maintenance struct {
	Database   Database   `koanf:"database"`
	Tables     Tables     `koanf:"tables"`
	Schedules  Schedules  `koanf:"schedules"`
	InlineHook InlineHook `koanf:"inlineHook"`
	Compaction Compaction `koanf:"compaction"`
	Tombstones Tombstones `koanf:"tombstones"`
	LLM        LLM        `koanf:"llm"`
	HTTP       HTTP       `koanf:"http"`
	Log        Log        `koanf:"log"`
}

type Database struct {
	URL       string `koanf:"url"`
	ListenURL string `koanf:"listenUrl"`
	// MaxOpenConns and MaxIdleConns bound the daemon's connection pool (the
	// LISTEN connection of the inline hook comes on top): the agent's own
	// writes must never find the server full because of us.
	MaxOpenConns int `koanf:"maxOpenConns"`
	MaxIdleConns int `koanf:"maxIdleConns"`
	// Schema holds the agent's tables ("" = the connection's search path);
	// OwnSchema the daemon's own.
	Schema    string `koanf:"schema"`
	OwnSchema string `koanf:"ownSchema"`
}

// Tables are the physical names of the agent's tables, "name" or
// "schema.name"; the defaults are the reference schema's names (SPEC §4).
type Tables struct {
	Attributes       string `koanf:"attributes"`
	Aspects          string `koanf:"aspects"`
	History          string `koanf:"history"`
	Memories         string `koanf:"memories"`
	Messages         string `koanf:"messages"`
	CompactionEvents string `koanf:"compactionEvents"`
	Documents        string `koanf:"documents"`
	DocumentSources  string `koanf:"documentSources"`
}

// Schedules are standard 5-field cron specs (descriptors such as @hourly and
// @every 10m are accepted too); "off" disables a job's schedule.
type Schedules struct {
	Timezone        string `koanf:"timezone"`
	Sweep           string `koanf:"sweep"`
	CompactionRetry string `koanf:"compactionRetry"`
	Tombstones      string `koanf:"tombstones"`
}

type InlineHook struct {
	Enabled      bool          `koanf:"enabled"`
	PollInterval time.Duration `koanf:"pollInterval"`
}

type Compaction struct {
	StaleAfter  time.Duration `koanf:"staleAfter"`
	MaxAttempts int           `koanf:"maxAttempts"`
	Backoff     Backoff       `koanf:"backoff"`
	Lookback    time.Duration `koanf:"lookback"`
}

type Backoff struct {
	Initial time.Duration `koanf:"initial"`
	Max     time.Duration `koanf:"max"`
}

type Tombstones struct {
	MinAge    time.Duration `koanf:"minAge"`
	BatchSize int           `koanf:"batchSize"`
}

type LLM struct {
	Endpoint       string        `koanf:"endpoint"`
	Model          string        `koanf:"model"`
	APIKeyEnv      string        `koanf:"apiKeyEnv"`
	Timeout        time.Duration `koanf:"timeout"`
	MaxConcurrency int           `koanf:"maxConcurrency"`
}

type HTTP struct {
	Listen string `koanf:"listen"`
	// AdminTokenEnv names the environment variable holding the token that
	// console and API changes need; the token itself is never in a file
	// the daemon reads, nor in its log.
	AdminTokenEnv string `koanf:"adminTokenEnv"`
}

type Log struct {
	Level  string `koanf:"level"`
	Format string `koanf:"format"`
}

// ScheduleOff is the schedule value that disables a scheduled job.
const ScheduleOff = "off"

// DefaultPath is where the daemon looks when neither --config nor
// $SUPERSESSIOND_CONFIG names a file.
const DefaultPath = "/etc/supersessiond/agent.yaml"

// Default returns the built-in defaults, the values agent.yaml.example
// documents.
func Default() *Config {
	return &Config{
		Memory: Memory{PipelineV2: PipelineV2{
			ShadowMode:                     false,
			MutationsFrozen:                false,
			SemanticContradictionEnabled:   true,
			SemanticContradictionTimeoutMs: 120000,
			Structural: Structural{
				SupersessionEnabled:          true,
				SupersessionSweepEnabled:     true,
				SupersessionSemanticFallback: false,
				SupersessionMinConfidence:    0.7,
				SupersessionReviewConfidence: 0.5,
			},
		}},
		Maintenance: Maintenance{
			Database: Database{
				URL:          "postgres://supersessiond@127.0.0.1:5432/agent?sslmode=disable",
				MaxOpenConns: 3,
				MaxIdleConns: 1,
				OwnSchema:    "supersessiond",
			},
			Tables: Tables{
				Attributes: "entity_attributes", Aspects: "entity_aspects", History: "memory_history",
				Memories: "memories", Messages: "messages", CompactionEvents: "compaction_events",
				Documents: "documents", DocumentSources: "document_sources",
			},
			Schedules: Schedules{
				Timezone:        "UTC",
				Sweep:           "*/30 * * * *",
				CompactionRetry: "*/5 * * * *",
				Tombstones:      "17 * * * *",
			},
			InlineHook: InlineHook{Enabled: true, PollInterval: 10 * time.Second},
			Compaction: Compaction{
				StaleAfter:  10 * time.Minute,
				MaxAttempts: 5,
				Backoff:     Backoff{Initial: time.Minute, Max: time.Hour},
				Lookback:    168 * time.Hour,
			},
			Tombstones: Tombstones{MinAge: 5 * time.Minute, BatchSize: 500},
			LLM: LLM{
				APIKeyEnv:      "OPENAI_API_KEY",
				Timeout:        30 * time.Second,
				MaxConcurrency: 4,
			},
			HTTP: HTTP{Listen: "127.0.0.1:9464", AdminTokenEnv: "SUPERSESSIOND_ADMIN_TOKEN"},
			Log:  Log{Level: "info", Format: "json"},
		},
	}
}

// Shadow reports whether automatic jobs must only propose and report:
// shadowMode, or the mutationsFrozen emergency brake.
func (c *Config) Shadow() bool {
	return c.Memory.PipelineV2.ShadowMode || c.Memory.PipelineV2.MutationsFrozen
}

// Frozen reports the emergency brake: nothing, not even an operator command,
// may change agent data.
func (c *Config) Frozen() bool { return c.Memory.PipelineV2.MutationsFrozen }

// LLMConfigured reports whether an LLM endpoint and model are set.
func (c *Config) LLMConfigured() bool {
	return c.Maintenance.LLM.Endpoint != "" && c.Maintenance.LLM.Model != ""
}

// SemanticFallback reports whether the supersession decision may ask the LLM:
// both semantic flags on and an LLM configured.
func (c *Config) SemanticFallback() bool {
	p := c.Memory.PipelineV2
	return p.SemanticContradictionEnabled && p.Structural.SupersessionSemanticFallback && c.LLMConfigured()
}

// SweepScheduled reports whether the periodic sweep should be scheduled.
func (c *Config) SweepScheduled() bool {
	s := c.Memory.PipelineV2.Structural
	return s.SupersessionEnabled && s.SupersessionSweepEnabled && c.Maintenance.Schedules.Sweep != ScheduleOff
}

// InlineHookEnabled reports whether the post-classify hook should run.
func (c *Config) InlineHookEnabled() bool {
	return c.Memory.PipelineV2.Structural.SupersessionEnabled && c.Maintenance.InlineHook.Enabled
}

// ListenDSN is the URL for the LISTEN connection: listenUrl, else url.
func (c *Config) ListenDSN() string {
	if c.Maintenance.Database.ListenURL != "" {
		return c.Maintenance.Database.ListenURL
	}
	return c.Maintenance.Database.URL
}

// Location is the schedules' time zone. Validation guarantees it loads.
func (c *Config) Location() *time.Location {
	loc, err := time.LoadLocation(c.Maintenance.Schedules.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}
