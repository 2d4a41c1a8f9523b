package config

import (
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/internal/redact"
)

// Config is the part of the agent's agent.yaml this daemon reads: the agent's
// own supersession keys under memory.pipelineV2 (Signet's names) and the
// daemon's settings under maintenance. A Config is immutable once loaded; a
// reload builds a new one.
//
// Each key is declared once, here: its name (key), its default, the rule
// its value obeys on its own (check: range=lo..hi, positive, nonnegative,
// oneof=a|b), whether a running daemon can apply it (reload:"restart" when
// it cannot; on a section, for every key below it), and whether it changes
// the judgment (judgment:"always", or "semantic": while the semantic
// fallback is in effect), so that a sweep decides everything again when it
// changes (SPEC §11). Loading, environment overrides, validation messages,
// Default(), what a reload keeps (Reload) and the judgment (Judgment) all
// derive from these tags; rules that relate two keys live in validate and
// name the keys by their fields.
type Config struct {
	Memory      Memory      `key:"memory"`
	Maintenance Maintenance `key:"maintenance"`
}

type Memory struct {
	PipelineV2 PipelineV2 `key:"pipelineV2"`
}

type PipelineV2 struct {
	ShadowMode                     bool       `key:"shadowMode" default:"false" judgment:"always"`
	MutationsFrozen                bool       `key:"mutationsFrozen" default:"false" judgment:"always"`
	SemanticContradictionEnabled   bool       `key:"semanticContradictionEnabled" default:"true" judgment:"semantic"`
	SemanticContradictionTimeoutMs int        `key:"semanticContradictionTimeoutMs" default:"120000" check:"positive"`
	Structural                     Structural `key:"structural"`
}

type Structural struct {
	SupersessionEnabled          bool    `key:"supersessionEnabled" default:"true"`
	SupersessionSweepEnabled     bool    `key:"supersessionSweepEnabled" default:"true"`
	SupersessionSemanticFallback bool    `key:"supersessionSemanticFallback" default:"false" judgment:"semantic"`
	SupersessionMinConfidence    float64 `key:"supersessionMinConfidence" default:"0.7" check:"range=0..1" judgment:"always"`
	SupersessionReviewConfidence float64 `key:"supersessionReviewConfidence" default:"0.5" check:"range=0..1" judgment:"always"`
}

// Maintenance is the daemon's own section. The database, the tables' names,
// the store the supersession engine decides about, and the HTTP listener
// (with the console and its credentials) are set up once, at startup: a
// reload keeps them and says a restart is needed.
type Maintenance struct {
	Database     Database     `key:"database" reload:"restart"`
	Tables       Tables       `key:"tables" reload:"restart"`
	Supersession Supersession `key:"supersession" reload:"restart"`
	Schedules    Schedules    `key:"schedules"`
	InlineHook   InlineHook   `key:"inlineHook"`
	Compaction   Compaction   `key:"compaction"`
	Tombstones   Tombstones   `key:"tombstones"`
	LLM          LLM          `key:"llm"`
	// Enforcement decides which live decisions are applied without a
	// human (SPEC §13).
	Enforcement Enforcement `key:"enforcement"`
	HTTP        HTTP        `key:"http" reload:"restart"`
	Log         Log         `key:"log"`
}

type Database struct {
	URL       string `key:"url" default:"postgres://supersessiond@127.0.0.1:5432/agent?sslmode=disable"`
	ListenURL string `key:"listenUrl" default:""`
	// MaxOpenConns and MaxIdleConns bound the daemon's connection pool (the
	// LISTEN connection of the inline hook comes on top): the agent's own
	// writes must never find the server full because of us.
	MaxOpenConns int `key:"maxOpenConns" default:"3" check:"range=1..100"`
	MaxIdleConns int `key:"maxIdleConns" default:"3" check:"range=0..100"`
	// Schema holds the agent's tables ("" = the connection's search path);
	// OwnSchema the daemon's own.
	Schema    string `key:"schema" default:""`
	OwnSchema string `key:"ownSchema" default:"supersessiond"`
}

// Tables are the physical names of the agent's tables, "name" or
// "schema.name"; the defaults are the reference schema's names (SPEC §4).
type Tables struct {
	Attributes       string `key:"attributes" default:"entity_attributes"`
	Aspects          string `key:"aspects" default:"entity_aspects"`
	History          string `key:"history" default:"memory_history"`
	Memories         string `key:"memories" default:"memories"`
	Messages         string `key:"messages" default:"messages"`
	CompactionEvents string `key:"compactionEvents" default:"compaction_events"`
	Documents        string `key:"documents" default:"documents"`
	DocumentSources  string `key:"documentSources" default:"document_sources"`
	// Mem0 is mem0's pgvector collection (id uuid, vector, payload jsonb):
	// its collection_name, "mem0" unless the stack sets another.
	Mem0 string `key:"mem0" default:"mem0"`
}

// Supersession says where the supersession engine finds the facts it
// decides about (SPEC §14): section 4's attribute graph, Honcho's
// documents, or mem0's pgvector collection.
type Supersession struct {
	Store string `key:"store" default:"attributes" check:"oneof=attributes|honcho|mem0" judgment:"always"`
	// HonchoLevels are the documents.level values that take part when the
	// store is honcho: explicit observations by default; Honcho's own
	// dreamer writes the deductive, inductive and contradiction ones. A new
	// set is a new judgment: the next sweep is a full pass, so documents of
	// a level just added are decided too.
	HonchoLevels List `key:"honchoLevels" default:"explicit" judgment:"always"`
}

// The stores maintenance.supersession.store names.
const (
	StoreAttributes = "attributes"
	StoreHoncho     = "honcho"
	StoreMem0       = "mem0"
)

// HonchoLevels are the values Honcho writes to documents.level
// (DocumentLevel): what maintenance.supersession.honchoLevels may name.
var HonchoLevels = []string{"explicit", "deductive", "inductive", "contradiction"}

// List is a key whose value is a list of words: in agent.yaml a YAML list
// (or one word), from the environment "a,b,c".
type List []string

func (l List) String() string { return "[" + strings.Join(l, ",") + "]" }

// Schedules are standard 5-field cron specs (descriptors such as @hourly and
// @every 10m are accepted too); "off" disables a job's schedule.
type Schedules struct {
	Timezone        string `key:"timezone" default:"UTC"`
	Sweep           string `key:"sweep" default:"*/30 * * * *"`
	CompactionRetry string `key:"compactionRetry" default:"*/5 * * * *"`
	Tombstones      string `key:"tombstones" default:"17 * * * *"`
	// FullSweepEvery: a full sweep at least this often; the scheduled
	// sweeps in between examine only the aspects that changed (SPEC §11).
	FullSweepEvery time.Duration `key:"fullSweepEvery" default:"168h" check:"positive"`
}

type InlineHook struct {
	Enabled      bool          `key:"enabled" default:"true"`
	PollInterval time.Duration `key:"pollInterval" default:"10s" check:"positive"`
}

type Compaction struct {
	StaleAfter  time.Duration `key:"staleAfter" default:"10m" check:"positive"`
	MaxAttempts int           `key:"maxAttempts" default:"5" check:"range=1..100"`
	Backoff     Backoff       `key:"backoff"`
	Lookback    time.Duration `key:"lookback" default:"168h" check:"positive"`
	// StackMaxAttempts is the agent stack's own cap on its compaction
	// retries, counted in the same retry_count (clawbolt's startup recovery
	// stops at 3 and leaves the event pending for good). Where the daemon
	// cannot re-compact and only watches, an event at the cap is one nobody
	// will retry: counted, listed and alerted on.
	StackMaxAttempts int `key:"stackMaxAttempts" default:"3" check:"range=1..100"`
}

type Backoff struct {
	Initial time.Duration `key:"initial" default:"1m" check:"positive"`
	Max     time.Duration `key:"max" default:"1h" check:"positive"`
}

type Tombstones struct {
	MinAge    time.Duration `key:"minAge" default:"5m" check:"nonnegative"`
	BatchSize int           `key:"batchSize" default:"500" check:"range=1..100000"`
	// KeepDeleted is how long the whole row of a hard-deleted document is
	// kept in the daemon's own schema, so that a mistaken pass can be
	// restored; its id, workspace and content digest are kept for good.
	// 0 keeps no copy.
	KeepDeleted time.Duration `key:"keepDeleted" default:"168h" check:"nonnegative"`
}

type LLM struct {
	Endpoint       string        `key:"endpoint" default:""`
	Model          string        `key:"model" default:"" judgment:"semantic"`
	APIKeyEnv      string        `key:"apiKeyEnv" default:"OPENAI_API_KEY"`
	Timeout        time.Duration `key:"timeout" default:"30s" check:"positive"`
	MaxConcurrency int           `key:"maxConcurrency" default:"4" check:"range=1..256"`
	// MaxStatements is the most statements one window of an aspect shows
	// the LLM (SPEC §13); a larger aspect is asked in several windows.
	MaxStatements int `key:"maxStatements" default:"24" check:"range=2..200" judgment:"semantic"`
	// Gate says which pairs the heuristics left undecided reach the LLM:
	// every one of the aspect, or (overlap, the Signet spec's rule) only
	// those sharing three content tokens.
	Gate string `key:"gate" default:"aspect" check:"oneof=aspect|overlap" judgment:"semantic"`
	// MaxRequestsPerHour bounds the semantic requests of the daemon; a
	// window over the budget is deferred to a later run, never dropped.
	MaxRequestsPerHour int `key:"maxRequestsPerHour" default:"600" check:"range=1..1000000"`
}

// Enforcement is maintenance.enforcement: under threshold (Signet's
// behaviour) a live decision at or above supersessionMinConfidence is
// applied; under earned, only when its rule (a heuristic signal, or the LLM
// judge of one model) has earned it: the 95% Wilson lower bound of its
// reviewed precision is at least TargetPrecision (SPEC §13).
type Enforcement struct {
	Mode            string  `key:"mode" default:"threshold" check:"oneof=threshold|earned" judgment:"always"`
	TargetPrecision float64 `key:"targetPrecision" default:"0.9" check:"range=0.5..0.999" judgment:"always"`
}

type HTTP struct {
	Listen string `key:"listen" default:"127.0.0.1:9464"`
	// AdminTokenEnv names the environment variable holding the token that
	// console and API changes need; the token itself is never in a file
	// the daemon reads, nor in its log.
	AdminTokenEnv string `key:"adminTokenEnv" default:"SUPERSESSIOND_ADMIN_TOKEN"`
	// Tokens are named tokens beside the admin token, one per operator, so
	// that the audit trail says who decided (SPEC §10). Each names the
	// environment variable holding its token.
	Tokens Tokens `key:"tokens" default:""`
	// OpenReadsOnLoopback lets a request from this host read the console
	// and API without a token, when its Host header names the listener
	// itself (so a page served elsewhere cannot read it by DNS rebinding).
	// Off by default: reads of the agent's memory need a token.
	OpenReadsOnLoopback bool `key:"openReadsOnLoopback" default:"false"`
	// TrustedProxies are the addresses (IPs or CIDRs, comma-separated) of
	// reverse proxies whose X-Forwarded-For names the client, for the
	// per-client limit on wrong tokens. Empty: the peer address is the
	// client, whatever the headers say.
	TrustedProxies string `key:"trustedProxies" default:""`
	// MaxConcurrentRequests bounds the console and API requests served at
	// once; more wait a moment, then get 503 with Retry-After.
	MaxConcurrentRequests int `key:"maxConcurrentRequests" default:"4" check:"range=1..256"`
	// MaxOpenConns is the console and API's own connection pool, apart
	// from the jobs': readers never hold a connection the jobs, the
	// watchdog or /readyz need.
	MaxOpenConns int `key:"maxOpenConns" default:"2" check:"range=1..32"`
}

// NamedToken is an operator's token: the name the audit trail records and
// the environment variable holding the token.
type NamedToken struct {
	Name string
	Env  string
}

// Tokens are maintenance.http.tokens: in agent.yaml a list of {name, env};
// from the environment "name=ENV,name=ENV".
type Tokens []NamedToken

func (t Tokens) String() string {
	parts := make([]string, len(t))
	for i, n := range t {
		parts[i] = n.Name + "=" + n.Env
	}
	return "[" + strings.Join(parts, ",") + "]"
}

type Log struct {
	Level string `key:"level" default:"info" check:"oneof=debug|info|warn|error"`
	// Level changes on reload; the encoder is built once.
	Format string `key:"format" default:"json" check:"oneof=json|text" reload:"restart"`
}

// ScheduleOff is the schedule value that disables a scheduled job.
const ScheduleOff = "off"

// DefaultPath is where the daemon looks when neither --config nor
// $SUPERSESSIOND_CONFIG names a file.
const DefaultPath = "/etc/supersessiond/agent.yaml"

// Default returns the built-in defaults (the default tags), the values
// agent.yaml.example documents.
func Default() *Config {
	c := &Config{}
	newSchema().setDefaults(c)
	return c
}

// Shadow reports whether automatic jobs must only propose and report:
// shadowMode, or the mutationsFrozen emergency brake.
func (c *Config) Shadow() bool {
	return c.Memory.PipelineV2.ShadowMode || c.Memory.PipelineV2.MutationsFrozen
}

// Mode is how automatic jobs may act under a configuration.
type Mode string

const (
	ModeLive   Mode = "live"   // they change agent data
	ModeShadow Mode = "shadow" // they only propose and report
	ModeFrozen Mode = "frozen" // the emergency brake: like shadow, and operator commands refuse too
)

// Mode is the configuration's mode.
func (c *Config) Mode() Mode {
	switch {
	case c.Frozen():
		return ModeFrozen
	case c.Shadow():
		return ModeShadow
	}
	return ModeLive
}

// Enforcement modes (maintenance.enforcement.mode).
const (
	EnforceThreshold = "threshold"
	EnforceEarned    = "earned"
)

// Frozen reports the emergency brake: nothing, not even an operator command,
// may change agent data.
func (c *Config) Frozen() bool { return c.Memory.PipelineV2.MutationsFrozen }

// LLMConfigured reports whether an LLM endpoint and model are set.
func (c *Config) LLMConfigured() bool {
	return c.Maintenance.LLM.Endpoint != "" && c.Maintenance.LLM.Model != ""
}

// LLMGate is maintenance.llm.gate as the engine names it (aspect or
// overlap).
func (c *Config) LLMGate() string { return strings.ToLower(c.Maintenance.LLM.Gate) }

// Earned reports whether maintenance.enforcement.mode is earned.
func (c *Config) Earned() bool {
	return strings.EqualFold(c.Maintenance.Enforcement.Mode, EnforceEarned)
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

// Secrets are the values of the credentials this configuration names: the
// LLM's API key, the admin token and the operators' named tokens (read
// through getenv from the variables maintenance.llm.apiKeyEnv,
// maintenance.http.adminTokenEnv and maintenance.http.tokens name) and the
// database passwords. What the LLM returns is masked of them (package
// redact) before it is stored, logged or shown.
func (c *Config) Secrets(getenv func(string) string) []string {
	var out []string
	envs := []string{c.Maintenance.LLM.APIKeyEnv, c.Maintenance.HTTP.AdminTokenEnv}
	for _, t := range c.Maintenance.HTTP.Tokens {
		envs = append(envs, t.Env)
	}
	for _, env := range envs {
		if env != "" {
			if v := getenv(env); v != "" {
				out = append(out, v)
			}
		}
	}
	out = append(out, redact.DSNSecrets(c.Maintenance.Database.URL)...)
	return append(out, redact.DSNSecrets(c.Maintenance.Database.ListenURL)...)
}
