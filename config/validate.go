package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/robfig/cron/v3"

	"github.com/supersessiond/supersessiond/internal/ident"
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

// validate checks a loaded configuration: each key's own rule (its check
// tag), then the rules that relate keys or need more than a tag.
func (c *Config) validate(s *schema) []Problem {
	v := &validation{s: s, c: c, ps: s.checkTags(c)}
	v.thresholds()
	v.database()
	v.schedules()
	v.compaction()
	v.supersession()
	v.llm()
	v.http()
	return v.ps
}

// validation collects problems, naming keys by their fields.
type validation struct {
	s  *schema
	c  *Config
	ps []Problem
}

func (v *validation) add(field any, format string, args ...any) {
	v.ps = append(v.ps, Problem{Key: v.s.pathOf(v.c, field), Rule: fmt.Sprintf(format, args...)})
}

func (v *validation) thresholds() {
	st := &v.c.Memory.PipelineV2.Structural
	if st.SupersessionReviewConfidence > st.SupersessionMinConfidence {
		v.add(&st.SupersessionReviewConfidence, "%v is above supersessionMinConfidence (%v): the review band must lie below the apply threshold",
			st.SupersessionReviewConfidence, st.SupersessionMinConfidence)
	}
}

func (v *validation) database() {
	d := &v.c.Maintenance.Database
	if d.URL == "" {
		v.add(&d.URL, "is empty: set it, or set %s", EnvDatabaseURL)
	} else if err := checkDSN(d.URL); err != nil {
		v.add(&d.URL, "%v", err)
	}
	if d.ListenURL != "" {
		if err := checkDSN(d.ListenURL); err != nil {
			v.add(&d.ListenURL, "%v", err)
		}
	}
	if d.MaxIdleConns > d.MaxOpenConns && !v.s.given["maintenance.database.maxidleconns"] {
		d.MaxIdleConns = d.MaxOpenConns // the default keeps what the pool may open
	}
	if d.MaxIdleConns > d.MaxOpenConns {
		v.add(&d.MaxIdleConns, "%d is out of range: must be between 0 and maxOpenConns (%d)", d.MaxIdleConns, d.MaxOpenConns)
	}
	v.names()
}

func (v *validation) schedules() {
	sc := &v.c.Maintenance.Schedules
	if _, err := time.LoadLocation(sc.Timezone); err != nil || sc.Timezone == "" {
		v.add(&sc.Timezone, "%q is not a known time zone: use an IANA name like UTC or Europe/Berlin", sc.Timezone)
	}
	for _, spec := range []*string{&sc.Sweep, &sc.CompactionRetry, &sc.Tombstones} {
		if *spec == ScheduleOff {
			continue
		}
		if _, err := ParseSchedule(*spec); err != nil {
			v.add(spec, "%q is not a valid cron spec (5 fields: minute hour day-of-month month day-of-week, or %q): %v", *spec, ScheduleOff, err)
		}
	}
}

func (v *validation) compaction() {
	cp := &v.c.Maintenance.Compaction
	if cp.Backoff.Max < cp.Backoff.Initial {
		v.add(&cp.Backoff.Max, "%s is below backoff.initial (%s)", cp.Backoff.Max, cp.Backoff.Initial)
	}
	if cp.Lookback <= cp.StaleAfter && cp.Lookback > 0 {
		v.add(&cp.Lookback, "%s must be longer than staleAfter (%s), or no event is ever old enough and recent enough to retry",
			cp.Lookback, cp.StaleAfter)
	}
}

// supersession checks the store's settings: each Honcho level one that
// Honcho writes, once, and at least one.
func (v *validation) supersession() {
	s := &v.c.Maintenance.Supersession
	s.Store = strings.ToLower(s.Store)
	if len(s.HonchoLevels) == 0 {
		v.add(&s.HonchoLevels, "is empty: name at least one of %s (default explicit)", strings.Join(HonchoLevels, ", "))
	}
	seen := map[string]bool{}
	for _, l := range s.HonchoLevels {
		switch {
		case !slices.Contains(HonchoLevels, l):
			v.add(&s.HonchoLevels, "%q is not a level Honcho writes: use %s", l, strings.Join(HonchoLevels, ", "))
		case seen[l]:
			v.add(&s.HonchoLevels, "%q is named twice", l)
		}
		seen[l] = true
	}
}

func (v *validation) llm() {
	l := &v.c.Maintenance.LLM
	if l.Endpoint == "" {
		return
	}
	u, err := url.Parse(l.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(&l.Endpoint, "%q is not an http(s) URL (e.g. http://127.0.0.1:11434/v1)", redact.URL(l.Endpoint))
	}
	if l.Model == "" {
		v.add(&l.Model, "is empty but maintenance.llm.endpoint is set: name the model to ask")
	}
}

func (v *validation) http() {
	h := &v.c.Maintenance.HTTP
	if h.Listen != "" {
		if _, _, err := net.SplitHostPort(h.Listen); err != nil {
			v.add(&h.Listen, "%q is not host:port (e.g. 127.0.0.1:9464): %v", h.Listen, err)
		}
	}
	if _, err := parseProxies(h.TrustedProxies); err != nil {
		v.add(&h.TrustedProxies, "%v", err)
	}
	names, envs := map[string]bool{}, map[string]bool{h.AdminTokenEnv: true}
	for i, t := range h.Tokens {
		switch {
		case !ident.ValidOperator(t.Name):
			v.add(&h.Tokens, "item %d: name %q must be 1 to 64 letters, digits or . _ @ - (it is what the audit trail records)", i+1, t.Name)
		case strings.EqualFold(t.Name, ident.Admin):
			v.add(&h.Tokens, "item %d: the name %q is the admin token's (adminTokenEnv); give this operator another", i+1, t.Name)
		case names[strings.ToLower(t.Name)]:
			v.add(&h.Tokens, "item %d: the name %q is given twice", i+1, t.Name)
		case t.Env == "" || strings.ContainsAny(t.Env, "= \t"):
			v.add(&h.Tokens, "item %d (%s): env %q must name an environment variable", i+1, t.Name, t.Env)
		case envs[t.Env]:
			v.add(&h.Tokens, "item %d (%s): env %s is already used by another token (adminTokenEnv or an earlier item)", i+1, t.Name, t.Env)
		}
		names[strings.ToLower(t.Name)], envs[t.Env] = true, true
	}
}

// TrustedProxyNets are the parsed maintenance.http.trustedProxies; a loaded
// configuration always parses.
func (h HTTP) TrustedProxyNets() []netip.Prefix {
	nets, _ := parseProxies(h.TrustedProxies)
	return nets
}

func parseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR (e.g. 127.0.0.1, 10.0.0.0/8)", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
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

// names checks the schema and table names: they are quoted wherever they
// are used, but a name PostgreSQL would truncate or that cannot be a name
// at all is a mistake to say now, not a table that is mysteriously missing
// later.
func (v *validation) names() {
	d, t := &v.c.Maintenance.Database, &v.c.Maintenance.Tables
	if d.Schema != "" {
		v.identifier(&d.Schema, false)
	}
	if d.OwnSchema == "" {
		v.add(&d.OwnSchema, "is empty: the daemon's own tables need a schema of their own (default supersessiond)")
	} else {
		v.identifier(&d.OwnSchema, false)
	}
	for _, name := range []*string{&t.Attributes, &t.Aspects, &t.History, &t.Memories, &t.Messages,
		&t.CompactionEvents, &t.Documents, &t.DocumentSources, &t.Mem0} {
		if *name != "" {
			v.identifier(name, true)
		}
	}
}

// identifier checks one name ("name", or "schema.name" when qualified).
func (v *validation) identifier(field *string, qualified bool) {
	parts := []string{*field}
	if qualified {
		parts = strings.Split(*field, ".")
	}
	if len(parts) > 2 {
		v.add(field, "%q is not a table name: write name or schema.name", *field)
		return
	}
	for _, p := range parts {
		switch {
		case p == "" || strings.TrimSpace(p) != p || strings.ContainsRune(p, 0):
			v.add(field, "%q is not a valid name (empty part, surrounding space or NUL)", *field)
			return
		case len(p) > 63:
			v.add(field, "%q is longer than PostgreSQL's 63-byte names", *field)
			return
		}
	}
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
