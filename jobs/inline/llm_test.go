package inline_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// transport is an update no heuristic reads ("Drives a 2011 Corolla" →
// "Bikes everywhere these days" share no word): only the LLM sees it.
const transport = `{"aspect_id":"t","entity":"Sam","aspect":"life","statements":[` +
	`{"id":"t1","text":"Drives a 2011 Corolla"},{"id":"t2","text":"Bikes everywhere these days"}],"supersedes":[["t1","t2"]]}`

// transportIn adds transport's two statements to asp (a large aspect with
// a digest: t1 in it, t2 not yet classified), runs the full pass that
// stores the digest, and starts a scripted LLM that answers from
// transport's truth; cfg is returned pointing at it.
func transportIn(t *testing.T, db *pgtest.DB, s *memtest.Seeder, cfg *config.Config, asp string) (*llmtest.Server, *config.Config) {
	t.Helper()
	s.Add(
		memtest.Attr{ID: "t1", Agent: "a", Aspect: asp, Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: "t2", Agent: "a", Content: "Bikes everywhere these days"},
	)
	fullPass(t, db, cfg, "a", asp)
	truth, err := llmtest.TruthFromAspects(strings.NewReader(transport))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, truth)
	return srv, withLLM(cfg, srv.Endpoint(), time.Minute)
}

// sweepOnce runs one sweep under cfg, as the daemon's next tick would.
func sweepOnce(t *testing.T, db *pgtest.DB, cfg *config.Config) {
	t.Helper()
	deps := jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		LLM: llm.NewProvider(func(string) string { return "" }, nil)}
	if _, err := sweep.New(deps, supersession.New(deps)).Once(context.Background(), daemon.SettingsOf(cfg).Sweep, sweep.Options{}); err != nil {
		t.Fatal(err)
	}
}

// With the LLM judge on, a batch still reads only what its classification
// can meet through the aspect's digest (it adds its keys, as without the
// judge), decides what the heuristics read, and hands the aspect to the
// background asker, which reads it whole and asks about the pair no
// heuristic reads. The answer retires t1: the aspect stays recorded as
// owed an answer, and the sweep decides it. An aspect where the LLM had
// nothing to say keeps no record: nothing loops.
func TestLLMBatchIsNarrowedAndItsAnswerIsDecidedBySweep(t *testing.T) {
	t.Parallel()
	db, s, cfg, asp := largeAspect(t)
	home := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "h1", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "h2", Agent: "a", Content: "Lives in Winnipeg"},
	)
	_, cfg = transportIn(t, db, s, cfg, asp)
	runLLMHook(t, db, cfg, time.Minute)

	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'h2'`, home)
	eventually(t, "h1 superseded by h2", func() bool { st, by := s.Status("h1"); return st == "superseded" && by == "h2" })
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 't2'`, asp)
	owed := `SELECT count(*) FROM supersessiond.changes WHERE aspect_id = $1 AND attribute_id = ''`
	eventually(t, "t2's classification consumed", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0
	})
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp); n != 2 {
		t.Fatalf("%d digest fragments, want 2 (the full pass's and the narrowed batch's)", n)
	}
	eventually(t, "the answer stored and the aspect given back to the sweep", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`) > 0 &&
			s.Count(owed+` AND claimed_by IS NULL`, asp) == 1
	})
	eventually(t, "nothing owed in the aspect the heuristics decided", func() bool { return s.Count(owed, home) == 0 })
	if st, _ := s.Status("t1"); st != "active" {
		t.Fatalf("t1 is %s before the sweep: the hook wrote a semantic decision", st)
	}

	sweepOnce(t, db, cfg)
	if st, by := s.Status("t1"); st != "superseded" || by != "t2" {
		t.Fatalf("t1 is %s by %q after the sweep, want superseded by t2", st, by)
	}
	if n := s.Count(owed, asp); n != 0 {
		t.Fatalf("%d owed records left after the sweep", n)
	}
}

// A window the LLM fails to answer is not dropped: the background asker
// gives the aspect's record back, unclaimed, so the sweep asks again (a
// restart loses nothing either: the record is in the table, and a claim
// of a process that died expires).
func TestFailedWindowLeavesTheAspectOwedToTheSweep(t *testing.T) {
	t.Parallel()
	db, s, cfg, asp := largeAspect(t)
	srv, cfg := transportIn(t, db, s, cfg, asp)
	srv.Set(llmtest.Fault{Kind: llmtest.Status500})
	runLLMHook(t, db, cfg, time.Minute)

	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 't2'`, asp)
	eventually(t, "the LLM asked, and the aspect given back to the sweep", func() bool {
		return srv.Requests() > 0 && s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 &&
			s.Count(`SELECT count(*) FROM supersessiond.changes WHERE aspect_id = $1 AND attribute_id = '' AND claimed_by IS NULL`, asp) == 1
	})
	if n := s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`); n != 0 {
		t.Fatalf("%d windows answered by a failing LLM", n)
	}
}

// In an aspect that fits one window, the question the background asker
// puts is the sweep's own: the sweep decides with the answer stored and
// asks the LLM nothing again.
func TestSweepDecidesWithTheAskersAnswer(t *testing.T) {
	t.Parallel()
	truth, err := llmtest.TruthFromAspects(strings.NewReader(transport))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, truth)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "life")
	s.Add(
		memtest.Attr{ID: "t1", Agent: "a", Aspect: asp, Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: "t2", Agent: "a", Content: "Bikes everywhere these days"},
	)
	cfg := withLLM(cfgWithPoll(time.Hour, db.URL), srv.Endpoint(), time.Minute)
	runLLMHook(t, db, cfg, time.Minute)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 't2'`, asp)
	eventually(t, "the answer stored and the aspect given back to the sweep", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`) == 1 &&
			s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id = '' AND claimed_by IS NULL`) == 1
	})
	asked := srv.Requests()
	sweepOnce(t, db, cfg)
	if st, by := s.Status("t1"); st != "superseded" || by != "t2" {
		t.Fatalf("t1 is %s by %q after the sweep, want superseded by t2", st, by)
	}
	if n := srv.Requests() - asked; n != 0 {
		t.Fatalf("the sweep asked the LLM %d times again", n)
	}
}
