package config_test

import (
	"slices"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
)

// A reload applies what it can and keeps the rest as it runs, naming each
// kept key the new configuration changed; neither configuration changes.
func TestReloadKeepsWhatOnlyARestartApplies(t *testing.T) {
	t.Parallel()
	running := config.Default()
	next := config.Default()
	next.Memory.PipelineV2.ShadowMode = true
	next.Maintenance.Log.Level = "debug"
	next.Maintenance.Database.MaxOpenConns = 5
	next.Maintenance.HTTP.Tokens = config.Tokens{{Name: "alice", Env: "TOKEN_ALICE"}}
	inForce, restart := config.Reload(running, next)
	if want := []string{"maintenance.database.maxOpenConns", "maintenance.http.tokens"}; !slices.Equal(restart, want) {
		t.Errorf("restart %v, want %v", restart, want)
	}
	if !inForce.Memory.PipelineV2.ShadowMode || inForce.Maintenance.Log.Level != "debug" {
		t.Error("a reload applies the brake and the log level")
	}
	if inForce.Maintenance.Database.MaxOpenConns != 3 || inForce.Maintenance.HTTP.Tokens != nil {
		t.Error("the pool and the console's tokens stay as they run")
	}
	if next.Maintenance.Database.MaxOpenConns != 5 || running.Memory.PipelineV2.ShadowMode {
		t.Error("Reload changed a configuration it was given")
	}
	if _, restart := config.Reload(running, running); restart != nil {
		t.Errorf("nothing changed, yet %v", restart)
	}
}

// The judgment changes with the keys declared to change it (SPEC §11: the
// thresholds; and the mode and the semantic fallback), the model only
// while the fallback is in effect, and with nothing else.
func TestJudgmentFollowsItsKeys(t *testing.T) {
	t.Parallel()
	semantic := func(c *config.Config) {
		c.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
		c.Maintenance.LLM.Endpoint, c.Maintenance.LLM.Model = "http://127.0.0.1:11434/v1", "m1"
	}
	for _, tc := range []struct {
		name    string
		base    func(*config.Config)
		edit    func(*config.Config)
		changes bool
	}{
		{"supersessionMinConfidence", nil, func(c *config.Config) { c.Memory.PipelineV2.Structural.SupersessionMinConfidence = 0.8 }, true},
		{"supersessionReviewConfidence", nil, func(c *config.Config) { c.Memory.PipelineV2.Structural.SupersessionReviewConfidence = 0.4 }, true},
		{"shadowMode", nil, func(c *config.Config) { c.Memory.PipelineV2.ShadowMode = true }, true},
		{"mutationsFrozen", nil, func(c *config.Config) { c.Memory.PipelineV2.MutationsFrozen = true }, true},
		{"the fallback turned on", nil, semantic, true},
		{"the fallback turned off", semantic, func(c *config.Config) { c.Memory.PipelineV2.SemanticContradictionEnabled = false }, true},
		{"the LLM gone", semantic, func(c *config.Config) { c.Maintenance.LLM.Endpoint = "" }, true},
		{"the model, with the fallback", semantic, func(c *config.Config) { c.Maintenance.LLM.Model = "m2" }, true},
		{"the model, without it", nil, func(c *config.Config) { c.Maintenance.LLM.Model = "m2" }, false},
		{"the LLM's host", semantic, func(c *config.Config) { c.Maintenance.LLM.Endpoint = "http://10.0.0.1:11434/v1" }, false},
		{"the LLM's timeout", semantic, func(c *config.Config) { c.Maintenance.LLM.Timeout = time.Minute }, false},
		{"the gate, with the fallback", semantic, func(c *config.Config) { c.Maintenance.LLM.Gate = "overlap" }, true},
		{"the window size, with the fallback", semantic, func(c *config.Config) { c.Maintenance.LLM.MaxStatements = 12 }, true},
		{"the gate, without it", nil, func(c *config.Config) { c.Maintenance.LLM.Gate = "overlap" }, false},
		{"the hourly budget", semantic, func(c *config.Config) { c.Maintenance.LLM.MaxRequestsPerHour = 60 }, false},
		{"the enforcement mode", nil, func(c *config.Config) { c.Maintenance.Enforcement.Mode = "earned" }, true},
		{"the target precision", nil, func(c *config.Config) { c.Maintenance.Enforcement.TargetPrecision = 0.95 }, true},
		{"fullSweepEvery", nil, func(c *config.Config) { c.Maintenance.Schedules.FullSweepEvery = time.Hour }, false},
		{"the log level", nil, func(c *config.Config) { c.Maintenance.Log.Level = "debug" }, false},
		{"the store", nil, func(c *config.Config) { c.Maintenance.Supersession.Store = config.StoreHoncho }, true},
		{"Honcho's levels", nil, func(c *config.Config) {
			c.Maintenance.Supersession.HonchoLevels = config.List{"explicit", "deductive"}
		}, true},
	} {
		before := config.Default()
		if tc.base != nil {
			tc.base(before)
		}
		after := *before
		tc.edit(&after)
		if changed := before.Judgment() != after.Judgment(); changed != tc.changes {
			t.Errorf("%s: judgment changed %v, want %v (%q → %q)", tc.name, changed, tc.changes, before.Judgment(), after.Judgment())
		}
	}
}
