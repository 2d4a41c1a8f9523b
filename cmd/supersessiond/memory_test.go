package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The daemon's collector policy applies unless the environment sets one of
// the runtime's knobs; either leaves the runtime's own settings alone.
func TestMemoryPolicyYieldsToTheEnvironment(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })

	for _, env := range []map[string]string{{"GOGC": "150"}, {"GOMEMLIMIT": "1GiB"}} {
		memoryPolicy(func(k string) string { return env[k] })
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("with %v: GOGC changed to %d", env, got)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("with %v: the memory limit changed to %d", env, got)
		}
	}

	memoryPolicy(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("no environment: GOGC %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != memoryLimit {
		t.Errorf("no environment: memory limit %d, want %d", got, memoryLimit)
	}
}
