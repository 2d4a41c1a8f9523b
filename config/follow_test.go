package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
)

// A followed configuration takes an edit of its file (seen by the watch, or
// by the digest comparison when asked), and keeps the previous one, saying
// why, when an edit does not validate.
func TestFollowTakesEditsAndKeepsThePreviousOnABrokenOne(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write("maintenance:\n  log:\n    level: info\n")
	src := config.Source{Path: path, Explicit: true, Environ: func() []string { return nil }}
	initial, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var errs []error
	f, err := config.Follow(t.Context(), src, initial, func(_ *config.Config, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.Current().Frozen() {
		t.Fatal("frozen before any edit")
	}
	write("maintenance:\n  log:\n    level: info\nmemory:\n  pipelineV2:\n    mutationsFrozen: true\n")
	eventually(t, "the brake in force", func() bool { return f.Current().Frozen() })

	write("maintenance:\n  bogusKey: 1\n")
	eventually(t, "the broken edit reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(errs) > 0 && errs[len(errs)-1] != nil && strings.Contains(errs[len(errs)-1].Error(), "maintenance.bogusKey")
	})
	if !f.Current().Frozen() {
		t.Fatal("a broken edit replaced the configuration in force")
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
