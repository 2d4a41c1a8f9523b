package sweep_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// storeJob is the sweep on a store's database, migrated for it.
func storeJob(t *testing.T, db *sqlx.DB, plan schema.Plan) *sweep.Job {
	t.Helper()
	names, err := storetest.Migrate(t.Context(), db, plan)
	if err != nil {
		t.Fatal(err)
	}
	deps := jobs.Deps{DB: db, Logger: quiet, Names: names}
	return sweep.New(deps, supersession.New(deps))
}

// honchoDB is a database shaped like Honcho's (the newer shape with
// document_sources when sources), its documents in schema honcho.
func honchoDB(t *testing.T, sources bool) (*pgtest.DB, *storetest.Honcho) {
	t.Helper()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(t.Context(), db.DB, storetest.HonchoShape{Schema: "honcho", Sources: sources, Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	return db, h
}

func observe(t *testing.T, h *storetest.Honcho, obs ...storetest.Observation) []string {
	t.Helper()
	ids, err := h.Observe(t.Context(), obs...)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// document is a document's state: whether Honcho reads it, and what the
// daemon wrote in its internal metadata.
type document struct {
	Live         bool    `db:"live"`
	SupersededBy *string `db:"superseded_by"`
	StaleBasis   *string `db:"stale_basis"`
	Exists       bool    `db:"exists"`
}

func documentOf(t *testing.T, db *sqlx.DB, id string) document {
	t.Helper()
	var d document
	err := db.Get(&d, `SELECT true AS exists, deleted_at IS NULL AS live, internal_metadata ->> 'superseded_by' AS superseded_by,
		internal_metadata ->> 'stale_basis' AS stale_basis FROM honcho.documents WHERE id = $1`, id)
	if err != nil && err.Error() != "sql: no rows in result set" {
		t.Fatal(err)
	}
	return d
}

func countOf(t *testing.T, db *sqlx.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Get(&n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// On Honcho's documents a pass retires Honcho's way: the older of two
// contradicting observations of one scope (workspace, observer, observed)
// is soft-deleted with its replacement named, in the levels configured
// only, never across scopes; the history is the daemon's own. A document
// added while no daemon runs is decided by the next, incremental, pass.
func TestHonchoLiveSupersession(t *testing.T) {
	t.Parallel()
	db, h := honchoDB(t, false)
	t0 := time.Now().Add(-time.Hour)
	ids := observe(t, h,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Has a cat named Miso", CreatedAt: t0.Add(time.Minute)},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(2 * time.Minute)},
		// Another scope: what the assistant concluded about sam stays.
		storetest.Observation{Workspace: "acme", Observer: "assistant", Observed: "sam", Content: "Lives in Toronto", CreatedAt: t0},
		// A level not configured takes no part.
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Paris", Level: "deductive", CreatedAt: t0.Add(3 * time.Minute)},
	)
	j := storeJob(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	r := run(t, j, live())
	if r.Kind != sweep.KindFull || !r.Complete || r.Supersessions != 1 {
		t.Fatalf("full pass: want one supersession: %+v", r)
	}
	if d := documentOf(t, db.DB, ids[0]); d.Live || d.SupersededBy == nil || *d.SupersededBy != ids[2] {
		t.Fatalf("Toronto: %+v, want soft-deleted, superseded by %s", d, ids[2])
	}
	for _, id := range []string{ids[1], ids[2], ids[3], ids[4]} {
		if d := documentOf(t, db.DB, id); !d.Live {
			t.Errorf("%s was retired", id)
		}
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.history WHERE event = 'attribute_superseded'
		AND metadata ->> 'old_attribute_id' = $1 AND metadata -> 'undo' -> 'row' ->> 'content' = 'Lives in Toronto'`, ids[0]); n != 1 {
		t.Fatalf("%d history rows with the row's snapshot", n)
	}

	// While no daemon runs, sam moves again.
	late := observe(t, h, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Calgary"})
	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || !r.Complete || r.Supersessions != 1 || r.Changes != 1 {
		t.Fatalf("incremental pass: want one change, one supersession: %+v", r)
	}
	if d := documentOf(t, db.DB, ids[2]); d.Live || *d.SupersededBy != late[0] {
		t.Fatalf("Halifax: %+v, want superseded by %s", d, late[0])
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.changes`); n != 0 {
		t.Fatalf("%d change records left", n)
	}
}

// In shadow mode a pass on Honcho's documents only proposes.
func TestHonchoShadowProposes(t *testing.T) {
	t.Parallel()
	db, h := honchoDB(t, true)
	t0 := time.Now().Add(-time.Hour)
	ids := observe(t, h,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(time.Minute)})
	j := storeJob(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	r := run(t, j, shadow())
	if r.Supersessions != 0 || r.ProposalsShadow != 1 {
		t.Fatalf("shadow pass: %+v", r)
	}
	if d := documentOf(t, db.DB, ids[0]); !d.Live {
		t.Fatal("shadow mode retired a document")
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.history WHERE event = 'supersession_proposal'
		AND metadata ->> 'old_attribute_id' = $1 AND metadata ->> 'new_attribute_id' = $2`, ids[0], ids[1]); n != 1 {
		t.Fatalf("%d proposals", n)
	}
}

// mem0 keeps every memory of a user in one collection: a pass retires the
// older of two contradicting memories of one scope by deleting it, its
// whole row in the daemon's history; a memory whose payload lacks its text
// or a time with an offset is skipped with its reason; other scopes are
// left alone; a memory added while no daemon runs is decided next time.
func TestMem0LiveSupersession(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	ctx := context.Background()
	m, err := storetest.CreateMem0(ctx, db.DB, storetest.Mem0Shape{Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := m.Add(ctx,
		storetest.Memory{Data: "Lives in Toronto", UserID: "alice", CreatedAt: t0},
		storetest.Memory{Data: "Lives in Halifax", UserID: "alice", CreatedAt: t0.Add(time.Minute)},
		storetest.Memory{Data: "Lives in Toronto", UserID: "alice", AgentID: "travel", CreatedAt: t0},
		storetest.Memory{Data: "Lives in Lisbon", UserID: "bob", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	bad := storetest.NewUUID()
	if _, err := db.Exec(`INSERT INTO public.mem0 (id, payload) VALUES ($1, '{"user_id": "alice", "data": "Lives in Oslo", "created_at": "yesterday"}')`, bad); err != nil {
		t.Fatal(err)
	}
	j := storeJob(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreMem0, ""))
	r := run(t, j, live())
	if r.Kind != sweep.KindFull || !r.Complete || r.Supersessions != 1 || r.Skips[supersession.SkipBadTime] != 1 {
		t.Fatalf("full pass: want one supersession and one row skipped: %+v %v", r, r.Skips)
	}
	left := func() map[string]bool {
		var rows []string
		if err := db.Select(&rows, `SELECT id::text FROM public.mem0`); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, id := range rows {
			out[id] = true
		}
		return out
	}
	if got := left(); got[ids[0]] || !got[ids[1]] || !got[ids[2]] || !got[ids[3]] || !got[bad] {
		t.Fatalf("left %v", got)
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.history WHERE event = 'attribute_superseded'
		AND metadata -> 'undo' -> 'row' -> 'payload' ->> 'data' = 'Lives in Toronto' AND metadata -> 'undo' -> 'row' ->> 'vector' <> ''`); n != 1 {
		t.Fatalf("%d history rows with the whole row", n)
	}
	late, err := m.Add(ctx, storetest.Memory{Data: "Lives in Calgary", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Supersessions != 1 || r.Changes != 1 {
		t.Fatalf("incremental pass: %+v", r)
	}
	if got := left(); got[ids[1]] || !got[late[0]] {
		t.Fatalf("left %v", got)
	}
}

// A scope holds every fact of a peer, thousands of them about everything:
// blocking keys narrow the pairs, so a pass decides a small multiple of the
// scope's facts, never every pair of it (here 2,002 facts, two million
// pairs, one contradiction).
func TestAScopeIsNotDecidedPairByPair(t *testing.T) {
	t.Parallel()
	db, h := honchoDB(t, false)
	subjects := []string{"Sam's sister", "The neighbour", "Sam's manager", "The landlord", "Sam's dentist", "The old roommate",
		"Sam's cousin", "The bookshop owner", "Sam's running coach", "The piano teacher"}
	verbs := []string{"collects", "repairs", "paints", "photographs", "restores", "sells", "sketches", "rents out",
		"builds", "catalogues"}
	nouns := []string{"red bicycles", "old lighthouses", "jazz records", "wool scarves", "chess sets", "garden gnomes",
		"harbour ferries", "silver teapots", "mountain cabins", "vintage cameras", "paper lanterns", "brass compasses",
		"stone bridges", "poetry books", "folding chairs", "clay pots", "model trains", "glass marbles", "tin soldiers", "wooden kites"}
	var obs []storetest.Observation
	t0 := time.Now().Add(-48 * time.Hour)
	for i := range 2000 {
		obs = append(obs, storetest.Observation{Workspace: "acme", Observer: "sam",
			Content:   fmt.Sprintf("%s %s %s", subjects[i%10], verbs[(i/10)%10], nouns[(i/100)%20]),
			CreatedAt: t0.Add(time.Duration(i) * time.Second)})
	}
	obs = append(obs, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Sam lives in Toronto", CreatedAt: t0},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Sam lives in Halifax", CreatedAt: t0.Add(time.Hour)})
	observe(t, h, obs...)
	j := storeJob(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	r := run(t, j, shadow())
	if !r.Complete || r.Attributes != 2002 || r.Pairs == 0 || r.Pairs > 20*2002 || r.ProposalsShadow != 1 {
		t.Fatalf("a pass over one scope of 2,002 facts decided %d pairs: %+v", r.Pairs, r)
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.history WHERE event = 'supersession_proposal'
		AND old_content = 'Sam lives in Toronto' AND new_content = 'Sam lives in Halifax'`); n != 1 {
		t.Fatal("the one contradiction of the scope was not proposed")
	}
}

// A large scope gets its key digest from the full pass, so an incremental
// pass after a new observation reads the new one and the few observations
// its keys meet, not the scope whole, and still decides it; a second
// change meeting the first only through the fragment the pass stored is
// decided against it.
func TestHonchoIncrementalPassIsNarrowedByTheScopesDigest(t *testing.T) {
	t.Parallel()
	db, h := honchoDB(t, false)
	t0 := time.Now().Add(-48 * time.Hour)
	var obs []storetest.Observation
	for i := range 60 {
		obs = append(obs, storetest.Observation{Workspace: "acme", Observer: "sam",
			Content: fmt.Sprintf("Visited city number %d in %d", i, 1990+i%30), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	obs = append(obs, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0.Add(2 * time.Hour)})
	ids := observe(t, h, obs...)
	j := storeJob(t, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	if r := run(t, j, live()); r.Kind != sweep.KindFull || r.Supersessions != 0 {
		t.Fatalf("full pass: %+v", r)
	}
	if n := countOf(t, db.DB, `SELECT count(*) FROM supersessiond.aspect_keys`); n == 0 {
		t.Fatal("the full pass stored no digest of the scope")
	}
	halifax := observe(t, h, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax"})
	r := run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Narrowed != 1 || r.Supersessions != 1 || r.Attributes >= 61 {
		t.Fatalf("incremental pass: want the scope narrowed and one supersession: %+v", r)
	}
	if d := documentOf(t, db.DB, ids[60]); d.Live || *d.SupersededBy != halifax[0] {
		t.Fatalf("Toronto: %+v", d)
	}
	calgary := observe(t, h, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Calgary"})
	if r := run(t, j, live()); r.Narrowed != 1 || r.Supersessions != 1 {
		t.Fatalf("second incremental pass: %+v", r)
	}
	if d := documentOf(t, db.DB, halifax[0]); d.Live || *d.SupersededBy != calgary[0] {
		t.Fatalf("Halifax: %+v", d)
	}
}
