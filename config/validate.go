package config

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/robfig/cron/v3"

	"github.com/supersessiond/supersessiond/internal/redact"
)

// Problem is one thing wrong with a configuration: the key path, and the rule
// it breaks with the offending value.
type Problem struct {
	Key  string
	Rule string
}

func (p Problem) String() string {
	if p.Key == "" {
		return p.Rule
	}
	return p.Key + ": " + p.Rule
}

// Error is an invalid configuration. The CLI maps it to exit code 2.
type Error struct {
	Path     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration")
	if e.Path != "" {
		b.WriteString(" (" + e.Path + ")")
	}
	if len(e.Problems) == 1 {
		b.WriteString(": " + e.Problems[0].String())
		return b.String()
	}
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// minEvery is the shortest "@every" interval accepted: cron rounds anything
// shorter up to a second, and a job every second is a mistake, not a plan.
const minEvery = time.Second

// ParseSchedule parses a 5-field cron spec (or a descriptor like @hourly).
func ParseSchedule(spec string) (cron.Schedule, error) {
	trimmed := strings.TrimSpace(spec)
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return nil, fmt.Errorf("per-schedule time zones are not supported: set maintenance.schedules.timezone")
	}
	if rest, ok := strings.CutPrefix(trimmed, "@every"); ok {
		// robfig/cron takes negative and zero intervals and runs them every
		// second; refuse them here.
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, fmt.Errorf("@every needs a duration such as 10m or 1h: %v", err)
		}
		if d < minEvery {
			return nil, fmt.Errorf("@every %s is not a positive interval of at least %s", d, minEvery)
		}
	}
	return scheduleParser.Parse(spec)
}

func (c *Config) validate(s *schema) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Key: path, Rule: fmt.Sprintf(format, args...)})
	}
	val := func(path string) any { return s.leaves[strings.ToLower(path)].get(c) }

	p := c.Memory.PipelineV2
	const st = "memory.pipelineV2.structural."
	for _, k := range []string{"supersessionMinConfidence", "supersessionReviewConfidence"} {
		if v := val(st + k).(float64); v < 0 || v > 1 {
			add(st+k, "%v is out of range: must be between 0 and 1", v)
		}
	}
	if p.Structural.SupersessionReviewConfidence > p.Structural.SupersessionMinConfidence {
		add(st+"supersessionReviewConfidence", "%v is above supersessionMinConfidence (%v): the review band must lie below the apply threshold",
			p.Structural.SupersessionReviewConfidence, p.Structural.SupersessionMinConfidence)
	}
	if p.SemanticContradictionTimeoutMs <= 0 {
		add("memory.pipelineV2.semanticContradictionTimeoutMs", "%d must be a positive number of milliseconds", p.SemanticContradictionTimeoutMs)
	}

	m := c.Maintenance
	if m.Database.URL == "" {
		add("maintenance.database.url", "is empty: set it, or set %s", EnvDatabaseURL)
	} else if err := checkDSN(m.Database.URL); err != nil {
		add("maintenance.database.url", "%v", err)
	}
	if m.Database.ListenURL != "" {
		if err := checkDSN(m.Database.ListenURL); err != nil {
			add("maintenance.database.listenUrl", "%v", err)
		}
	}
	ps = append(ps, validateNames(m)...)
	if m.Database.MaxOpenConns < 1 || m.Database.MaxOpenConns > 100 {
		add("maintenance.database.maxOpenConns", "%d is out of range: must be between 1 and 100", m.Database.MaxOpenConns)
	}
	if m.Database.MaxIdleConns < 0 || m.Database.MaxIdleConns > m.Database.MaxOpenConns {
		add("maintenance.database.maxIdleConns", "%d is out of range: must be between 0 and maxOpenConns (%d)", m.Database.MaxIdleConns, m.Database.MaxOpenConns)
	}

	if _, err := time.LoadLocation(m.Schedules.Timezone); err != nil || m.Schedules.Timezone == "" {
		add("maintenance.schedules.timezone", "%q is not a known time zone: use an IANA name like UTC or Europe/Berlin", m.Schedules.Timezone)
	}
	for _, k := range []struct{ key, spec string }{
		{"sweep", m.Schedules.Sweep},
		{"compactionRetry", m.Schedules.CompactionRetry},
		{"tombstones", m.Schedules.Tombstones},
	} {
		if k.spec == ScheduleOff {
			continue
		}
		if _, err := ParseSchedule(k.spec); err != nil {
			add("maintenance.schedules."+k.key, "%q is not a valid cron spec (5 fields: minute hour day-of-month month day-of-week, or %q): %v", k.spec, ScheduleOff, err)
		}
	}

	positive := []struct {
		key string
		d   time.Duration
	}{
		{"maintenance.inlineHook.pollInterval", m.InlineHook.PollInterval},
		{"maintenance.compaction.staleAfter", m.Compaction.StaleAfter},
		{"maintenance.compaction.backoff.initial", m.Compaction.Backoff.Initial},
		{"maintenance.compaction.backoff.max", m.Compaction.Backoff.Max},
		{"maintenance.compaction.lookback", m.Compaction.Lookback},
		{"maintenance.llm.timeout", m.LLM.Timeout},
	}
	for _, k := range positive {
		if k.d <= 0 {
			add(k.key, "%s must be a positive duration", k.d)
		}
	}
	if m.Tombstones.MinAge < 0 {
		add("maintenance.tombstones.minAge", "%s must not be negative", m.Tombstones.MinAge)
	}
	if m.Compaction.Backoff.Max < m.Compaction.Backoff.Initial {
		add("maintenance.compaction.backoff.max", "%s is below backoff.initial (%s)", m.Compaction.Backoff.Max, m.Compaction.Backoff.Initial)
	}
	if m.Compaction.Lookback <= m.Compaction.StaleAfter && m.Compaction.Lookback > 0 {
		add("maintenance.compaction.lookback", "%s must be longer than staleAfter (%s), or no event is ever old enough and recent enough to retry",
			m.Compaction.Lookback, m.Compaction.StaleAfter)
	}
	if m.Compaction.MaxAttempts < 1 || m.Compaction.MaxAttempts > 100 {
		add("maintenance.compaction.maxAttempts", "%d is out of range: must be between 1 and 100", m.Compaction.MaxAttempts)
	}
	if m.Tombstones.BatchSize < 1 || m.Tombstones.BatchSize > 100000 {
		add("maintenance.tombstones.batchSize", "%d is out of range: must be between 1 and 100000", m.Tombstones.BatchSize)
	}
	if m.LLM.MaxConcurrency < 1 || m.LLM.MaxConcurrency > 256 {
		add("maintenance.llm.maxConcurrency", "%d is out of range: must be between 1 and 256", m.LLM.MaxConcurrency)
	}
	if m.LLM.Endpoint != "" {
		u, err := url.Parse(m.LLM.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("maintenance.llm.endpoint", "%q is not an http(s) URL (e.g. http://127.0.0.1:11434/v1)", redact.URL(m.LLM.Endpoint))
		}
		if m.LLM.Model == "" {
			add("maintenance.llm.model", "is empty but maintenance.llm.endpoint is set: name the model to ask")
		}
	}
	if m.HTTP.Listen != "" {
		if _, _, err := net.SplitHostPort(m.HTTP.Listen); err != nil {
			add("maintenance.http.listen", "%q is not host:port (e.g. 127.0.0.1:9464): %v", m.HTTP.Listen, err)
		}
	}
	switch strings.ToLower(m.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		add("maintenance.log.level", "%q is not one of debug, info, warn, error", m.Log.Level)
	}
	switch strings.ToLower(m.Log.Format) {
	case "json", "text":
	default:
		add("maintenance.log.format", "%q is not one of json, text", m.Log.Format)
	}
	return ps
}

// checkDSN accepts a postgres:// URL or a key=value connection string that
// the driver can parse (so a typo such as sslmode=bogus is a configuration
// error, exit 2, not an unreachable database). No message quotes the
// password, not even the prefix a URL parser stops at.
func checkDSN(dsn string) error {
	if i := strings.Index(dsn, "://"); i >= 0 {
		scheme := dsn[:i]
		if scheme != "postgres" && scheme != "postgresql" {
			return fmt.Errorf("scheme %q is not postgres:// or postgresql://", scheme)
		}
		u, err := url.Parse(dsn)
		userinfo := strings.LastIndex(dsn, "@") > i
		if err != nil || (userinfo && u.User == nil) {
			return fmt.Errorf("%s is not a valid URL: characters such as # / ? @ : in the user name or password "+
				"must be percent-encoded (%%23 %%2F %%3F %%40 %%3A), or use the key=value form", redact.DSN(dsn))
		}
	} else if !strings.Contains(dsn, "=") {
		return fmt.Errorf("is neither a postgres:// URL nor a key=value connection string")
	}
	if _, err := pq.NewConfig(dsn); err != nil {
		return fmt.Errorf("%s: %s", redact.DSN(dsn), redact.Secret(strings.TrimPrefix(err.Error(), "pq: "), redact.DSNSecrets(dsn)...))
	}
	return nil
}

// validateNames checks the schema and table names: they are quoted wherever
// they are used, but a name PostgreSQL would truncate or that cannot be a
// name at all is a mistake to say now, not a table that is mysteriously
// missing later.
func validateNames(m Maintenance) []Problem {
	var ps []Problem
	ident := func(key, v string, qualified bool) {
		parts := []string{v}
		if qualified {
			parts = strings.Split(v, ".")
		}
		for _, p := range parts {
			switch {
			case len(parts) > 2:
				ps = append(ps, Problem{Key: key, Rule: fmt.Sprintf("%q is not a table name: write name or schema.name", v)})
				return
			case p == "" || strings.TrimSpace(p) != p || strings.ContainsRune(p, 0):
				ps = append(ps, Problem{Key: key, Rule: fmt.Sprintf("%q is not a valid name (empty part, surrounding space or NUL)", v)})
				return
			case len(p) > 63:
				ps = append(ps, Problem{Key: key, Rule: fmt.Sprintf("%q is longer than PostgreSQL's 63-byte names", v)})
				return
			}
		}
	}
	if m.Database.Schema != "" {
		ident("maintenance.database.schema", m.Database.Schema, false)
	}
	if m.Database.OwnSchema == "" {
		ps = append(ps, Problem{Key: "maintenance.database.ownSchema", Rule: "is empty: the daemon's own tables need a schema of their own (default supersessiond)"})
	} else {
		ident("maintenance.database.ownSchema", m.Database.OwnSchema, false)
	}
	t := m.Tables
	for key, v := range map[string]string{"attributes": t.Attributes, "aspects": t.Aspects, "history": t.History,
		"memories": t.Memories, "messages": t.Messages, "compactionEvents": t.CompactionEvents,
		"documents": t.Documents, "documentSources": t.DocumentSources} {
		if v != "" {
			ident("maintenance.tables."+key, v, true)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

// warnings are valid but probably unintended settings.
func (c *Config) warnings() []string {
	var w []string
	s := c.Memory.PipelineV2.Structural
	if s.SupersessionSemanticFallback && c.Memory.PipelineV2.SemanticContradictionEnabled && !c.LLMConfigured() {
		w = append(w, "memory.pipelineV2.structural.supersessionSemanticFallback is on but maintenance.llm.endpoint/model are not set: the LLM fallback stays off")
	}
	if !c.LLMConfigured() && c.Maintenance.Schedules.CompactionRetry != ScheduleOff {
		w = append(w, "maintenance.llm is not configured: stale compaction events cannot be re-compacted and will end as deterministic summaries after maxAttempts")
	}
	if c.Memory.PipelineV2.MutationsFrozen {
		w = append(w, "memory.pipelineV2.mutationsFrozen is on: no agent data will be changed, operator commands that would change it refuse")
	} else if c.Memory.PipelineV2.ShadowMode {
		w = append(w, "memory.pipelineV2.shadowMode is on: automatic jobs only propose and report")
	}
	return w
}
