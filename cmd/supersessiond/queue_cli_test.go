package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
)

// The review queue through the CLI: proposals with status and filters,
// review --all with --dry-run and a second run that decides nothing, apply
// --all refused while frozen (exit 4), stats in both formats, and the
// usage mistakes (exit 2).
func TestQueueCommands(t *testing.T) {
	t.Parallel()
	_, s, c := seedCLI(t)
	asp := s.Aspect("a", "Sam", "theme")
	s.Add(memtest.Attr{ID: "t1", Agent: "a", Aspect: asp, Content: "Prefers dark mode in every app"},
		memtest.Attr{ID: "t2", Agent: "a", Aspect: asp, Content: "Prefers light mode in every app"})
	shadow := &cli{t: t, env: append(c.env, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")}
	if code, _, errOut := shadow.run("", "sweep", "--once"); code != 0 {
		t.Fatalf("sweep: %s", errOut)
	}

	code, out, _ := c.run("", "proposals", "--status", "pending")
	if code != 0 || strings.Count(out, "pending") != 2 || !strings.Contains(out, "Lives in Toronto → Lives in Vancouver") {
		t.Fatalf("proposals: %d\n%s", code, out)
	}
	code, out, _ = c.run("", "proposals", "--signal", "antonym", "--format", "json")
	var p struct{ ID, Status string }
	if code != 0 || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &p) != nil || p.Status != "pending" {
		t.Fatalf("proposals json: %d %s", code, out)
	}

	code, out, _ = c.run("", "review", "--all", "--reject", "--signal", "value_conflict", "--max-confidence", "0.9", "--dry-run")
	if code != 0 || !strings.Contains(out, "would reject 2") || s.Count(`SELECT count(*) FROM memory_history WHERE event LIKE '%_rejected'`) != 0 {
		t.Fatalf("dry run: %d %s", code, out)
	}
	code, out, _ = c.run("", "review", "--all", "--reject", "--signal", "value_conflict", "--note", "bulk")
	if code != 0 || !strings.Contains(out, "rejected 2 proposals") || s.Count(`SELECT count(*) FROM memory_history WHERE event LIKE '%_rejected'`) != 2 {
		t.Fatalf("review --all: %d %s", code, out)
	}
	if code, out, _ = c.run("", "review", "--all", "--reject", "--signal", "value_conflict"); code != 0 || !strings.Contains(out, "rejected 0 proposals") {
		t.Fatalf("second run: %d %s", code, out)
	}

	frozen := &cli{t: t, env: append(c.env, "SUPERSESSIOND_MEMORY__PIPELINEV2__MUTATIONSFROZEN=true")}
	if code, _, errOut := frozen.run("", "apply", "--all", "--status", "rejected"); code != 4 || !strings.Contains(errOut, "mutationsFrozen") {
		t.Fatalf("frozen apply --all: %d %s", code, errOut)
	}
	if code, out, _ = c.run("", "apply", "--all", "--status", "rejected"); code != 0 || !strings.Contains(out, "applied 2 of 2") {
		t.Fatalf("apply --all: %d %s", code, out)
	}
	if st, _ := s.Status("a1"); st != "superseded" {
		t.Fatalf("a1 %s", st)
	}

	code, out, _ = c.run("", "stats")
	if code != 0 || !strings.Contains(out, "value_conflict") || !strings.Contains(out, "PRECISION") {
		t.Fatalf("stats: %d %s", code, out)
	}
	code, out, _ = c.run("", "stats", "--format", "json", "--agent", "a", "--since", "1h")
	var st struct {
		Total struct{ Proposals, Rejected, Applied int } `json:"total"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Total.Proposals != 2 || st.Total.Rejected != 2 || st.Total.Applied != 2 {
		t.Fatalf("stats json: %d %s", code, out)
	}
	// Each rule's standing, against the enforcement of the configuration.
	earnedCLI := &cli{t: t, env: append(c.env, "SUPERSESSIOND_MAINTENANCE__ENFORCEMENT__MODE=earned")}
	code, out, _ = earnedCLI.run("", "stats", "--format", "json")
	var rules struct {
		Enforcement struct{ Mode string } `json:"enforcement"`
		Rules       []struct {
			Rule, State      string
			Decided, Correct int
			ReviewsNeeded    int `json:"reviews_needed"`
		} `json:"rules"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rules) != nil || rules.Enforcement.Mode != "earned" || len(rules.Rules) == 0 {
		t.Fatalf("stats json rules: %d %s", code, out)
	}
	for _, r := range rules.Rules {
		if r.Rule == "value_conflict" && (r.State != "probation" || r.Decided != 2 || r.Correct != 2 || r.ReviewsNeeded < 1) {
			t.Errorf("value_conflict: %+v", r)
		}
	}
	if code, out, _ = earnedCLI.run("", "stats"); code != 0 || !strings.Contains(out, "REVIEWS NEEDED") || !strings.Contains(out, "mode earned") {
		t.Fatalf("stats table rules: %d %s", code, out)
	}

	for _, args := range [][]string{
		{"proposals", "--status", "maybe"},
		{"proposals", "--min-confidence", "2"},
		{"review", "--all", "--accept", "some-id"},
		{"review", "some-id", "--accept", "--signal", "antonym"},
		{"review", "some-id", "--accept", "--dry-run"},
		{"review", "--all", "--accept", "--status", "accepted"},
		{"apply", "some-id", "--agent", "a"},
		{"stats", "--format", "yaml"},
	} {
		if code, _, errOut := c.run("", args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errOut)
		}
	}
}
