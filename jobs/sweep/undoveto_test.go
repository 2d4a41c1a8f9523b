package sweep_test

import (
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// An undo says "this is still true": it vetoes the attribute against every
// sibling recorded at or before the undo, not only the pair it reverted. The
// sweep (full and incremental), the plan's veto lookup and the guarded write
// all hold to it; a sibling recorded after the undo may still retire it.
func TestUndoVetoesEverySiblingRecordedBeforeIt(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "h1", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "h2", Agent: "a", Aspect: home, Content: "Lives in Vancouver", Protected: true},
		memtest.Attr{ID: "h3", Agent: "a", Aspect: home, Content: "Lives in Montreal"},
	)
	sweepOnce := func(full bool) {
		t.Helper()
		if _, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{Full: full}); err != nil {
			t.Fatal(err)
		}
	}
	sweepOnce(true)
	if st, by := s.Status("h1"); st != "superseded" || by != "h3" {
		t.Fatalf("h1 is %s by %q, want superseded by its newest contradicting sibling h3", st, by)
	}
	var superseded string
	if err := db.Get(&superseded, `SELECT id FROM memory_history WHERE event = 'attribute_superseded' AND metadata->>'old_attribute_id' = 'h1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := opsOf(db.DB).Undo(ctx, live(), superseded); err != nil {
		t.Fatal(err)
	}

	// h2 (protected, so never retired itself) existed at the undo: neither
	// the incremental pass the undo's change record starts, nor a full one,
	// lets it retire h1.
	sweepOnce(false)
	sweepOnce(true)
	if st, by := s.Status("h1"); st != "active" {
		t.Fatalf("h1 is %s by %q after its undo: a sibling that existed at the undo retired it", st, by)
	}
	// Nor does the guarded write, whatever the plan said.
	var applied []supersession.Applied
	err := store.InTx(ctx, db.DB, func(tx *sqlx.Tx) error {
		var err error
		applied, err = supersession.New(jobs.Deps{DB: db.DB, Logger: quiet}).Apply(ctx, tx, supersession.Actor{ChangedBy: "test", Type: "system"},
			[]supersession.Supersession{{
				Meta:       supersession.Metadata{AgentID: "a", OldAttributeID: "h1", NewAttributeID: "h2", Method: supersession.MethodHeuristic},
				OldContent: "Lives in Toronto", NewContent: "Lives in Vancouver", Reason: "test", RespectVetoes: true,
			}})
		return err
	})
	if err != nil || len(applied) != 0 {
		t.Fatalf("the write superseded h1 by h2 after the undo: %v, %v", applied, err)
	}

	// A sibling inserted after the undo but recorded (created_at) before it
	// is vetoed too; one recorded after the undo may retire h1.
	s.Add(memtest.Attr{ID: "h4", Agent: "a", Aspect: home, Content: "Lives in Ottawa"})
	sweepOnce(false)
	if st, by := s.Status("h1"); st != "active" {
		t.Fatalf("h1 is %s by %q: a sibling recorded before the undo retired it", st, by)
	}
	s.Add(memtest.Attr{ID: "h5", Agent: "a", Aspect: home, Content: "Lives in Calgary", At: time.Now().Add(time.Minute)})
	sweepOnce(false)
	if st, by := s.Status("h1"); st != "superseded" || by != "h5" {
		t.Fatalf("h1 is %s by %q, want superseded by h5, recorded after the undo", st, by)
	}
}
