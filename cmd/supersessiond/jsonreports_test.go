package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// jsonReportCommands are every command with a --json report, each with
// the name of its job.
var jsonReportCommands = []struct {
	job  string
	args []string
}{
	{"sweep", []string{"sweep", "--once", "--json"}},
	{"sweep", []string{"sweep", "--once", "--dry-run", "--json"}},
	{"compaction", []string{"compact", "--once", "--json"}},
	{"tombstones", []string{"reconcile", "--once", "--json"}},
}

// Every --json report follows one convention: the same names for the same
// things, and durations in seconds, as numbers, under *_seconds names.
func TestEveryJSONReportFollowsTheConvention(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "a1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "a2", Agent: "a", Aspect: asp, Content: "Lives in Vancouver", Protected: true},
		memtest.Attr{ID: "a3", Agent: "a", Aspect: asp, Content: "Lives in Lisbon"},
	)
	s.Exec(`INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status)
		VALUES ('a', now() - interval '1 hour', NULL, NULL, 'pending'), ('a', now(), 1, 2, 'pending')`)
	reconcileWorld(t, db.DB)

	for _, mode := range []string{"true", "false"} {
		c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE="+mode)
		for _, cmd := range jsonReportCommands {
			code, out, errOut := c.run("", cmd.args...)
			if code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("%v (shadowMode %s): exit %d, want one line of JSON:\n%s\n%s", cmd.args, mode, code, out, errOut)
			}
			var rep map[string]any
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: not JSON: %v\n%s", cmd.args, err, out)
			}
			checkCommonFields(t, cmd.job, rep)
			checkDurations(t, cmd.args[0], "", rep)
		}
	}
}

func checkCommonFields(t *testing.T, job string, rep map[string]any) {
	t.Helper()
	if rep["job"] != job {
		t.Errorf("%s: job %v", job, rep["job"])
	}
	if id, ok := rep["run_id"].(string); !ok || len(id) != 16 {
		t.Errorf("%s: run_id %v", job, rep["run_id"])
	}
	if m := rep["mode"]; m != "live" && m != "shadow" {
		t.Errorf("%s: mode %v", job, m)
	}
	if at, ok := rep["started_at"].(string); !ok {
		t.Errorf("%s: started_at %v", job, rep["started_at"])
	} else if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
		t.Errorf("%s: started_at: %v", job, err)
	}
	if d, ok := rep["duration_seconds"].(float64); !ok || d < 0 || d > 60 {
		t.Errorf("%s: duration_seconds %v", job, rep["duration_seconds"])
	}
	if rep["complete"] != true || rep["stopped"] != "" {
		t.Errorf("%s: complete %v, stopped %v", job, rep["complete"], rep["stopped"])
	}
	skipped, ok := rep["skipped"].([]any)
	if !ok {
		t.Fatalf("%s: skipped must be a list: %v", job, rep["skipped"])
	}
	for _, s := range skipped {
		m, _ := s.(map[string]any)
		if _, ok := m["reason"].(string); !ok {
			t.Errorf("%s: a skip without a reason: %v", job, s)
		}
		if _, ok := m["count"].(float64); !ok {
			t.Errorf("%s: a skip without a count: %v", job, s)
		}
	}
	if job != "tombstones" && len(skipped) == 0 {
		t.Errorf("%s: the seeded data has skips (a protected row, a fresh event), none listed", job)
	}
}

// timeWords are the words of a key that say it holds an amount of time.
var timeWords = map[string]bool{"duration": true, "budget": true, "age": true, "after": true, "lookback": true, "elapsed": true, "took": true}

// checkDurations walks a report: a key about time (a duration, a budget,
// an age, a period) ends in _seconds and holds a number, and no string
// anywhere is a duration ("31.19ms").
func checkDurations(t *testing.T, cmd, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "." + k
			timeLike := false
			for _, w := range strings.Split(k, "_") {
				timeLike = timeLike || timeWords[w]
			}
			// beyond_lookback counts events, not time.
			if timeLike && !strings.HasPrefix(k, "beyond_") && !strings.HasSuffix(k, "_seconds") {
				t.Errorf("%s: %s is about time but not named *_seconds", cmd, p)
			}
			if strings.HasSuffix(k, "_seconds") {
				if _, ok := x.(float64); !ok {
					t.Errorf("%s: %s is %T, want a number", cmd, p, x)
				}
			}
			checkDurations(t, cmd, p, x)
		}
	case []any:
		for _, x := range v {
			checkDurations(t, cmd, path+"[]", x)
		}
	case string:
		if _, err := time.ParseDuration(v); err == nil {
			t.Errorf("%s: %s is a duration as a string (%q)", cmd, path, v)
		}
	}
}
