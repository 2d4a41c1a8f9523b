package tombstones_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// Shadow mode and the mutationsFrozen brake: the pass reports what it would
// do and changes nothing: no row written, deleted, or even locked.
func TestShadowAndFrozenCountButChangeNothing(t *testing.T) {
	t.Parallel()
	modes := map[string]func(c *config.Config){
		"shadowMode":      func(c *config.Config) { c.Memory.PipelineV2.ShadowMode = true },
		"mutationsFrozen": func(c *config.Config) { c.Memory.PipelineV2.MutationsFrozen = true },
	}
	for name, set := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			// P is preserved by a first live pass; then its dependent goes, so a
			// pass would release it. T1 would be preserved, T2 and X deleted.
			world(t, db.DB,
				doc{id: "P", deleted: "old", superseded: true},
				doc{id: "DP", sources: `["P"]`},
			)
			pass(t, db.DB, testConfig(500))
			if _, err := db.Exec(`DELETE FROM documents WHERE id = 'DP'`); err != nil {
				t.Fatal(err)
			}
			world(t, db.DB,
				doc{id: "T1", deleted: "old", superseded: true},
				doc{id: "T2", deleted: "old", superseded: true},
				doc{id: "X", deleted: "old"},
				doc{id: "Y", deleted: "young", superseded: true},
				doc{id: "D", sources: `["T1", "X", "Y"]`},
			)
			sum := checksum(t, db.DB)
			for _, batch := range []int{1, 2, 500} {
				cfg := testConfig(batch)
				set(cfg)
				r := pass(t, db.DB, cfg)
				if !r.Shadow() || r.WouldPreserve != 1 || r.WouldDelete != 2 || r.WouldRelease != 1 || r.Examined != 3 || r.Rechecked != 1 {
					t.Fatalf("batch %d: shadow report: %+v", batch, r)
				}
				if r.Preserved != 0 || r.Deleted != 0 || r.Released != 0 {
					t.Fatalf("batch %d: shadow pass claims changes: %+v", batch, r)
				}
				if got := checksum(t, db.DB); got != sum {
					t.Fatalf("batch %d: shadow pass changed or locked rows", batch)
				}
				if r.Backlog != 3 || r.Held != 1 {
					t.Fatalf("batch %d: backlog %d held %d, want 3 and 1", batch, r.Backlog, r.Held)
				}
			}
			// The live pass then does exactly what the shadow pass said.
			r := pass(t, db.DB, testConfig(500))
			if r.Preserved != 1 || r.Deleted != 2 || r.Released != 1 {
				t.Fatalf("live pass after shadow: %+v", r)
			}
		})
	}
}

// Several passes at once (four daemons, or the CLI beside daemons), each
// with its own connections, over a generated corpus: no error, no deadlock,
// and no row handled twice: the reports add up to exactly what one pass
// would do, and the final state is the oracle's. Then the same for releases.
func TestConcurrentPassesNeverDoubleHandle(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := bench.GenerateTombstones(ctx, db.DB, bench.TombstoneCorpus{
		Documents: 20_000, Workspaces: 4, SoftDeleted: 4_000, SupersededShare: 0.5,
		DerivedShare: 0.5, CrossWorkspaceShare: 0.1, MalformedShare: 0.05, YoungShare: 0.05,
		Dim: 4, Seed: 0.1,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(7)
	minAge := cfg.Maintenance.Tombstones.MinAge

	run := func(round string) (kept, dropped, released int) {
		const passes = 4
		reports := make([]*tombstones.Report, passes)
		errs := make([]error, passes)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range passes {
			pool := ownPool(t, db)
			wg.Go(func() {
				<-start
				reports[i], errs[i] = newJob(pool, tombstones.Options{}).Reconcile(ctx, settings(cfg))
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: pass %d: %v", round, i, err)
			}
			kept += reports[i].Preserved
			dropped += reports[i].Deleted
			released += reports[i].Released
		}
		return
	}
	count := func(want map[string]outcome, o outcome) (n int) {
		for _, w := range want {
			if w == o {
				n++
			}
		}
		return
	}

	want := oracle(t, db.DB, minAge)
	kept, dropped, released := run("triage")
	if d := diff(t, db.DB, want); d != "" {
		t.Fatalf("triage: final state differs from the oracle:\n%s", d)
	}
	if kept != count(want, preserved) || dropped != count(want, gone) || released != 0 {
		t.Fatalf("triage: reports add up to %d preserved, %d deleted, %d released; want %d, %d, 0",
			kept, dropped, released, count(want, preserved), count(want, gone))
	}
	if kept == 0 || dropped == 0 {
		t.Fatalf("corpus too tame: %d preserved, %d deleted", kept, dropped)
	}

	// Take away many dependents; the passes race to release.
	if _, err := db.Exec(`UPDATE documents SET source_ids = NULL WHERE deleted_at IS NULL AND id LIKE '%3'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE documents SET deleted_at = now() - interval '1 hour' WHERE deleted_at IS NULL AND id LIKE '%7'`); err != nil {
		t.Fatal(err)
	}
	before := countOutcome(t, db.DB, preserved)
	want = oracle(t, db.DB, minAge)
	_, _, released = run("release")
	if d := diff(t, db.DB, want); d != "" {
		t.Fatalf("release: final state differs from the oracle:\n%s", d)
	}
	if wantReleased := before - count(want, preserved); released != wantReleased || released == 0 {
		t.Fatalf("release: reports add up to %d released, want %d", released, wantReleased)
	}
}

func countOutcome(t *testing.T, db *sqlx.DB, o outcome) int {
	t.Helper()
	n := 0
	for _, r := range rows(t, db) {
		if r.outcome(t) == o {
			n++
		}
	}
	return n
}

// The embedding column is the agent's: pgvector's vector in production,
// real[] in the reference schema, anything nullable elsewhere. pgvector is
// not installed on the test machines, so the test alters the column to other
// types, including a length-checked domain (as vector(n) checks its length)
// and bytea; the job only ever sets it NULL, so the type does not matter.
func TestAnyEmbeddingColumnType(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		alter string // run before inserting
		value string // SQL expression of an embedding
	}{
		{"real[] (reference schema)", ``, `ARRAY[0.1, 0.2, 0.3]::real[]`},
		{"double precision[]", `ALTER TABLE documents ALTER COLUMN embedding TYPE double precision[]`, `ARRAY[0.1, 0.2, 0.3]::float8[]`},
		{"integer[] (quantised)", `ALTER TABLE documents ALTER COLUMN embedding TYPE integer[] USING NULL`, `ARRAY[1, 2, 3]`},
		{"bytea (serialised vector)", `ALTER TABLE documents ALTER COLUMN embedding TYPE bytea USING NULL`, `'\x0000803f00000040'::bytea`},
		{"domain with a dimension check", `
			CREATE DOMAIN vector3 AS real[] CHECK (array_length(VALUE, 1) = 3);
			ALTER TABLE documents ALTER COLUMN embedding TYPE vector3`, `ARRAY[0.1, 0.2, 0.3]::real[]::vector3`},
		{"text", `ALTER TABLE documents ALTER COLUMN embedding TYPE text USING NULL`, `'[0.1,0.2,0.3]'`},
		{"jsonb", `ALTER TABLE documents ALTER COLUMN embedding TYPE jsonb USING NULL`, `'[0.1, 0.2, 0.3]'::jsonb`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			if tc.alter != "" {
				if _, err := db.Exec(tc.alter); err != nil {
					t.Fatal(err)
				}
			}
			worldWith(t, db.DB, tc.value,
				doc{id: "T", deleted: "old", superseded: true},
				doc{id: "X", deleted: "old", superseded: true},
				doc{id: "D", sources: `["T"]`},
			)
			r := pass(t, db.DB, testConfig(500))
			if r.Preserved != 1 || r.Deleted != 1 {
				t.Fatalf("report: %+v", r)
			}
			rs := rows(t, db.DB)
			if !rs["T"].EmbeddingNull || !rs["T"].Preserved {
				t.Fatalf("T: %+v", rs["T"])
			}
			if rs["D"].EmbeddingNull {
				t.Fatal("the live document's embedding was touched")
			}
			if _, ok := rs["X"]; ok {
				t.Fatal("X not deleted")
			}
		})
	}
}

// With maintenance.tombstones.keepDeleted 0 (no copy of a deleted row is
// kept, so nothing needs it) the job never reads the embedding column: run
// it as a role that may not SELECT it (and has no other privilege than the
// job needs), and it works.
func TestNeverReadsTheEmbedding(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T", deleted: "old", superseded: true},
		doc{id: "X", deleted: "old", superseded: true},
		doc{id: "D", sources: `["T"]`},
	)
	var b [6]byte
	_, _ = rand.Read(b[:])
	role, password := "tomb_"+hex.EncodeToString(b[:]), hex.EncodeToString(b[:])+"pw"
	_, err := db.Exec(`CREATE ROLE ` + role + ` LOGIN PASSWORD '` + password + `'`)
	if err != nil {
		t.Skipf("cannot create a role on this server (needs CREATEROLE): %v", err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec(`DROP OWNED BY ` + role)
		_, _ = db.Exec(`DROP ROLE IF EXISTS ` + role)
	})
	for _, g := range []string{
		`GRANT SELECT (ctid, id, workspace_name, content, source_ids, deleted_at, superseded_by, tombstone_preserved_at) ON documents TO ` + role,
		`GRANT UPDATE (embedding, tombstone_preserved_at) ON documents TO ` + role,
		`GRANT DELETE ON documents TO ` + role,
		`GRANT USAGE ON SCHEMA supersessiond TO ` + role,
		`GRANT SELECT, INSERT, UPDATE ON supersessiond.state TO ` + role,
		`GRANT SELECT, INSERT, UPDATE ON supersessiond.deleted_documents TO ` + role,
		`GRANT USAGE ON SEQUENCE supersessiond.deleted_documents_seq_seq TO ` + role,
	} {
		if _, err := db.Exec(g); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(db.URL)
	q := u.Query()
	q.Set("user", role)
	q.Set("password", password)
	u.RawQuery = q.Encode()
	restricted, err := sqlx.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer restricted.Close()
	var probe string
	if err := restricted.Get(&probe, `SELECT embedding::text FROM documents LIMIT 1`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the role can read the embedding (%v): the test proves nothing", err)
	}
	noCopies := testConfig(500)
	noCopies.Maintenance.Tombstones.KeepDeleted = 0
	for i := range 2 { // the second pass re-checks the preserved tombstone
		r, err := newJob(restricted, tombstones.Options{}).Reconcile(context.Background(), settings(noCopies))
		if err != nil {
			t.Fatalf("pass %d without SELECT on documents.embedding: %v", i+1, err)
		}
		if i == 0 && (r.Preserved != 1 || r.Deleted != 1) {
			t.Fatalf("report: %+v", r)
		}
	}
	if _, err := db.Exec(`DELETE FROM documents WHERE id = 'D'`); err != nil {
		t.Fatal(err)
	}
	if r, err := newJob(restricted, tombstones.Options{}).Reconcile(context.Background(), settings(noCopies)); err != nil || r.Released != 1 {
		t.Fatalf("release without SELECT on documents.embedding: %v %+v", err, r)
	}
}

func TestBudgetFollowsTheSchedule(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 10, 0, 30, 0, time.UTC)
	for spec, want := range map[string]time.Duration{
		"17 * * * *":       tombstones.MaxBudget, // hourly: 15m, capped
		"*/5 * * * *":      75 * time.Second,     // a quarter of 5m
		"* * * * *":        15 * time.Second,     // a quarter of a minute
		"@every 10s":       tombstones.MinBudget, // floor
		"@every 20m":       tombstones.MaxBudget, // 5m exactly
		"0 3 * * *":        tombstones.MaxBudget, // daily
		config.ScheduleOff: tombstones.MaxBudget, // by hand
	} {
		cfg := config.Default()
		cfg.Maintenance.Schedules.Tombstones = spec
		if got := tombstones.Budget(settings(cfg), now); got != want {
			t.Errorf("%q: budget %s, want %s", spec, got, want)
		}
	}
}

// stepClock is a clock that moves by step each time it is read: a pass's
// budget runs out after a known number of batches, without waiting.
func stepClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// A backlog larger than a pass's budget is worked off over several passes,
// each making progress and saying what it left; the end state is the same
// as one unhurried pass's.
func TestBudgetSpreadsABacklogOverPasses(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var docs []doc
	for i := range 40 {
		n := itoa(i)
		docs = append(docs, doc{id: "T" + n, deleted: "old", superseded: true}, doc{id: "D" + n, sources: `["T` + n + `"]`})
		if i%2 == 0 {
			docs = append(docs, doc{id: "X" + n, deleted: "old"})
		}
	}
	world(t, db.DB, docs...)
	cfg := testConfig(3)
	want := oracle(t, db.DB, cfg.Maintenance.Tombstones.MinAge)
	job := tombstones.New(jobs.Deps{DB: db.DB, Now: stepClock(time.Minute)}, tombstones.Options{Budget: 4 * time.Minute})
	total, passes := 0, 0
	for r := (*tombstones.Report)(nil); r == nil || r.Backlog > 0; {
		var err error
		if r, err = job.Reconcile(context.Background(), settings(cfg)); err != nil {
			t.Fatal(err)
		}
		passes++
		total += r.Examined
		switch {
		case r.Examined == 0:
			t.Fatalf("pass %d made no progress: %+v", passes, r)
		case r.Backlog != int64(60-total):
			t.Fatalf("pass %d: backlog %d, want %d", passes, r.Backlog, 60-total)
		case r.Backlog > 0 && (!r.BudgetExhausted() || r.LeftForLater != r.Backlog):
			t.Fatalf("pass %d stopped with a backlog it does not report as left for later: %+v", passes, r)
		case passes > 60:
			t.Fatal("the backlog never drains")
		}
	}
	if passes < 3 {
		t.Fatalf("the budget did not bite: %d passes", passes)
	}
	if d := diff(t, db.DB, want); d != "" {
		t.Fatal(d)
	}
}

// The re-check goes on where the previous pass stopped: with a budget for
// one page per pass, tombstones at the end of the order are still reached.
// (Starting from the beginning each time would never get there.)
func TestRecheckResumesWhereThePreviousPassStopped(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var docs []doc
	for i := range 12 {
		n := string(rune('a' + i))
		docs = append(docs, doc{id: "T" + n, deleted: "old", superseded: true}, doc{id: "D" + n, sources: `["T` + n + `"]`})
	}
	world(t, db.DB, docs...)
	cfg := testConfig(2)
	pass(t, db.DB, cfg) // preserve all twelve, in id order, two per batch
	if _, err := db.Exec(`DELETE FROM documents WHERE id IN ('Dk', 'Dl')`); err != nil {
		t.Fatal(err)
	}
	// Each read of the clock uses the whole budget: one page per pass.
	job := tombstones.New(jobs.Deps{DB: db.DB, Now: stepClock(time.Minute)}, tombstones.Options{Budget: time.Minute})
	for i := 1; i <= 6; i++ {
		r, err := job.Reconcile(context.Background(), settings(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if r.Rechecked != 2 {
			t.Fatalf("pass %d re-checked %d, want one page of 2", i, r.Rechecked)
		}
		if i < 6 && r.Released != 0 || i == 6 && r.Released != 2 {
			t.Fatalf("pass %d released %d", i, r.Released)
		}
	}
	if d := diff(t, db.DB, map[string]outcome{"Tk": gone, "Tl": gone, "Ta": preserved, "Tj": preserved}); d != "" {
		t.Fatal(d)
	}
	// And round it goes: the next pass starts again from the beginning.
	r, err := job.Reconcile(context.Background(), settings(cfg))
	if err != nil || r.Rechecked != 2 || r.Released != 0 {
		t.Fatalf("pass 7: %v %+v", err, r)
	}
	if r := pass(t, db.DB, cfg); !r.RecheckComplete || r.Rechecked != 10 {
		t.Fatalf("an unhurried pass re-checks all ten once: %+v", r)
	}
}

// The database going away mid-batch (its connection killed between the
// dependent check and the writes), or the pass being cancelled there,
// leaves every batch either wholly applied or not at all; the next pass
// finishes the work.
func TestFailureMidBatchLeavesNothingHalfDone(t *testing.T) {
	t.Parallel()
	type breakFn func(t *testing.T, db *pgtest.DB, cancel context.CancelFunc)
	kill := func(t *testing.T, db *pgtest.DB, _ context.CancelFunc) {
		_, err := db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'tombstones-job'`)
		if err != nil {
			t.Error(err)
		}
	}
	cancel := func(_ *testing.T, _ *pgtest.DB, cancel context.CancelFunc) { cancel() }
	for _, tc := range []struct {
		name  string
		phase string
		brk   breakFn
	}{
		{"connection killed during triage", "triage", kill},
		{"pass cancelled during triage", "triage", cancel},
		{"connection killed during release", "release", kill},
		{"pass cancelled during release", "release", cancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			var docs []doc
			for i := range 10 {
				n := itoa(i)
				docs = append(docs,
					doc{id: "T" + n, deleted: "old", superseded: true},
					doc{id: "X" + n, deleted: "old"},
					doc{id: "D" + n, sources: `["T` + n + `"]`})
			}
			world(t, db.DB, docs...)
			cfg := testConfig(3)
			if tc.phase == "release" {
				pass(t, db.DB, cfg)
				if _, err := db.Exec(`UPDATE documents SET source_ids = NULL WHERE id LIKE 'D%'`); err != nil {
					t.Fatal(err)
				}
			}
			want := oracle(t, db.DB, cfg.Maintenance.Tombstones.MinAge)
			before := outcomes(t, db.DB, idsOf(docs))

			u, _ := url.Parse(db.URL)
			q := u.Query()
			q.Set("application_name", "tombstones-job")
			u.RawQuery = q.Encode()
			pool, err := sqlx.Open("postgres", u.String())
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			pool.SetMaxOpenConns(1)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			job := newJob(pool, tombstones.Options{})
			calls := 0
			tombstones.SetBeforeWrite(job, func(phase string) {
				if phase != tc.phase {
					return
				}
				if calls++; calls == 2 {
					tc.brk(t, db, stop)
				}
			})
			r, err := job.Reconcile(ctx, settings(cfg))
			if err == nil {
				t.Fatalf("the pass did not notice: %+v", r)
			}
			if strings.Contains(tc.name, "cancelled") && !errors.Is(err, context.Canceled) {
				t.Fatalf("error does not wrap context.Canceled: %v", err)
			}
			// Exactly the first batch is applied: each row is as it was
			// before the pass, or as the pass must leave it; and as many
			// rows changed as the report says were committed.
			done := 0
			for id, o := range outcomes(t, db.DB, idsOf(docs)) {
				switch {
				case o == before[id]:
				case o == want[id]:
					done++
				default:
					t.Fatalf("%s half-handled: %s (was %s, want %s)", id, o, before[id], want[id])
				}
			}
			committed := r.Examined
			if tc.phase == "release" {
				committed = r.Released
			}
			if done != committed || done != 3 {
				t.Fatalf("%d rows handled, report says %d committed, want the first batch of 3: %+v", done, committed, r)
			}
			for id, row := range rows(t, db.DB) {
				if row.Preserved != row.EmbeddingNull {
					t.Fatalf("%s: preserved=%v but embedding_null=%v", id, row.Preserved, row.EmbeddingNull)
				}
			}
			// The next pass, on the same pool, finishes the job, once the
			// interrupted transaction is really gone: its backend may still
			// be rolling back (a killed or cancelled session ends
			// asynchronously), and until then its rows are locked, which
			// a pass skips (SKIP LOCKED) and leaves for the next.
			waitNoOpenTransaction(t, db, "tombstones-job")
			tombstones.SetBeforeWrite(job, nil)
			if _, err := job.Reconcile(context.Background(), settings(cfg)); err != nil {
				t.Fatalf("pass after the failure: %v", err)
			}
			if d := diff(t, db.DB, want); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T", deleted: "old", superseded: true},
		doc{id: "U", deleted: "old", superseded: true},
		doc{id: "X", deleted: "old"},
		doc{id: "Y", deleted: "young"},
		doc{id: "D", sources: `["T", "U"]`},
	)
	reg := prometheus.NewRegistry()
	job := tombstones.New(jobs.Deps{DB: db.DB, Registry: reg}, tombstones.Options{})
	m := job.Metrics()
	cfg := testConfig(500)
	if _, err := job.Reconcile(context.Background(), settings(cfg)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE documents SET source_ids = '["T"]' WHERE id = 'D'`); err != nil {
		t.Fatal(err)
	}
	if _, err := job.Reconcile(context.Background(), settings(cfg)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"preserved": 2, "deleted": 1, "released": 1, "backlog": 0, "held": 1,
	} {
		c := map[string]prometheus.Metric{"preserved": m.Preserved, "deleted": m.Deleted,
			"released": m.Released, "backlog": m.Backlog, "held": m.Held}[name]
		if got := value(t, c); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if _, err := db.Exec(`UPDATE documents SET deleted_at = now() - interval '1 hour' WHERE id = 'Y'`); err != nil {
		t.Fatal(err)
	}
	shadow := testConfig(500)
	shadow.Memory.PipelineV2.ShadowMode = true
	if _, err := job.Reconcile(context.Background(), settings(shadow)); err != nil {
		t.Fatal(err)
	}
	if got := value(t, m.Backlog); got != 1 {
		t.Errorf("backlog after a shadow pass = %v, want 1", got)
	}
	if got := value(t, m.Deleted); got != 1 {
		t.Errorf("a shadow pass counted deletions: %v", got)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	if got := strings.Join(names, " "); got != "supersessiond_tombstones_backlog supersessiond_tombstones_deleted_total "+
		"supersessiond_tombstones_preserved_held supersessiond_tombstones_preserved_total supersessiond_tombstones_released_total" {
		t.Fatalf("registered metrics: %s", got)
	}
}

func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}

// waitNoOpenTransaction waits until no session named app is inside a
// transaction.
func waitNoOpenTransaction(t *testing.T, db *pgtest.DB, app string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var open int
		if err := db.Get(&open, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND xact_start IS NOT NULL`, app); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of %s still in a transaction after 10 s", open, app)
		}
	}
}
