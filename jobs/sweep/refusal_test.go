package sweep_test

import (
	"fmt"
	"testing"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// refuse makes the server refuse every history row written about old
// attribute old with SQLSTATE code, as a server that is full (53300), out
// of disk (53100) or out of memory (53200) refuses a write: a trigger
// raising that code. It returns the statement that lifts the refusal.
func refuse(s *memtest.Seeder, code, old string) (lift string) {
	s.Exec(fmt.Sprintf(`CREATE FUNCTION refuse_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.metadata ->> 'old_attribute_id' = %s THEN
    RAISE EXCEPTION 'refused by the test' USING ERRCODE = %s;
  END IF;
  RETURN NEW;
END $$`, quote(old), quote(code)))
	s.Exec(`CREATE TRIGGER refuse_history BEFORE INSERT ON memory_history FOR EACH ROW EXECUTE FUNCTION refuse_history()`)
	return `DROP TRIGGER refuse_history ON memory_history`
}

func quote(s string) string { return "'" + s + "'" }

// seedBusy gives agent "good" three contradictions and agent "x" one, x-1
// (older) against x-2.
func seedBusy(s *memtest.Seeder) {
	seedGood(s)
	seedX(s)
}

func seedX(s *memtest.Seeder) {
	home := s.Aspect("x", "Ana", "home")
	s.Add(
		memtest.Attr{ID: "x-1", Agent: "x", Aspect: home, Content: "Lives in Lima"},
		memtest.Attr{ID: "x-2", Agent: "x", Aspect: home, Content: "Lives in Quito"},
	)
}

// A write the server refuses as a whole (too many connections, disk full,
// out of memory) is not one row's fault: the pass stops, reports itself
// incomplete with the error, skips nothing, and leaves every record of what
// it did not decide in place, so a later pass decides the pair. Issue 29:
// such a refusal was skipped as write_failed and the pass reported
// complete, so the pair was not looked at again for a week.
func TestAServerRefusalStopsThePassAndLosesNothing(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"53300", "53100", "53200"} {
		t.Run("full/"+code, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			seedBusy(s)
			lift := refuse(s, code, "x-1")

			rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{Full: true})
			assertStopped(t, rep, err, code)
			if st, _ := s.Status("x-1"); st != "active" {
				t.Fatalf("x-1 is %s", st)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.state WHERE name = 'sweep_last_full'`); n != 0 {
				t.Fatal("the stopped pass was recorded as a complete full pass")
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id = 'x-2'`); n != 1 {
				t.Fatalf("%d change records of x-2 left: the stopped pass consumed them", n)
			}

			s.Exec(lift)
			rep, err = newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{Full: true})
			if err != nil || !rep.Complete {
				t.Fatalf("the pass after the refusal: complete=%v err=%v", rep.Complete, err)
			}
			if st, by := s.Status("x-1"); st != "superseded" || by != "x-2" {
				t.Fatalf("x-1 is %s by %q after the refusal ended", st, by)
			}
			assertGoodDecided(t, s)
		})
		t.Run("incremental/"+code, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			seedGood(s)
			if rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{}); err != nil || rep.Kind != sweep.KindFull || !rep.Complete {
				t.Fatalf("first pass: %v %+v", err, rep)
			}
			seedX(s)
			lift := refuse(s, code, "x-1")

			rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
			if rep.Kind != sweep.KindIncremental {
				t.Fatalf("kind %s, want an incremental pass", rep.Kind)
			}
			assertStopped(t, rep, err, code)
			if st, _ := s.Status("x-1"); st != "active" {
				t.Fatalf("x-1 is %s", st)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE agent_id = 'x' AND claimed_by IS NULL`); n != 2 {
				t.Fatalf("%d unclaimed change records of agent x, want 2: the stopped pass consumed them or kept its claims", n)
			}

			s.Exec(lift)
			rep, err = newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
			if err != nil || !rep.Complete || rep.Kind != sweep.KindIncremental {
				t.Fatalf("the pass after the refusal: kind=%s complete=%v err=%v", rep.Kind, rep.Complete, err)
			}
			if st, by := s.Status("x-1"); st != "superseded" || by != "x-2" {
				t.Fatalf("x-1 is %s by %q after the refusal ended", st, by)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE agent_id = 'x'`); n != 0 {
				t.Fatalf("%d change records of agent x left once decided", n)
			}
		})
	}
}

func assertStopped(t *testing.T, rep *sweep.Report, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("a pass whose write the server refused (%s) reported no error: %+v", code, rep.Skipped)
	}
	if rep.Complete || rep.Stopped != jobs.StoppedError || rep.Error == "" {
		t.Fatalf("report: complete=%v stopped=%q error=%q", rep.Complete, rep.Stopped, rep.Error)
	}
	if n := rep.Skips[supersession.SkipWriteFailed]; n != 0 {
		t.Fatalf("%d decisions skipped as %s: a server's refusal is not a bad row", n, supersession.SkipWriteFailed)
	}
}

// A stack trigger's RAISE for one row is that row's fault: it is skipped
// with its reason, the rest of its batch is written and the pass completes.
func TestAStackTriggersRaiseForOneRowSkipsThatRow(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedBusy(s)
	refuse(s, "P0001", "x-1")
	rep, err := newJob(db.DB, nil).Once(t.Context(), settings(live()), sweep.Options{})
	if err != nil || !rep.Complete {
		t.Fatalf("complete=%v err=%v", rep.Complete, err)
	}
	if rep.Skips[supersession.SkipWriteFailed] != 1 {
		t.Fatalf("skips = %v, want one %s", rep.Skips, supersession.SkipWriteFailed)
	}
	if st, _ := s.Status("x-1"); st != "active" {
		t.Fatalf("x-1 is %s without its history row", st)
	}
	assertGoodDecided(t, s)
}
