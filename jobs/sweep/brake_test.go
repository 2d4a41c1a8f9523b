package sweep_test

import (
	"sync/atomic"
	"testing"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// mutationsFrozen (or shadowMode) turned on while a live sweep runs stops
// its supersessions at the next write batch: the rest of the pass only
// proposes.
func TestBrakeEngagedMidRunStopsSupersessions(t *testing.T) {
	t.Parallel()
	for _, brake := range []string{"mutationsFrozen", "shadowMode"} {
		t.Run(brake, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			s.Moves("a", "m", 10, "Toronto", "Vancouver")

			braked := config.Default()
			if brake == "mutationsFrozen" {
				braked.Memory.PipelineV2.MutationsFrozen = true
			} else {
				braked.Memory.PipelineV2.ShadowMode = true
			}
			var asked atomic.Int32
			deps := jobs.Deps{DB: db.DB, Brake: func() bool {
				if asked.Add(1) > 1 { // the operator pulls the brake after the first batch
					return daemon.SettingsOf(braked).Brake
				}
				return daemon.SettingsOf(live()).Brake
			}}
			sw := sweep.New(deps, supersession.New(deps))
			sw.BatchAspects = 2 // five batches, each its own write
			rep, err := sw.Once(t.Context(), settings(live()), sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Supersessions != 2 || rep.ProposalsShadow != 8 || rep.Braked != 8 {
				t.Fatalf("supersessions=%d shadow proposals=%d braked=%d, want 2, 8, 8", rep.Supersessions, rep.ProposalsShadow, rep.Braked)
			}
			if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); n != 2 {
				t.Fatalf("%d attributes superseded, want only the first batch's 2", n)
			}
		})
	}
}
