package sweep_test

import (
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// seedGood gives agent "good" three aspects with a real contradiction each.
func seedGood(s *memtest.Seeder) {
	s.Moves("good", "g", 3, "Toronto", "Vancouver")
}

func assertGoodDecided(t *testing.T, s *memtest.Seeder) {
	t.Helper()
	for _, id := range []string{"g0-1", "g1-1", "g2-1"} {
		if st, _ := s.Status(id); st != "superseded" {
			t.Fatalf("%s is %s: one bad row stopped the decisions about other rows", id, st)
		}
	}
}

// One row the driver cannot read ('infinity', which lib/pq refuses to
// scan) or whose time has no place in the order (far future) is skipped
// with its reason; every other contradiction, of this agent and others, is
// decided, and the pass reports itself complete.
func TestUnreadableTimesAreSkippedAndTheRestDecided(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedGood(s)
	home := s.Aspect("bad", "Ana", "home")
	s.Add(
		memtest.Attr{ID: "bad-1", Agent: "bad", Aspect: home, Content: "Lives in Lima"},
		memtest.Attr{ID: "bad-2", Agent: "bad", Aspect: home, Content: "Lives in Quito"},
		memtest.Attr{ID: "bad-inf", Agent: "bad", Aspect: home, Content: "Lives in Oslo"},
		memtest.Attr{ID: "bad-future", Agent: "bad", Aspect: home, Content: "Lives in Bergen"},
	)
	s.Exec(`UPDATE entity_attributes SET created_at = 'infinity' WHERE id = 'bad-inf'`)
	s.Exec(`UPDATE entity_attributes SET created_at = '2999-01-01' WHERE id = 'bad-future'`)

	rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
	if err != nil {
		t.Fatalf("sweep failed on a bad row: %v", err)
	}
	if !rep.Complete || rep.Stopped != "" {
		t.Fatalf("report: complete=%v stopped=%q", rep.Complete, rep.Stopped)
	}
	if rep.Skips[supersession.SkipBadTime] != 2 {
		t.Fatalf("skips = %v, want 2 %s", rep.Skips, supersession.SkipBadTime)
	}
	assertGoodDecided(t, s)
	if st, by := s.Status("bad-1"); st != "superseded" || by != "bad-2" {
		t.Fatalf("bad-1 is %s by %q: the readable rows of the same aspect must still be decided", st, by)
	}
	for _, id := range []string{"bad-inf", "bad-future"} {
		if st, _ := s.Status(id); st != "active" {
			t.Fatalf("%s is %s: a row without a usable time must take no part", id, st)
		}
	}
}

// A history row that the stack's own foreign key rejects (memory_history.
// memory_id must name a memory, and this attribute has none) is skipped
// with its reason; the other decisions of the same write batch, of this
// agent and of another, are written.
func TestARowTheStacksConstraintRejectsIsSkippedAlone(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("good", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "g-1", Agent: "good", Aspect: home, Content: "Lives in Toronto", MemoryID: "m-g1"},
		memtest.Attr{ID: "g-2", Agent: "good", Aspect: home, Content: "Lives in Vancouver", MemoryID: "m-g2"},
	)
	job := s.Aspect("fk", "Kim", "job")
	s.Add(
		memtest.Attr{ID: "fk-1", Agent: "fk", Aspect: job, Content: "Works at Figma"}, // no memory: its history row is refused
		memtest.Attr{ID: "fk-2", Agent: "fk", Aspect: job, Content: "Works at Stripe"},
	)
	s.Exec(`ALTER TABLE memory_history ADD CONSTRAINT stack_history_memory FOREIGN KEY (memory_id) REFERENCES memories (id) NOT VALID`)

	rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
	if err != nil {
		t.Fatalf("sweep failed: %v", err)
	}
	if rep.Skips[supersession.SkipWriteFailed] != 1 || rep.Supersessions != 1 {
		t.Fatalf("supersessions=%d skips=%v, want 1 written and 1 %s", rep.Supersessions, rep.Skips, supersession.SkipWriteFailed)
	}
	if st, _ := s.Status("g-1"); st != "superseded" {
		t.Fatalf("g-1 is %s: the rejected row rolled back the rest of its batch", st)
	}
	if st, _ := s.Status("fk-1"); st != "active" {
		t.Fatalf("fk-1 is %s: a supersession without its history row", st)
	}
}

// In a SQL_ASCII database the stack may store any bytes; content that is
// not UTF-8 is skipped with its reason, valid non-ASCII content is decided,
// and nothing fails.
func TestInvalidBytesInASQLASCIIDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEncoded(t, "SQL_ASCII")
	s := memtest.New(t, db.DB)
	seedGood(s)
	home := s.Aspect("latin", "Jo", "home")
	s.Add(
		memtest.Attr{ID: "l-1", Agent: "latin", Aspect: home, Content: "Lives in Zürich"},
		memtest.Attr{ID: "l-2", Agent: "latin", Aspect: home, Content: "Lives in Genève"},
		memtest.Attr{ID: "l-bad", Agent: "latin", Aspect: home, Content: "placeholder"},
	)
	s.Exec(`UPDATE entity_attributes SET content = E'Lives in M\xfcnchen' WHERE id = 'l-bad'`)

	rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
	if err != nil {
		t.Fatalf("sweep failed: %v", err)
	}
	if rep.Skips[supersession.SkipInvalidUTF8] != 1 {
		t.Fatalf("skips = %v, want one %s", rep.Skips, supersession.SkipInvalidUTF8)
	}
	assertGoodDecided(t, s)
	if st, by := s.Status("l-1"); st != "superseded" || by != "l-2" {
		t.Fatalf("l-1 is %s by %q: valid non-ASCII content must still be decided", st, by)
	}
}

// A pass that fails says so: it is never reported as a budget stop.
func TestAFailedPassIsReportedAsFailed(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedGood(s)
	s.Exec(`ALTER TABLE entity_aspects RENAME TO entity_aspects_gone`)
	rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
	if err == nil {
		t.Fatal("the sweep cannot load its aspects and must fail")
	}
	if rep.Complete || rep.Stopped != "error" || rep.Error == "" {
		t.Fatalf("report: complete=%v stopped=%q error=%q", rep.Complete, rep.Stopped, rep.Error)
	}
	if text := rep.Text(); !strings.Contains(text, "FAILED") || strings.Contains(text, "time budget") {
		t.Fatalf("text report misstates the failure:\n%s", text)
	}
}
