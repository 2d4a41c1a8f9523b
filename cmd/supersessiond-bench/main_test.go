package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The bench end to end at a tiny scale: every phase runs, the baselines
// agree with the daemon, and the last line is the JSON object of figures.
func TestBenchSmoke(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "supersessiond")
	if out, err := exec.Command("go", "build", "-o", bin, "../supersessiond").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	server := pgtest.New(t)
	o := options{
		binary: bin, databaseURL: server.URL, attributes: 3000, documents: 3000, deletedShare: 0.1,
		tombstoneBatch: 100, events: 20, llmLatency: time.Millisecond, llmConcurrency: 4,
		classifyRate: 100, classifyFor: time.Second, observations: 2000, peers: 20, changeShare: 0.01,
	}
	var out bytes.Buffer
	if err := run(o, &out); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var res result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line is not the figures: %v\n%s", err, out.String())
	}
	if res.Sweep == nil || res.Sweep.Supersessions == 0 || res.Inline == nil || res.Inline.Decided != 100 ||
		res.Tombstones == nil || res.Tombstones.Ratio <= 0 || res.Compaction == nil || res.Compaction.Completed != 20 ||
		res.Heuristics.DecisionsPerSec <= 0 || res.Honcho == nil || res.Honcho.Supersessions == 0 ||
		res.Honcho.Supersessions != res.Honcho.Data.Planted || res.Honcho.Incremental.Kind != "incremental" {
		t.Fatalf("missing figures: %s", lines[len(lines)-1])
	}
	// The floor is the faster of the two ways of reading it, each measured.
	if f := res.Sweep.Floor; f.Planned <= 0 || f.ByIndex <= 0 || res.Sweep.FloorSeconds != min(f.Planned, f.ByIndex) {
		t.Fatalf("floor %v s, as planned %v s, through the index %v s", res.Sweep.FloorSeconds, f.Planned, f.ByIndex)
	}
	// A run on a server of one's own (--database-url) leaves nothing behind.
	var left []string
	if err := server.Select(&left, `SELECT datname FROM pg_database WHERE datname LIKE 'bench\_%'`); err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("the bench left databases behind: %v", left)
	}
}
