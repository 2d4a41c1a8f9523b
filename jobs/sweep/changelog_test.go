package sweep_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// logBuffer captures a JSON log, one decoded object per line.
type logBuffer struct{ proctest.Buffer }

func (l *logBuffer) logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level}))
}

// lines returns the records with the message msg.
func (l *logBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

func sweepLogged(t *testing.T, level slog.Level, shadowMode bool) (*logBuffer, *pgtest.DB, *sweep.Report) {
	t.Helper()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	long := s.Aspect("a", "Sam", "work")
	s.Add(
		memtest.Attr{ID: "w1", Agent: "a", Aspect: long, Content: "Works at Figma " + strings.Repeat("on the design tools team, ", 8)},
		memtest.Attr{ID: "w2", Agent: "a", Aspect: long, Content: "No longer works at Figma " + strings.Repeat("on the design tools team, ", 8)},
	)
	var buf logBuffer
	deps := jobs.Deps{DB: db.DB, Logger: buf.logger(level)}
	cfg := live()
	if shadowMode {
		cfg = shadow()
	}
	r, err := sweep.New(deps, supersession.New(deps)).Once(context.Background(), settings(cfg), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &buf, db, r
}

// Every applied supersession is one log line saying what changed.
func TestSweepLogsEachSupersession(t *testing.T) {
	t.Parallel()
	buf, db, r := sweepLogged(t, slog.LevelInfo, false)
	lines := buf.lines(t, "supersession applied")
	if r.Supersessions != 3 || len(lines) != r.Supersessions {
		t.Fatalf("%d supersessions, %d log lines", r.Supersessions, len(lines))
	}
	byOld := map[string]map[string]any{}
	for _, l := range lines {
		byOld[l["old_attribute_id"].(string)] = l
		for _, field := range []string{"history_id", "agent_id", "new_attribute_id", "old_content", "new_content", "signals", "confidence", "method", "run_id"} {
			if _, ok := l[field]; !ok {
				t.Errorf("line lacks %s: %v", field, l)
			}
		}
		if l["source"] != "sweep" {
			t.Errorf("source %v, want sweep", l["source"])
		}
		for _, c := range []string{"old_content", "new_content"} {
			if n := utf8.RuneCountInString(l[c].(string)); n > 80 {
				t.Errorf("%s is %d characters, want at most 80", c, n)
			}
		}
	}
	a1 := byOld["a1"]
	if a1 == nil || a1["old_content"] != "Lives in Toronto" || a1["new_content"] != "Lives in Vancouver" || a1["agent_id"] != "a" ||
		a1["signals"] != "value_conflict" || a1["confidence"].(float64) < 0.7 {
		t.Fatalf("a1's line: %v", a1)
	}
	var history string
	if err := db.Get(&history, `SELECT id FROM memory_history WHERE event = 'attribute_superseded' AND metadata ->> 'old_attribute_id' = 'a1'`); err != nil {
		t.Fatal(err)
	}
	if a1["history_id"] != history {
		t.Fatalf("history_id %v, want %s", a1["history_id"], history)
	}
	if w1 := byOld["w1"]; w1 == nil || !strings.HasSuffix(w1["old_content"].(string), "…") {
		t.Fatalf("a long content is clipped with an ellipsis: %v", w1)
	}
	if n := len(buf.lines(t, "supersession pair examined")); n != 0 {
		t.Fatalf("info level logs no per-pair lines, got %d", n)
	}
}

// Proposals are summarised per batch, with counts, not one line a row; at
// debug level each pair examined has its line.
func TestSweepLogsProposalsPerBatchAndPairsAtDebug(t *testing.T) {
	t.Parallel()
	buf, _, r := sweepLogged(t, slog.LevelDebug, true)
	batches := buf.lines(t, "supersession proposals written")
	if r.ProposalsShadow != 3 || len(batches) != 1 {
		t.Fatalf("%d proposals must be one line, got %d", r.ProposalsShadow, len(batches))
	}
	if b := batches[0]; b["shadow"].(float64) != 3 || b["review"].(float64) != 0 || b["source"] != "sweep" {
		t.Fatalf("batch line: %v", b)
	}
	if n := len(buf.lines(t, "supersession applied")); n != 0 {
		t.Fatalf("shadow mode applies nothing, yet %d lines", n)
	}
	pairs := buf.lines(t, "supersession pair examined")
	if len(pairs) != r.Pairs {
		t.Fatalf("%d pairs examined, %d debug lines", r.Pairs, len(pairs))
	}
	decided := 0
	for _, p := range pairs {
		if p["decided"] == true {
			decided++
			if p["outcome"] != "propose_shadow" || p["confidence"].(float64) < 0.7 || p["signals"] == "" {
				t.Errorf("a decided pair: %v", p)
			}
		}
		if p["old_attribute_id"] == "a2" && p["new_attribute_id"] == "a4" && (p["decided"] != false || p["outcome"] != "none") {
			t.Errorf("a compatible pair is examined and not decided: %v", p)
		}
	}
	if decided != 3 {
		t.Fatalf("%d decided pairs, want 3", decided)
	}
}
