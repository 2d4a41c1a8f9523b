package inline_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
)

// A batch whose write the server refuses as a whole (too many connections,
// disk full, out of memory: here a trigger raising that SQLSTATE) consumes
// nothing: the classification's outbox row and change record stay, its
// claim is given back without counting an attempt, and the hook retries
// after a pause (several times: never given up for the server's fault).
// Once the server takes writes again the pair is decided. Issue 29: the
// refusal was skipped as a bad row and the outbox row consumed.
func TestAServerRefusalConsumesNothingAndIsRetried(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"53300", "53100", "53200"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			asp := s.Aspect("a", "Sam", "home")
			s.Add(
				memtest.Attr{ID: "h1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
				memtest.Attr{ID: "h2", Agent: "a", Content: "Lives in Winnipeg"}, // not classified yet
			)
			s.Exec(`DELETE FROM supersessiond.classified; DELETE FROM supersessiond.changes`)
			s.Exec(`CREATE SEQUENCE refusals`)
			s.Exec(fmt.Sprintf(`CREATE FUNCTION refuse_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM nextval('refusals'); -- a sequence outlives the rollback: it counts the attempts
  RAISE EXCEPTION 'refused by the test' USING ERRCODE = '%s';
END $$`, code))
			s.Exec(`CREATE TRIGGER refuse_history BEFORE INSERT ON memory_history FOR EACH ROW EXECUTE FUNCTION refuse_history()`)
			refusals := func() int {
				return s.Count(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM refusals`)
			}

			r := startHook(t, db, cfgWithPoll(50*time.Millisecond, db.URL))
			s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'h2'`, asp)
			eventually(t, "the refused batch retried twice", func() bool { return refusals() >= 3 })
			if st, _ := s.Status("h1"); st != "active" {
				t.Fatalf("h1 is %s", st)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.classified WHERE attribute_id = 'h2' AND attempts <= 1`); n != 1 {
				t.Fatalf("%d outbox rows of h2 with at most one attempt counted: the refused batch consumed it or counted the server's refusals", n)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id = 'h2'`); n != 1 {
				t.Fatalf("%d change records of h2: the refused batch consumed it", n)
			}
			if err := r.hook.Ready(); err == nil {
				t.Fatal("a hook whose drains the server refuses says it is ready")
			}
			if v := testutil.ToFloat64(r.metrics.Failed.WithLabelValues("transient")); v < 2 {
				t.Fatalf("%v transient drain failures counted", v)
			}

			s.Exec(`DROP TRIGGER refuse_history ON memory_history`)
			eventually(t, "h1 superseded once the server takes writes", func() bool {
				st, by := s.Status("h1")
				return st == "superseded" && by == "h2"
			})
			eventually(t, "outbox drained", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
			if v := testutil.ToFloat64(r.metrics.Processed.WithLabelValues("given_up")); v != 0 {
				t.Fatalf("%v classifications given up", v)
			}
			eventually(t, "ready again", func() bool { return r.hook.Ready() == nil })
		})
	}
}

// On a server without slots to spare for the daemon (the guard's minimum
// out of reach) the hook claims nothing and opens no LISTEN connection: it
// waits, counted, and leaves the classification in the outbox untouched.
func TestACrowdedServerIsLeftToTheAgent(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "h1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "h2", Agent: "a", Aspect: asp, Content: "Lives in Winnipeg"},
	)
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	guard := store.NewGuard(db.DB, store.GuardOptions{Min: 1 << 20, Registry: reg})
	deps := jobs.Deps{DB: db.DB, Logger: log, Registry: reg, Guard: guard}
	h := inline.New(deps, supersession.New(deps))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Run(ctx, func() inline.Settings { return settings(cfgWithPoll(50*time.Millisecond, db.URL)) })
	}()
	defer func() { cancel(); <-done }()
	eventually(t, "the drain and the listener waiting for room", func() bool {
		m := guard.Metrics().Waits
		return testutil.ToFloat64(m.WithLabelValues("inline")) >= 1 && testutil.ToFloat64(m.WithLabelValues("listen")) >= 1
	})
	if n := s.Count(`SELECT count(*) FROM supersessiond.classified WHERE attempts = 0 AND claimed_by IS NULL`); n != 2 {
		t.Fatalf("%d untouched outbox rows, want 2: the hook claimed on a crowded server", n)
	}
	if st, _ := s.Status("h1"); st != "active" {
		t.Fatalf("h1 is %s", st)
	}
	if n := s.Count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`); n != 0 {
		t.Fatal("the hook opened its LISTEN connection on a crowded server")
	}
	if err := h.Ready(); err == nil {
		t.Fatal("a hook without its listener says it is ready")
	}
}
