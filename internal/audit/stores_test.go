package audit_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// onStore is the sweep and the operator's commands on a store's database,
// migrated for it.
func onStore(t *testing.T, db *sqlx.DB, plan schema.Plan) (*sweep.Job, *audit.Ops) {
	t.Helper()
	names, err := storetest.Migrate(ctx, db, plan)
	if err != nil {
		t.Fatal(err)
	}
	deps := jobs.Deps{DB: db, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Names: names}
	engine := supersession.New(deps)
	return sweep.New(deps, engine), audit.New(db, names, engine)
}

func sweepStore(t *testing.T, j *sweep.Job, shadow bool) *sweep.Report {
	t.Helper()
	c := cfg()
	if shadow {
		c = cfg(shadowOn)
	}
	r, err := j.Once(ctx, daemon.SettingsOf(c).Sweep, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// honchoDoc is what undo must put back of a document, and what Honcho's
// embedding reconciler reads.
type honchoDoc struct {
	Live       bool    `db:"live"`
	Content    string  `db:"content"`
	Level      string  `db:"level"`
	Session    *string `db:"session_name"`
	Meta       string  `db:"internal_metadata"`
	Embedded   bool    `db:"embedded"`
	SyncState  string  `db:"sync_state"`
	CreatedAt  string  `db:"created_at"`
	Superseded *string `db:"superseded_by"`
}

func honchoDocOf(t *testing.T, db *sqlx.DB, id string) (honchoDoc, bool) {
	t.Helper()
	var d honchoDoc
	err := db.Get(&d, `SELECT deleted_at IS NULL AS live, content, level, session_name, internal_metadata::text,
		embedding IS NOT NULL AS embedded, sync_state, created_at::text, internal_metadata ->> 'superseded_by' AS superseded_by
		FROM honcho.documents WHERE id = $1`, id)
	if err != nil {
		return d, false
	}
	return d, true
}

// On Honcho's documents: a shadow pass proposes; a reviewer's apply
// retires Honcho's way; Honcho's reconciler then hard-deletes the document
// (it is soft-deleted); undo re-inserts it from the daemon's snapshot as it
// was, with no embedding and pending, so Honcho embeds it again, and the
// next pass respects the undo. A rejected proposal is never applied.
func TestHonchoReviewApplyUndoAfterHardDelete(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0, Embedding: []float32{1, 2, 3, 4}},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(time.Minute)},
		storetest.Observation{Workspace: "acme", Observer: "kim", Content: "Works at the bakery", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "kim", Content: "Works at the library", CreatedAt: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := honchoDocOf(t, db.DB, ids[0])
	j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	if r := sweepStore(t, j, true); r.ProposalsShadow != 2 {
		t.Fatalf("shadow pass: %+v", r)
	}
	props, err := ops.Proposals(ctx, audit.ProposalFilter{Status: "pending"})
	if err != nil || len(props) != 2 {
		t.Fatalf("proposals: %v %+v", err, props)
	}
	byOld := map[string]audit.Proposal{}
	for _, p := range props {
		byOld[p.OldAttributeID] = p
	}
	if _, err := ops.Review(ctx, byOld[ids[2]].ID, false, "kim does both"); err != nil {
		t.Fatal(err)
	}
	applied := ops.Apply(ctx, cfg(), []string{byOld[ids[0]].ID})
	if len(applied) != 1 || applied[0].Err != nil {
		t.Fatalf("apply: %+v", applied)
	}
	if d, _ := honchoDocOf(t, db.DB, ids[0]); d.Live || d.Superseded == nil || *d.Superseded != ids[1] {
		t.Fatalf("after apply: %+v", d)
	}
	// Honcho's reconciler removes what is soft-deleted.
	if n, err := h.Reconcile(ctx, 0); err != nil || n != 1 {
		t.Fatalf("reconcile: %d %v", n, err)
	}
	if _, ok := honchoDocOf(t, db.DB, ids[0]); ok {
		t.Fatal("the reconciler left the document")
	}
	if _, err := ops.Undo(ctx, cfg(), applied[0].HistoryID); err != nil {
		t.Fatal(err)
	}
	after, ok := honchoDocOf(t, db.DB, ids[0])
	if !ok || !after.Live || after.Embedded || after.SyncState != "pending" || after.Superseded != nil ||
		after.Content != before.Content || after.CreatedAt != before.CreatedAt || after.Level != before.Level ||
		*after.Session != *before.Session || after.Meta != before.Meta {
		t.Fatalf("after undo: %+v, before %+v", after, before)
	}
	if _, err := ops.Undo(ctx, cfg(), applied[0].HistoryID); err == nil {
		t.Fatal("a second undo was accepted")
	}
	st, err := ops.Stats(ctx, audit.StatsFilter{Agent: "acme"}, audit.Enforcement{})
	if err != nil || st.Total.Proposals != 2 || st.Total.Rejected != 1 || st.Total.Applied != 1 || st.Total.Undone != 1 {
		t.Fatalf("stats: %v %+v", err, st)
	}
	// Neither the undone pair nor the rejected one is applied by a live pass.
	if r := sweepStore(t, j, false); r.Supersessions != 0 {
		t.Fatalf("live pass after undo and rejection: %+v", r)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if d, _ := honchoDocOf(t, db.DB, id); !d.Live {
			t.Errorf("%s retired", id)
		}
	}
}

// An undo of a document still soft-deleted makes it live again, its
// embedding kept.
func TestHonchoUndoBeforeHardDelete(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Sources: true, Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0, Embedding: []float32{1, 2, 3, 4}},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	if r := sweepStore(t, j, false); r.Supersessions != 1 {
		t.Fatalf("live pass: %+v", r)
	}
	hist, err := ops.History(ctx, audit.Filter{Event: "attribute_superseded"})
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %+v", err, hist)
	}
	if _, err := ops.Undo(ctx, cfg(), hist[0].ID); err != nil {
		t.Fatal(err)
	}
	if d, _ := honchoDocOf(t, db.DB, ids[0]); !d.Live || !d.Embedded || d.Superseded != nil {
		t.Fatalf("after undo: %+v", d)
	}
}

// mem0's retirement deletes the memory; undo re-inserts it byte for byte,
// payload and vector, and supersede by hand works on the collection too.
func TestMem0UndoRestoresTheWholeRow(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	m, err := storetest.CreateMem0(ctx, db.DB, storetest.Mem0Shape{Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := m.Add(ctx,
		storetest.Memory{Data: "Lives in Toronto", UserID: "alice", CreatedAt: t0, Vector: []float32{0.1, -2.5e-7, 3.14159265, 1e10},
			Metadata: map[string]any{"category": "home", "nested": map[string]any{"a": []any{1.5, "x", nil}}}},
		storetest.Memory{Data: "Lives in Halifax", UserID: "alice", CreatedAt: t0.Add(time.Minute)},
		storetest.Memory{Data: "Likes tea", UserID: "alice", CreatedAt: t0},
		storetest.Memory{Data: "Likes coffee now", UserID: "alice", CreatedAt: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	row := func(id string) (payload, vector string, ok bool) {
		err := db.QueryRow(`SELECT payload::text, vector::text FROM public.mem0 WHERE id = $1`, id).Scan(&payload, &vector)
		return payload, vector, err == nil
	}
	payload, vector, _ := row(ids[0])
	j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreMem0, ""))
	if r := sweepStore(t, j, false); r.Supersessions != 1 {
		t.Fatalf("live pass: %+v", r)
	}
	if _, _, ok := row(ids[0]); ok {
		t.Fatal("the retired memory is still in the collection")
	}
	hist, err := ops.History(ctx, audit.Filter{Event: "attribute_superseded"})
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %+v", err, hist)
	}
	if _, err := ops.Undo(ctx, cfg(), hist[0].ID); err != nil {
		t.Fatal(err)
	}
	p, v, ok := row(ids[0])
	if !ok || p != payload || v != vector {
		t.Fatalf("after undo:\n%s %s\nwant\n%s %s", p, v, payload, vector)
	}
	// By hand: tea is retired for coffee.
	if _, err := ops.Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "alice", Olds: []string{ids[2]}, New: ids[3]}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := row(ids[2]); ok {
		t.Fatal("supersede left the memory")
	}
}

// A live document concluded from a retired one is flagged (stale_basis),
// listed by dependents, and cleared by undo; on both of Honcho's shapes
// (citations in source_ids, and in document_sources). A document that
// cites nothing retired is not flagged.
func TestHonchoDependentsFlaggedAndCleared(t *testing.T) {
	t.Parallel()
	for _, sources := range []bool{false, true} {
		t.Run(map[bool]string{false: "source_ids", true: "document_sources"}[sources], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Sources: sources, Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now().Add(-time.Hour)
			ids, err := h.Observe(ctx,
				storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0},
				storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Has a cat named Miso", CreatedAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			derived, err := h.Observe(ctx,
				storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Probably takes the streetcar to work", Level: "deductive",
					Session: "-", Sources: []string{ids[0], ids[1]}, CreatedAt: t0.Add(time.Minute)},
				storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Likes animals", Level: "deductive",
					Session: "-", Sources: []string{ids[1]}, CreatedAt: t0.Add(time.Minute)},
				storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(2 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
			if r := sweepStore(t, j, false); r.Supersessions != 1 {
				t.Fatalf("live pass: %+v", r)
			}
			deps, err := ops.Dependents(ctx, "", 0)
			if err != nil || len(deps) != 1 || deps[0].ID != derived[0] || len(deps[0].StaleBasis) != 1 || deps[0].StaleBasis[0] != ids[0] {
				t.Fatalf("dependents: %v %+v", err, deps)
			}
			if deps, err := ops.Dependents(ctx, "other", 0); err != nil || len(deps) != 0 {
				t.Fatalf("dependents of another workspace: %v %+v", err, deps)
			}
			hist, err := ops.History(ctx, audit.Filter{Event: "attribute_superseded"})
			if err != nil || len(hist) != 1 {
				t.Fatalf("history: %v %+v", err, hist)
			}
			if _, err := ops.Undo(ctx, cfg(), hist[0].ID); err != nil {
				t.Fatal(err)
			}
			if deps, err := ops.Dependents(ctx, "", 0); err != nil || len(deps) != 0 {
				t.Fatalf("dependents after undo: %v %+v", err, deps)
			}
			var meta string
			if err := db.Get(&meta, `SELECT internal_metadata::text FROM honcho.documents WHERE id = $1`, derived[0]); err != nil ||
				strings.Contains(meta, "stale_basis") {
				t.Fatalf("after undo: %s %v", meta, err)
			}
		})
	}
}

// protect pins a Honcho document (in its internal metadata): a live pass
// leaves it; on mem0 protect is refused, with the reason.
func TestProtectOnStores(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	if changed, err := ops.Protect(ctx, cfg(), ids[0], true); err != nil || !changed {
		t.Fatalf("protect: %v %v", changed, err)
	}
	if r := sweepStore(t, j, false); r.Supersessions != 0 || r.Skips[supersession.SkipProtected] != 1 {
		t.Fatalf("live pass over a protected document: %+v %v", r, r.Skips)
	}
	if d, _ := honchoDocOf(t, db.DB, ids[0]); !d.Live {
		t.Fatal("the protected document was retired")
	}

	mdb := pgtest.NewEmpty(t)
	m, err := storetest.CreateMem0(ctx, mdb.DB, storetest.Mem0Shape{Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	mids, err := m.Add(ctx, storetest.Memory{Data: "Lives in Toronto", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	_, mops := onStore(t, mdb.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreMem0, ""))
	if _, err := mops.Protect(ctx, cfg(), mids[0], true); !errors.Is(err, audit.ErrRefused) || !strings.Contains(err.Error(), "not available on store mem0") {
		t.Fatalf("protect on mem0: %v", err)
	}
}

// With deductive documents taking part, a retired conclusion that Honcho's
// reconciler removed comes back from undo with its own citations (its
// document_sources rows went with it).
func TestHonchoUndoRestoresACitingDocumentsEdges(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Sources: true, Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	basis, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Mentioned a Toronto apartment", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Mentioned the Toronto subway", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", Level: "deductive", Session: "-",
			Sources: basis, CreatedAt: t0.Add(time.Minute)},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", Level: "deductive", Session: "-",
			CreatedAt: t0.Add(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	edges := func() string {
		var s string
		if err := db.Get(&s, `SELECT coalesce(string_agg(source_id || '@' || position, ',' ORDER BY position), '')
			FROM honcho.document_sources WHERE derived_id = $1`, ids[0]); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := edges()
	j, ops := onStore(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho", "explicit", "deductive"))
	if r := sweepStore(t, j, false); r.Supersessions != 1 {
		t.Fatalf("live pass: %+v", r)
	}
	if n, err := h.Reconcile(ctx, 0); err != nil || n != 1 || edges() != "" {
		t.Fatalf("reconcile: %d %v, edges left %q", n, err, edges())
	}
	hist, err := ops.History(ctx, audit.Filter{Event: "attribute_superseded"})
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %+v", err, hist)
	}
	if _, err := ops.Undo(ctx, cfg(), hist[0].ID); err != nil {
		t.Fatal(err)
	}
	if d, ok := honchoDocOf(t, db.DB, ids[0]); !ok || !d.Live || d.Level != "deductive" || before == "" || edges() != before {
		t.Fatalf("after undo: %+v, edges %q, want %q", d, edges(), before)
	}
}
