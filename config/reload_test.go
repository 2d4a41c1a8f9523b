package config_test

import (
	"slices"
	"testing"

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
