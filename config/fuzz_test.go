package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary agent.yaml bodies and environment overrides to
// Load: it must return a valid configuration or a *config.Error, never panic.
func FuzzLoad(f *testing.F) {
	example, _ := os.ReadFile("../agent.yaml.example")
	f.Add(string(example), "MAINTENANCE__HTTP__LISTEN", "127.0.0.1:1")
	f.Add("memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 7\n", "", "")
	f.Add("maintenance: [1, 2]\n", "MEMORY__PIPELINEV2__SHADOWMODE", "maybe")
	f.Add("maintenance:\n  compaction:\n    backoff: {initial: 1h, max: 1m}\n", "MAINTENANCE__COMPACTION__MAXATTEMPTS", "1e9")
	f.Add("{{{", "MAINTENANCE", "x")
	f.Add("maintenance:\n  schedules:\n    sweep: \"* * * * * * *\"\n", "MAINTENANCE__SCHEDULES__TIMEZONE", "Mars/Base")
	f.Add("memory: &a\n  pipelineV2: *a\n", "", "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body, envKey, envValue string) {
		p := filepath.Join(dir, "agent.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Skip()
		}
		env := func() []string { return []string{EnvPrefix + envKey + "=" + envValue} }
		l, err := Load(Source{Path: p, Explicit: true, Environ: env})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load returned %T, want *config.Error: %v", err, err)
			}
			return
		}
		if problems := l.Config.validate(newSchema()); len(problems) > 0 {
			t.Fatalf("Load accepted an invalid configuration: %v", problems)
		}
	})
}
