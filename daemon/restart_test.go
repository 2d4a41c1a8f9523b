package daemon_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// Every key a running daemon cannot apply (declared reload:"restart"), edited
// in a running daemon's file: the reload keeps its running value, and the
// log and /readyz name it as needing a restart. The keys come from their
// declarations, so a new one is tested without a new test; the edit of each
// is derived from its type and checked to load.
func TestReloadSaysEachRestartKeyNeedsARestart(t *testing.T) {
	t.Parallel()
	keys := config.RestartKeys()
	for _, k := range []string{"maintenance.database.url", "maintenance.database.maxOpenConns", "maintenance.database.maxIdleConns",
		"maintenance.http.listen", "maintenance.http.adminTokenEnv", "maintenance.tables.documents", "maintenance.log.format"} {
		if !slices.Contains(keys, k) {
			t.Errorf("%s is bound at startup but not declared reload:\"restart\" (the set is %v)", k, keys)
		}
	}
	if slices.Contains(keys, "maintenance.log.level") || slices.Contains(keys, "memory.pipelineV2.shadowMode") {
		t.Fatalf("a reload applies the log level and the brake: %v", keys)
	}
	db := pgtest.New(t)
	h := start(t, db.URL, "", nil)
	running := h.d.Config()
	for _, key := range keys {
		h.write(restartEdit(t, db.URL, running, key))
		said := regexp.MustCompile(`(?m)needs a restart.* key=` + regexp.QuoteMeta(key) + `( |$)`)
		want := "restart needed: " + key + " changed in the configuration file"
		var body string
		if !poll(func() bool {
			var code int
			code, body = h.get("/readyz")
			return code == 200 && strings.Contains(body, want+";") && said.MatchString(h.log.String())
		}) {
			t.Errorf("%s edited: /readyz and the log do not say it needs a restart\n/readyz: %s", key, body)
			continue
		}
		if _, changed := config.Reload(running, h.d.Config()); len(changed) > 0 {
			t.Errorf("%s edited: the configuration in force changed %v, which only a restart applies", key, changed)
		}
	}
	if t.Failed() {
		t.Fatalf("log:\n%s", h.log)
	}
	// The file back as it started: nothing waits for a restart any more.
	h.write(restartEdit(t, db.URL, running, ""))
	h.eventually("/readyz without a restart pending", func() bool {
		code, body := h.get("/readyz")
		return code == 200 && !strings.Contains(body, "restart needed")
	})
}

// poll waits up to ten seconds for cond.
func poll(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// restartEdit is the harness's configuration with key set to a valid value
// other than running's: the first candidate for its type that loads and
// that config.Reload finds changes exactly that key. key "" is no edit.
func restartEdit(t *testing.T, dbURL string, running *config.Config, key string) string {
	t.Helper()
	if key == "" {
		return restartYAML(t, dbURL, "", nil)
	}
	for _, v := range candidates(t, running, key) {
		body := restartYAML(t, dbURL, key, v)
		path := filepath.Join(t.TempDir(), "agent.yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		loaded, err := config.Load(config.Source{Path: path, Explicit: true, Environ: func() []string { return nil }})
		if err != nil {
			continue
		}
		if _, changed := config.Reload(running, loaded.Config); slices.Equal(changed, []string{key}) {
			return body
		}
	}
	t.Fatalf("no candidate value edits %s alone: add one for its type", key)
	return ""
}

// restartYAML is the harness's base configuration (baseYAML) with key set
// to v.
func restartYAML(t *testing.T, dbURL, key string, v any) string {
	t.Helper()
	tree := map[string]any{"maintenance": map[string]any{
		"database": map[string]any{"url": dbURL},
		"http":     map[string]any{"listen": "127.0.0.1:0"},
		"log":      map[string]any{"level": "debug", "format": "text"},
	}}
	if key != "" {
		parts := strings.Split(key, ".")
		m := tree
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = v
	}
	b, err := yaml.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// candidates are values to try for key, by the type of its field in cfg.
func candidates(t *testing.T, cfg *config.Config, key string) []any {
	t.Helper()
	v := reflect.ValueOf(cfg).Elem()
	for _, name := range strings.Split(key, ".") {
		i := slices.IndexFunc(reflect.VisibleFields(v.Type()), func(f reflect.StructField) bool { return f.Tag.Get("key") == name })
		if i < 0 {
			t.Fatalf("%s: no field declares %q", key, name)
		}
		v = v.Field(i)
	}
	switch v.Kind() {
	case reflect.Bool:
		return []any{!v.Bool()}
	case reflect.Int:
		return []any{v.Int() + 1, v.Int() - 1}
	case reflect.String, reflect.Slice:
		return []any{"other_name", "127.0.0.1:1", "postgres://other@127.0.0.1:1/agent?sslmode=disable", "10.0.0.0/8",
			"text", "json", "alice=TOKEN_ALICE", "honcho", "deductive"}
	}
	t.Fatalf("%s: no candidate values for a %s", key, v.Type())
	return nil
}
