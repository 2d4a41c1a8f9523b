package sweep_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// An operator's undo must stay undone even when a sweep decided the pair
// before the undo and writes after it. The sweep is made to stall between
// deciding and writing by a row lock another session holds on the first
// attribute of its write batch; meanwhile the operator supersedes the
// second pair by hand and undoes it; then the lock goes. The sweep must
// find the undo under its own row lock and leave the pair alone.
func TestUndoDuringAStalledSweepWriteStaysUndone(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("a", "Sam", "home")
	job := s.Aspect("a", "Sam", "job")
	s.Add(
		memtest.Attr{ID: "x-old", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "x-new", Agent: "a", Aspect: home, Content: "Lives in Vancouver"},
		memtest.Attr{ID: "y-old", Agent: "a", Aspect: job, Content: "Works at Figma"},
		memtest.Attr{ID: "y-new", Agent: "a", Aspect: job, Content: "Works at Stripe"},
	)
	ctx := t.Context()

	holder, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `SELECT 1 FROM entity_attributes WHERE id = 'x-old' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	swept := make(chan error, 1)
	go func() {
		_, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{})
		swept <- err
	}()
	waitForLockWait(t, ctx, db)

	applied, err := opsOf(db.DB).Supersede(ctx, live(), audit.SupersedeRequest{Agent: "a", New: "y-new", Olds: []string{"y-old"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opsOf(db.DB).Undo(ctx, live(), applied[0].HistoryID); err != nil {
		t.Fatal(err)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status("y-old"); st != "active" {
		t.Fatalf("y-old is %s: the sweep redid a supersession the operator had undone", st)
	}
	if st, by := s.Status("x-old"); st != "superseded" || by != "x-new" {
		t.Fatalf("x-old is %s by %q: the sweep's other decision must still be written", st, by)
	}
	var last string
	if err := db.Get(&last, `SELECT event FROM memory_history WHERE metadata ->> 'old_attribute_id' = 'y-old'
		ORDER BY created_at DESC, id DESC LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if last != "supersession_reverted" {
		t.Fatalf("y-old's latest history event is %s, want supersession_reverted", last)
	}
}

// A rejection recorded while a sweep stalls before writing is respected too.
func TestRejectionDuringAStalledSweepWriteIsRespected(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("a", "Sam", "home")
	job := s.Aspect("a", "Sam", "job")
	s.Add(
		memtest.Attr{ID: "x-old", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "x-new", Agent: "a", Aspect: home, Content: "Lives in Vancouver"},
		memtest.Attr{ID: "y-old", Agent: "a", Aspect: job, Content: "Works at Figma"},
		memtest.Attr{ID: "y-new", Agent: "a", Aspect: job, Content: "Works at Stripe"},
	)
	ctx := t.Context()
	// A proposal for the pair, from an earlier shadow sweep.
	if _, err := newJob(db.DB, nil).Once(ctx, settings(shadow()), sweep.Options{}); err != nil {
		t.Fatal(err)
	}
	var proposal string
	if err := db.Get(&proposal, `SELECT id FROM memory_history WHERE event = 'supersession_proposal'
		AND metadata ->> 'old_attribute_id' = 'y-old'`); err != nil {
		t.Fatal(err)
	}
	holder, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `SELECT 1 FROM entity_attributes WHERE id = 'x-old' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	swept := make(chan error, 1)
	go func() {
		_, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{})
		swept <- err
	}()
	waitForLockWait(t, ctx, db)
	if _, err := opsOf(db.DB).Review(ctx, proposal, false, "not a move"); err != nil {
		t.Fatal(err)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status("y-old"); st != "active" {
		t.Fatalf("y-old is %s: a rejected pair was applied", st)
	}
}

// waitForLockWait returns once some session of the test database waits on
// a row lock.
func waitForLockWait(t *testing.T, ctx context.Context, db *pgtest.DB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.GetContext(ctx, &n, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the sweep never waited on the held row lock")
}

// opsOf is the operator commands on a test database of the reference schema.
func opsOf(db *sqlx.DB) *audit.Ops {
	engine := supersession.New(jobs.Deps{DB: db, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	return audit.New(db, nil, engine)
}
