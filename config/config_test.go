package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv() []string { return nil }

func envOf(kv ...string) func() []string { return func() []string { return kv } }

func load(t *testing.T, body string, environ func() []string) (*Loaded, error) {
	t.Helper()
	src := Source{Environ: environ}
	if body != "" {
		src.Path, src.Explicit = writeFile(t, body), true
	}
	return Load(src)
}

func TestDefaultsWithoutFile(t *testing.T) {
	t.Parallel()
	l, err := Load(Source{Path: filepath.Join(t.TempDir(), "absent.yaml"), Environ: noEnv})
	if err != nil {
		t.Fatalf("implicit missing file must fall back to defaults, got %v", err)
	}
	if !reflect.DeepEqual(l.Config, Default()) {
		t.Fatalf("got %+v, want defaults", l.Config)
	}
	if len(l.Notes) == 0 || !strings.Contains(l.Notes[0], "built-in defaults") {
		t.Fatalf("missing note about defaults: %v", l.Notes)
	}
}

func TestExplicitMissingFileIsError(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{Path: filepath.Join(t.TempDir(), "absent.yaml"), Explicit: true, Environ: noEnv})
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("want *Error about a missing file, got %v", err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	if s := Resolve("/x.yaml", envOf("SUPERSESSIOND_CONFIG=/y.yaml")); s.Path != "/x.yaml" || !s.Explicit {
		t.Errorf("flag must win: %+v", s)
	}
	if s := Resolve("", envOf("SUPERSESSIOND_CONFIG=/y.yaml")); s.Path != "/y.yaml" || !s.Explicit {
		t.Errorf("env must be explicit: %+v", s)
	}
	if s := Resolve("", noEnv); s.Path != DefaultPath || s.Explicit {
		t.Errorf("default path is implicit: %+v", s)
	}
}

// The example documents every key with its default: loading it gives exactly
// Default(), and each key name appears in it.
func TestExampleDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	l, err := Load(Source{Path: "../agent.yaml.example", Explicit: true, Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Config, Default()) {
		t.Fatalf("agent.yaml.example differs from Default():\n%+v\n%+v", l.Config, Default())
	}
	body, _ := os.ReadFile("../agent.yaml.example")
	for _, k := range Keys() {
		leaf := k[strings.LastIndex(k, ".")+1:]
		if !strings.Contains(string(body), leaf+":") {
			t.Errorf("agent.yaml.example does not document %s", k)
		}
	}
}

func TestFileValues(t *testing.T) {
	t.Parallel()
	l, err := load(t, `
agent:
  name: keeps-its-own-keys      # not ours: ignored
memory:
  somethingElse: 3               # the agent's: ignored
  pipelineV2:
    shadowMode: true
    structural:
      supersessionMinConfidence: 0.8
      supersessionReviewConfidence: 0.6
maintenance:
  schedules: {timezone: Europe/Berlin, sweep: "@every 5m", tombstones: "off"}
  compaction:
    backoff: {initial: 30s, max: 2h}
  log: {level: debug, format: text}
`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if !c.Memory.PipelineV2.ShadowMode || c.Memory.PipelineV2.Structural.SupersessionMinConfidence != 0.8 ||
		c.Maintenance.Schedules.Timezone != "Europe/Berlin" || c.Maintenance.Compaction.Backoff.Max != 2*time.Hour ||
		c.Maintenance.Schedules.Tombstones != ScheduleOff || c.Maintenance.Log.Format != "text" {
		t.Fatalf("values not applied: %+v", c)
	}
	if !c.Shadow() || c.Frozen() {
		t.Fatal("shadow/frozen derived wrongly")
	}
	if c.Maintenance.Compaction.StaleAfter != 10*time.Minute {
		t.Fatal("unset keys must keep their defaults")
	}
}

func TestKeysMatchWithoutRegardToCase(t *testing.T) {
	t.Parallel()
	l, err := load(t, "memory:\n  pipelinev2:\n    SHADOWMODE: true\n", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Config.Memory.PipelineV2.ShadowMode {
		t.Fatal("case-insensitive key not applied")
	}
}

func TestEnvOverrides(t *testing.T) {
	t.Parallel()
	l, err := load(t, "maintenance:\n  http:\n    listen: 127.0.0.1:1\n", envOf(
		"SUPERSESSIOND_MAINTENANCE__HTTP__LISTEN=127.0.0.1:9465",
		"SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true",
		"supersessiond_ignored=1", // prefix is case-sensitive
		"SUPERSESSIOND_maintenance__COMPACTION__BACKOFF__MAX=3h",
		"SUPERSESSIOND_CONFIG=/not/an/override",
		"SUPERSESSIOND_TEST_DATABASE_URL=postgres:///x",
		"SUPERSESSIOND_DATABASE_URL=postgres://u:secret@db/agent",
		"SUPERSESSIOND_SOMETHING=unrelated",
	))
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if c.Maintenance.HTTP.Listen != "127.0.0.1:9465" || !c.Memory.PipelineV2.ShadowMode || c.Maintenance.Compaction.Backoff.Max != 3*time.Hour {
		t.Fatalf("env overrides not applied: %+v", c)
	}
	if c.Maintenance.Database.URL != "postgres://u:secret@db/agent" {
		t.Fatalf("SUPERSESSIOND_DATABASE_URL must win, got %q", c.Maintenance.Database.URL)
	}
	for _, n := range l.Notes {
		if strings.Contains(n, "secret") {
			t.Fatalf("note leaks the password: %q", n)
		}
	}
}

func TestInvalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		env        []string
		key, rule  string // the problem must name both
	}{
		{"unknown maintenance key", "maintenance:\n  http:\n    listn: x\n", nil, "maintenance.http.listn", "unknown key"},
		{"unknown maintenance section", "maintenance:\n  tombstone:\n    minAge: 1m\n", nil, "maintenance.tombstone", "unknown key"},
		{"unknown env key", "", []string{"SUPERSESSIOND_MAINTENANCE__HTTP__LISTN=x"}, "maintenance.http.listn", "SUPERSESSIOND_MAINTENANCE__HTTP__LISTN"},
		{"confidence out of range", "memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 7\n", nil, "memory.pipelineV2.structural.supersessionMinConfidence", "between 0 and 1"},
		{"negative confidence", "memory:\n  pipelineV2:\n    structural:\n      supersessionReviewConfidence: -0.1\n", nil, "supersessionReviewConfidence", "between 0 and 1"},
		{"review above min", "memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 0.6\n      supersessionReviewConfidence: 0.65\n", nil, "supersessionReviewConfidence", "review band"},
		{"not a number", "memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: high\n", nil, "supersessionMinConfidence", `"high" is not a number`},
		{"not a bool", "memory:\n  pipelineV2:\n    shadowMode: maybe\n", nil, "memory.pipelineV2.shadowMode", "not a boolean"},
		{"env not a bool", "", []string{"SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=sure"}, "shadowMode", "not a boolean"},
		{"duration without unit", "maintenance:\n  compaction:\n    staleAfter: 600\n", nil, "maintenance.compaction.staleAfter", "with a unit"},
		{"garbage duration", "maintenance:\n  compaction:\n    staleAfter: soon\n", nil, "staleAfter", "not a duration"},
		{"zero duration", "maintenance:\n  inlineHook:\n    pollInterval: 0s\n", nil, "maintenance.inlineHook.pollInterval", "positive"},
		{"negative duration", "maintenance:\n  llm:\n    timeout: -1s\n", nil, "maintenance.llm.timeout", "positive"},
		{"backoff inverted", "maintenance:\n  compaction:\n    backoff: {initial: 2h, max: 1h}\n", nil, "backoff.max", "below"},
		{"bad cron", "maintenance:\n  schedules:\n    sweep: \"every half hour\"\n", nil, "maintenance.schedules.sweep", "cron"},
		{"six-field cron", "maintenance:\n  schedules:\n    sweep: \"0 */30 * * * *\"\n", nil, "maintenance.schedules.sweep", "cron"},
		{"bad timezone", "maintenance:\n  schedules:\n    timezone: Mars/Olympus\n", nil, "maintenance.schedules.timezone", "time zone"},
		{"section not a mapping", "maintenance:\n  http: 9464\n", nil, "maintenance.http", "not a mapping"},
		{"bad listen", "maintenance:\n  http:\n    listen: localhost\n", nil, "maintenance.http.listen", "host:port"},
		{"bad level", "maintenance:\n  log:\n    level: loud\n", nil, "maintenance.log.level", "debug, info"},
		{"llm without model", "maintenance:\n  llm:\n    endpoint: http://127.0.0.1:11434/v1\n", nil, "maintenance.llm.model", "empty"},
		{"llm bad endpoint", "maintenance:\n  llm:\n    endpoint: ollama\n    model: m\n", nil, "maintenance.llm.endpoint", "http(s)"},
		{"bad db scheme", "maintenance:\n  database:\n    url: mysql://x/y\n", nil, "maintenance.database.url", "scheme"},
		{"batch size", "maintenance:\n  tombstones:\n    batchSize: 0\n", nil, "maintenance.tombstones.batchSize", "between 1 and"},
		{"max attempts", "maintenance:\n  compaction:\n    maxAttempts: 0\n", nil, "maintenance.compaction.maxAttempts", "between 1 and"},
		{"stack max attempts", "maintenance:\n  compaction:\n    stackMaxAttempts: 0\n", nil, "maintenance.compaction.stackMaxAttempts", "between 1 and"},
		{"unknown store", "maintenance:\n  supersession:\n    store: honcho-v3\n", nil, "maintenance.supersession.store", "attributes, honcho, mem0"},
		{"unknown honcho level", "maintenance:\n  supersession:\n    honchoLevels: [explicit, deduced]\n", nil, "maintenance.supersession.honchoLevels", `"deduced" is not a level Honcho writes`},
		{"honcho level twice", "", []string{"SUPERSESSIOND_MAINTENANCE__SUPERSESSION__HONCHOLEVELS=explicit, explicit"}, "maintenance.supersession.honchoLevels", "named twice"},
		{"no honcho level", "maintenance:\n  supersession:\n    honchoLevels: []\n", nil, "maintenance.supersession.honchoLevels", "at least one"},
		{"honcho levels not words", "maintenance:\n  supersession:\n    honchoLevels: {explicit: true}\n", nil, "maintenance.supersession.honchoLevels", "not a list of words"},
		{"mem0 table name", "maintenance:\n  tables:\n    mem0: a.b.c\n", nil, "maintenance.tables.mem0", "schema.name"},
		{"yaml syntax", "maintenance:\n  http: [\n", nil, "", "cannot read or parse"},
		{"yaml error on its own line", "memory:\n  pipelineV2:\n    shadowMode: true\n   bad: x\n", nil, "line 4", `"   bad: x"`},
		{"every negative", "maintenance:\n  schedules:\n    sweep: \"@every -5s\"\n", nil, "maintenance.schedules.sweep", "positive interval"},
		{"every zero", "maintenance:\n  schedules:\n    tombstones: \"@every 0s\"\n", nil, "maintenance.schedules.tombstones", "positive interval"},
		{"every sub-second", "maintenance:\n  schedules:\n    compactionRetry: \"@every 500ms\"\n", nil, "maintenance.schedules.compactionRetry", "at least 1s"},
		{"every garbage", "maintenance:\n  schedules:\n    sweep: \"@every often\"\n", nil, "maintenance.schedules.sweep", "needs a duration"},
		{"env sets a section", "", []string{"SUPERSESSIOND_MAINTENANCE=1"}, "maintenance", "SUPERSESSIOND_MAINTENANCE__"},
		{"env sets a nested section", "", []string{"SUPERSESSIOND_MAINTENANCE__HTTP=x"}, "maintenance.http", "SUPERSESSIOND_MAINTENANCE__HTTP__ADMINTOKENENV"},
		{"bad sslmode", "maintenance:\n  database:\n    url: \"postgres://u@db/agent?sslmode=bogus\"\n", nil, "maintenance.database.url", `"bogus" is not supported`},
		{"bad kv sslmode", "maintenance:\n  database:\n    url: \"host=db sslmode=bogus\"\n", nil, "maintenance.database.url", "sslmode"},
		{"unencoded password", "maintenance:\n  database:\n    url: \"postgres://u:pa#ss@db/agent\"\n", nil, "maintenance.database.url", "percent-encoded"},
		{"pool too small", "maintenance:\n  database:\n    maxOpenConns: 0\n", nil, "maintenance.database.maxOpenConns", "between 1 and 100"},
		{"idle above open", "maintenance:\n  database:\n    maxOpenConns: 2\n    maxIdleConns: 3\n", nil, "maintenance.database.maxIdleConns", "between 0 and maxOpenConns"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := noEnv
			if tc.env != nil {
				env = envOf(tc.env...)
			}
			_, err := load(t, tc.body, env)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("error %q must name %q and %q", err, tc.key, tc.rule)
			}
		})
	}
}

func TestPasswordNeverInErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ url, password string }{
		{"postgres://u:hunter2@db:notaport/agent", "hunter2"},
		{"postgres://agent:Hunter#2secret@db/agent", "Hunter#2secret"},
		{"postgres://agent:Hunter/2secret@db/agent", "Hunter/2secret"},
		{"postgres://agent:Hunter?2secret@db/agent", "Hunter?2secret"},
		{"postgres://agent:Hunter2secret@db/agent?sslmode=bogus", "Hunter2secret"},
		{"host=db password='Hunter 2secret' sslmode=bogus", "Hunter 2secret"},
	}
	for _, c := range cases {
		for _, via := range []string{"file", "env"} {
			var err error
			if via == "file" {
				_, err = load(t, "maintenance:\n  database:\n    url: \""+c.url+"\"\n", noEnv)
			} else {
				_, err = load(t, "", envOf(EnvDatabaseURL+"="+c.url))
			}
			if err == nil {
				t.Fatalf("%s via %s: accepted", c.url, via)
			}
			if strings.Contains(err.Error(), "Hunter") || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "2secret") {
				t.Fatalf("%s via %s: password leaked: %v", c.url, via, err)
			}
		}
	}
}

func TestAllProblemsReportedAtOnce(t *testing.T) {
	t.Parallel()
	_, err := load(t, "maintenance:\n  http:\n    listn: x\n  log:\n    levle: debug\n", noEnv)
	if err == nil || !strings.Contains(err.Error(), "listn") || !strings.Contains(err.Error(), "levle") {
		t.Fatalf("want both problems, got %v", err)
	}
}

func TestDerived(t *testing.T) {
	t.Parallel()
	c := Default()
	if c.SemanticFallback() {
		t.Error("fallback is off by default")
	}
	c.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
	if c.SemanticFallback() {
		t.Error("fallback needs an LLM")
	}
	c.Maintenance.LLM.Endpoint, c.Maintenance.LLM.Model = "http://x", "m"
	if !c.SemanticFallback() {
		t.Error("fallback should be on")
	}
	c.Memory.PipelineV2.SemanticContradictionEnabled = false
	if c.SemanticFallback() {
		t.Error("fallback needs semanticContradictionEnabled")
	}
	c.Memory.PipelineV2.MutationsFrozen = true
	if !c.Shadow() || !c.Frozen() {
		t.Error("frozen implies shadow")
	}
	if c.ListenDSN() != c.Maintenance.Database.URL {
		t.Error("listen DSN defaults to url")
	}
}

func TestWatchSurvivesRenameSaves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	changes := make(chan struct{}, 16)
	ctx := t.Context()
	if err := Watch(ctx, path, 50*time.Millisecond, func() { changes <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	save := func(body string) { // the way vim and sed -i save: new file, rename over
		tmp := filepath.Join(dir, ".agent.yaml.swp")
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		save(strings.Repeat("b: 2\n", i+1))
		select {
		case <-changes:
		case <-time.After(5 * time.Second):
			t.Fatalf("save %d not noticed", i+1)
		}
	}
	// Unrelated files in the same directory do not trigger.
	if err := os.WriteFile(filepath.Join(dir, "other.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("unrelated file triggered a reload")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestWatchFollowsSymlinks(t *testing.T) {
	t.Parallel()
	etc, agentDir, otherDir := t.TempDir(), t.TempDir(), t.TempDir()
	target := filepath.Join(agentDir, "agent.yaml")
	other := filepath.Join(otherDir, "agent.yaml")
	for _, p := range []string{target, other} {
		if err := os.WriteFile(p, []byte("a: 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(etc, "agent.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	changes := make(chan struct{}, 16)
	if err := Watch(t.Context(), link, 50*time.Millisecond, func() { changes <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	expect := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s not noticed", what)
		}
	}
	drain := func() {
		for {
			select {
			case <-changes:
			case <-time.After(300 * time.Millisecond):
				return
			}
		}
	}
	if err := os.WriteFile(target, []byte("a: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("an edit of the link's target (in another directory)")
	drain()

	// Re-point the link the way deploy tools do: a new link renamed over it.
	tmp := filepath.Join(etc, ".agent.yaml.new")
	if err := os.Symlink(other, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	expect("re-pointing the link")
	drain()
	if err := os.WriteFile(other, []byte("a: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("an edit of the new target")
}

// Keys returns every canonical leaf key path, sorted.
func Keys() []string {
	s := newSchema()
	out := make([]string, 0, len(s.leaves))
	for _, k := range s.leaves {
		out = append(out, k.path)
	}
	sort.Strings(out)
	return out
}

// The pool keeps idle as many connections as it may open, so that a pass
// using two or three at once does not reconnect for every write; a smaller
// maxOpenConns takes the default idle count down with it, while an explicit
// maxIdleConns above maxOpenConns stays an error (TestInvalid).
func TestIdleConnectionsFollowOpenConnectionsByDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body    string
		environ func() []string
		want    int
	}{
		{"", noEnv, 3},
		{"maintenance:\n  database:\n    maxOpenConns: 2\n", noEnv, 2},
		{"maintenance:\n  database:\n    maxOpenConns: 1\n    maxIdleConns: 0\n", noEnv, 0},
		{"maintenance:\n  database:\n    maxOpenConns: 8\n", noEnv, 3},
		{"maintenance:\n  log:\n    level: info\n", envOf("SUPERSESSIOND_MAINTENANCE__DATABASE__MAXOPENCONNS=1"), 1},
	} {
		body := tc.body
		if body == "" {
			body = "maintenance:\n  log:\n    level: info\n"
		}
		l, err := load(t, body, envOf(append(tc.environ(), "SUPERSESSIOND_DATABASE_URL=postgres://u@db/agent")...))
		if err != nil {
			t.Fatalf("%q: %v", tc.body, err)
		}
		if got := l.Config.Maintenance.Database.MaxIdleConns; got != tc.want {
			t.Errorf("%q %v: maxIdleConns %d, want %d", tc.body, tc.environ(), got, tc.want)
		}
	}
	_, err := load(t, "maintenance:\n  database:\n    maxOpenConns: 1\n", envOf("SUPERSESSIOND_DATABASE_URL=postgres://u@db/agent",
		"SUPERSESSIOND_MAINTENANCE__DATABASE__MAXIDLECONNS=2"))
	if err == nil || !strings.Contains(err.Error(), "maxIdleConns") {
		t.Fatalf("an explicit maxIdleConns above maxOpenConns must be refused, got %v", err)
	}
}

// Named tokens: a list in the file, NAME=ENV pairs from the environment,
// each name and variable once, and never the admin token's name.
func TestNamedTokens(t *testing.T) {
	t.Parallel()
	l, err := load(t, `
maintenance:
  http:
    tokens:
      - {name: alice, env: TOKEN_ALICE}
      - name: bob
        env: TOKEN_BOB
    openReadsOnLoopback: true
    trustedProxies: "127.0.0.1, 10.0.0.0/8"
`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	h := l.Config.Maintenance.HTTP
	if want := (Tokens{{"alice", "TOKEN_ALICE"}, {"bob", "TOKEN_BOB"}}); !reflect.DeepEqual(h.Tokens, want) || !h.OpenReadsOnLoopback {
		t.Fatalf("tokens %v, open %v", h.Tokens, h.OpenReadsOnLoopback)
	}
	if nets := h.TrustedProxyNets(); len(nets) != 2 || nets[0].String() != "127.0.0.1/32" || nets[1].String() != "10.0.0.0/8" {
		t.Fatalf("trusted proxies: %v", nets)
	}
	// What the LLM echoes is masked of every token an operator may hold.
	secrets := l.Config.Secrets(func(k string) string {
		return map[string]string{"TOKEN_ALICE": "alice-secret-1", "TOKEN_BOB": "bob-secret-22"}[k]
	})
	if !slices.Contains(secrets, "alice-secret-1") || !slices.Contains(secrets, "bob-secret-22") {
		t.Errorf("Secrets() misses the named tokens: %q", secrets)
	}
	l, err = load(t, "", envOf("SUPERSESSIOND_MAINTENANCE__HTTP__TOKENS=carol=TOKEN_CAROL, dan=TOKEN_DAN"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Tokens{{"carol", "TOKEN_CAROL"}, {"dan", "TOKEN_DAN"}}); !reflect.DeepEqual(l.Config.Maintenance.HTTP.Tokens, want) {
		t.Fatalf("from the environment: %v", l.Config.Maintenance.HTTP.Tokens)
	}
	for body, want := range map[string]string{
		"tokens: [{name: admin, env: X}]":                     `the name "admin" is the admin token's`,
		"tokens: [{name: a, env: X}, {name: A, env: Y}]":      `the name "A" is given twice`,
		"tokens: [{name: a, env: X}, {name: b, env: X}]":      "env X is already used",
		"tokens: [{name: a, env: SUPERSESSIOND_ADMIN_TOKEN}]": "env SUPERSESSIOND_ADMIN_TOKEN is already used",
		"tokens: [{name: 'a b', env: X}]":                     "must be 1 to 64 letters",
		"tokens: [{name: a}]":                                 `env "" must name an environment variable`,
		"tokens: [{name: a, env: X, role: admin}]":            `unknown key "role"`,
		"tokens: alice":               `"alice" is not NAME=ENV_VAR`,
		"trustedProxies: proxy.local": `"proxy.local" is not an IP address or CIDR`,
	} {
		_, err := load(t, "maintenance:\n  http:\n    "+body+"\n", noEnv)
		if err == nil || !strings.Contains(err.Error(), "maintenance.http.") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// The store and its Honcho levels: a YAML list, one word, or the
// environment's comma-separated form; the store's name without regard to
// case.
func TestSupersessionStore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		env        []string
		store      string
		levels     List
	}{
		{"defaults", "", nil, StoreAttributes, List{"explicit"}},
		{"a list", "maintenance:\n  supersession:\n    store: honcho\n    honchoLevels: [explicit, deductive]\n", nil, StoreHoncho, List{"explicit", "deductive"}},
		{"one word", "maintenance:\n  supersession:\n    store: Honcho\n    honchoLevels: inductive\n", nil, StoreHoncho, List{"inductive"}},
		{"from the environment", "", []string{"SUPERSESSIOND_MAINTENANCE__SUPERSESSION__STORE=MEM0",
			"SUPERSESSIOND_MAINTENANCE__SUPERSESSION__HONCHOLEVELS=explicit, contradiction"}, StoreMem0, List{"explicit", "contradiction"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, err := load(t, c.body, envOf(c.env...))
			if err != nil {
				t.Fatal(err)
			}
			s := l.Config.Maintenance.Supersession
			if s.Store != c.store || !slices.Equal(s.HonchoLevels, c.levels) {
				t.Fatalf("store %q levels %v, want %q %v", s.Store, s.HonchoLevels, c.store, c.levels)
			}
		})
	}
}
