package inline_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
)

// On a store a new row is the hook's to decide at once, as a
// classification is: a Honcho observation that contradicts an older one of
// its scope retires it (soft delete), and a mem0 memory its older one
// (deleted), without waiting for a sweep.
func TestHookDecidesNewRowsOfAStore(t *testing.T) {
	t.Parallel()
	type adder func(content string, at time.Time) error
	cases := []struct {
		name   string
		store  schema.Store
		create func(t *testing.T, db *pgtest.DB) (tables string, add adder)
		live   string // a query counting the live rows of a content ($1)
	}{
		{"honcho", schema.StoreHoncho, func(t *testing.T, db *pgtest.DB) (string, adder) {
			h, err := storetest.CreateHoncho(t.Context(), db.DB, storetest.HonchoShape{Schema: "honcho", Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			return "honcho", func(content string, at time.Time) error {
				_, err := h.Observe(t.Context(), storetest.Observation{Workspace: "acme", Observer: "sam", Content: content, CreatedAt: at})
				return err
			}
		}, `SELECT count(*) FROM honcho.documents WHERE content = $1 AND deleted_at IS NULL`},
		{"mem0", schema.StoreMem0, func(t *testing.T, db *pgtest.DB) (string, adder) {
			m, err := storetest.CreateMem0(t.Context(), db.DB, storetest.Mem0Shape{Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			return "", func(content string, at time.Time) error {
				_, err := m.Add(t.Context(), storetest.Memory{Data: content, UserID: "alice", CreatedAt: at})
				return err
			}
		}, `SELECT count(*) FROM public.mem0 WHERE payload ->> 'data' = $1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			tables, add := tc.create(t, db)
			names, err := storetest.Migrate(t.Context(), db.DB, storetest.Plan(daemon.DefaultPlan(), tc.store, tables))
			if err != nil {
				t.Fatal(err)
			}
			deps := jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Names: names}
			h := inline.New(deps, supersession.New(deps))
			cfg := daemon.SettingsOf(config.Default()).Inline
			t0 := time.Now().Add(-time.Hour)
			if err := add("Lives in Toronto", t0); err != nil {
				t.Fatal(err)
			}
			if err := h.Drain(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
			if err := add("Lives in Halifax", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := h.Drain(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
			for content, want := range map[string]int{"Lives in Toronto": 0, "Lives in Halifax": 1} {
				var n int
				if err := db.Get(&n, tc.live, content); err != nil || n != want {
					t.Errorf("%s: %d live (%v), want %d", content, n, err, want)
				}
			}
			var left int
			if err := db.Get(&left, `SELECT count(*) FROM supersessiond.classified`); err != nil || left != 0 {
				t.Errorf("%d outbox rows left (%v)", left, err)
			}
		})
	}
}
