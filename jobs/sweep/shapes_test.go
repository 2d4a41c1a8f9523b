package sweep_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// A stack whose memory_history.metadata is text, not jsonb: migrate builds
// its unique and veto indexes on the column read as jsonb, and the sweep,
// the proposals' once-only insert and the operator's review and undo all
// work on it.
func TestTextMetadataHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Exec(`DROP INDEX supersessiond_history_one_proposal, supersessiond_history_one_review, supersessiond_history_one_apply,
		supersessiond_history_one_revert, supersessiond_history_vetoes, supersessiond_history_vetoes_new, supersessiond_history_agent_created,
		supersessiond_history_proposals, supersessiond_history_old_attribute, supersessiond_history_new_attribute`)
	s.Exec(`ALTER TABLE memory_history ALTER COLUMN metadata TYPE text`)
	res, err := schema.Migrate(ctx, db.DB, schema.ReferencePlan(), schema.Options{})
	if err != nil || !res.Layout.Reports[schema.Supersession].OK() {
		t.Fatalf("migrate: %v", err)
	}
	names := res.Layout.Names
	s.Moves("a", "t", 2, "Toronto", "Vancouver")

	log := slog.New(slog.DiscardHandler)
	engine := supersession.New(jobs.Deps{DB: db.DB, Names: names, Logger: log, Registry: prometheus.NewRegistry()})
	sw := sweep.New(jobs.Deps{DB: db.DB, Names: names, Logger: log}, engine)
	for range 2 {
		if _, err := sw.Once(ctx, settings(shadow()), sweep.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`); n != 2 {
		t.Fatalf("%d proposals after two shadow sweeps, want 2 (once per pair)", n)
	}
	var proposal string
	if err := db.Get(&proposal, `SELECT id FROM memory_history WHERE event = 'supersession_proposal' AND metadata::jsonb ->> 'old_attribute_id' = 't0-1'`); err != nil {
		t.Fatal(err)
	}
	ops := audit.New(db.DB, names, engine)
	if _, err := ops.Review(ctx, proposal, false, "not a move"); err != nil {
		t.Fatal(err)
	}
	r, err := sw.Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 1 || r.Skips[supersession.SkipVetoed] != 1 {
		t.Fatalf("live sweep: %d supersessions, skips %v; want the rejected pair left alone", r.Supersessions, r.Skips)
	}
	var applied string
	if err := db.Get(&applied, `SELECT id FROM memory_history WHERE event = 'attribute_superseded'`); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Undo(ctx, live(), applied); err != nil {
		t.Fatalf("undo on a text metadata column: %v", err)
	}
	if st, _ := s.Status("t1-1"); st != "active" {
		t.Fatalf("t1-1 is %s after the undo", st)
	}
}
