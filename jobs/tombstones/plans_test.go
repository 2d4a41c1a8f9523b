package tombstones

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
)

// planNode is one node of an EXPLAIN (FORMAT JSON) plan.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// explain returns the plan of query with args, as text (for the log) and as
// the set of "node on relation using index" it contains. With analyze the
// statement runs, inside a transaction that is rolled back.
func explain(ctx context.Context, db *sqlx.DB, analyze bool, query string, args ...any) (string, []planNode, error) {
	opts := "COSTS OFF"
	if analyze {
		opts = "ANALYZE, BUFFERS, COSTS OFF, TIMING ON"
	}
	var lines []string
	err := rolledBack(ctx, db, func(tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &lines, "EXPLAIN ("+opts+") "+query, args...)
	})
	if err != nil {
		return "", nil, fmt.Errorf("explain: %w", err)
	}
	var raw string
	err = rolledBack(ctx, db, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &raw, "EXPLAIN (FORMAT JSON, COSTS OFF) "+query, args...)
	})
	if err != nil {
		return "", nil, fmt.Errorf("explain json: %w", err)
	}
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return "", nil, err
	}
	var nodes []planNode
	for _, d := range doc {
		d.Plan.walk(func(n planNode) { nodes = append(nodes, n) })
	}
	return strings.Join(lines, "\n"), nodes, nil
}

// rolledBack runs fn in a transaction that is always rolled back: EXPLAIN
// ANALYZE of a DELETE deletes.
func rolledBack(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// As in every batch transaction of the job.
	if _, err := tx.ExecContext(ctx, schema.Render(nil, tombstonesSQL).OrderedScan); err != nil {
		return err
	}
	return fn(tx)
}

// tidScan stands for "reaches its rows by ctid" where checkPlan wants an
// index name.
const tidScan = "(TID scan)"

// checkPlan fails when the plan scans documents sequentially, sorts, ANDs
// in another index, or does not use the index it is written for.
func checkPlan(t testing.TB, name string, nodes []planNode, index string) {
	t.Helper()
	used := false
	for _, n := range nodes {
		if index == tidScan && n.NodeType == "Tid Scan" {
			used = true
		}
		if n.RelationName == "documents" && n.NodeType == "Seq Scan" {
			t.Errorf("%s: sequential scan of documents", name)
		}
		if n.NodeType == "BitmapAnd" {
			t.Errorf("%s: ANDs another index into the plan", name)
		}
		if n.NodeType == "Sort" {
			t.Errorf("%s: sorts instead of reading its index in order", name)
		}
		if n.IndexName == index {
			used = true
		}
	}
	if !used {
		t.Errorf("%s: plan does not use %s", name, index)
	}
}

// planStatements lists every statement of a pass with realistic arguments
// taken from db (which holds a generated corpus, one pass already run on it
// so that preserved tombstones exist) and the index each must use.
func planStatements(t testing.TB, db *sqlx.DB, batchSize int) []struct {
	name, query, index string
	args               []any
} {
	t.Helper()
	var batch []candidate
	if err := db.Select(&batch, schema.Render(nil, tombstonesSQL).Pending, time.Now(), "-infinity", "", batchSize); err != nil {
		t.Fatal(err)
	}
	var tids, supIDs, supWSs []string
	for _, c := range batch {
		tids = append(tids, c.TID)
		if c.Superseded {
			supIDs = append(supIDs, c.ID)
			supWSs = append(supWSs, c.WorkspaceName)
		}
	}
	var preserved, preservedWSs []string
	var kept []candidate
	err := db.Select(&kept, `
		SELECT id, workspace_name, true AS superseded, tombstone_preserved_at AS at
		FROM documents WHERE tombstone_preserved_at IS NOT NULL LIMIT $1`, batchSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kept {
		preserved = append(preserved, c.ID)
		preservedWSs = append(preservedWSs, c.WorkspaceName)
	}
	if len(batch) == 0 {
		t.Fatal("corpus has no pending tombstones: nothing to explain")
	}
	statements := []struct {
		name, query, index string
		args               []any
	}{
		{"claim", schema.Render(nil, tombstonesSQL).Claim, "supersessiond_documents_tombstones", []any{time.Now(), "-infinity", "", batchSize}},
		{"dependents", schema.Render(nil, tombstonesSQL).Cited, "supersessiond_documents_source_ids", []any{pq.Array(supIDs), pq.Array(supWSs)}},
		{"preserve", schema.Render(nil, tombstonesSQL).Preserve, tidScan, []any{pq.Array(tids)}},
		{"delete", schema.Render(nil, tombstonesSQL).Delete[1], tidScan, []any{pq.Array(tids), "run", "triage"}},
		{"backlog", schema.Render(nil, tombstonesSQL).Backlog, "supersessiond_documents_tombstones", []any{300.0, batch[len(batch)/2].At, batch[len(batch)/2].ID}},
	}
	if len(preserved) == 0 {
		return statements
	}
	return append(statements, []struct {
		name, query, index string
		args               []any
	}{
		{"re-check page", schema.Render(nil, tombstonesSQL).PreservedPage, "supersessiond_documents_preserved",
			[]any{"-infinity", "", "infinity", "", time.Now(), batchSize}},
		{"re-check dependents", schema.Render(nil, tombstonesSQL).Cited, "supersessiond_documents_source_ids", []any{pq.Array(preserved), pq.Array(preservedWSs)}},
		{"release", schema.Render(nil, tombstonesSQL).Release[1], "documents_pkey", []any{pq.Array(preserved), "run", "release"}},
		{"held", schema.Render(nil, tombstonesSQL).Held, "supersessiond_documents_preserved", nil},
	}...)
}

// Every statement of a pass uses the index it was written for, on a table
// large enough for the planner to prefer a sequential scan if the statement
// gave it the chance.
func TestPlansUseTheIndexes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := bench.GenerateTombstones(ctx, db.DB, bench.TombstoneCorpus{
		Documents: 60_000, Workspaces: 8, SoftDeleted: 4_000, SupersededShare: 0.5,
		DerivedShare: 0.3, CrossWorkspaceShare: 0.05, MalformedShare: 0.001, Dim: 256, Seed: 0.3,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Preserve some tombstones (a budget of one batch), leaving a backlog,
	// then let (auto)vacuum do what it would.
	cfg := Settings{Mode: jobs.ModeLive, MinAge: 5 * time.Minute, BatchSize: 1000, KeepDeleted: 168 * time.Hour}
	clock := time.Now()
	job := New(jobs.Deps{DB: db.DB, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}, Options{Budget: time.Nanosecond})
	if r, err := job.Reconcile(ctx, cfg); err != nil || r.Preserved == 0 || r.Backlog == 0 {
		t.Fatalf("setup pass: %v %+v", err, r)
	}
	if _, err := db.Exec(`VACUUM (ANALYZE) documents`); err != nil {
		t.Fatal(err)
	}
	// 00003 turns GIN's pending list off: the dependent query must not scan
	// one (see the migration).
	var opts []string
	if err := db.Select(&opts, `SELECT unnest(reloptions) FROM pg_class WHERE relname = 'supersessiond_documents_source_ids'`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(opts, ",") != "fastupdate=off" {
		t.Errorf("source_ids index options %v, want fastupdate=off", opts)
	}
	statements := planStatements(t, db.DB, 500)
	if len(statements) != 9 {
		t.Fatalf("%d statements to explain, want all 9", len(statements))
	}
	for _, s := range statements {
		text, nodes, err := explain(ctx, db.DB, false, s.query, s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkPlan(t, s.name, nodes, s.index)
		if t.Failed() {
			t.Logf("%s:\n%s", s.name, text)
		}
	}
}

// The dependent check stays one indexed query per batch on every shape a
// stack keeps citations in: source_ids as a text array (GIN, array_ops),
// and a document_sources edge table (its index on source_id).
func TestDependentCheckPlansOnEveryShape(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		name, index string
		setup       []string
	}{
		{"source_ids text[]", "supersessiond_documents_source_ids", []string{
			`DROP INDEX supersessiond_documents_source_ids`,
			`ALTER TABLE documents ADD COLUMN source_ids_array text[]`,
			`UPDATE documents SET source_ids_array = ARRAY(SELECT jsonb_array_elements_text(source_ids)) WHERE jsonb_typeof(source_ids) = 'array'`,
			`ALTER TABLE documents DROP COLUMN source_ids`,
			`ALTER TABLE documents RENAME COLUMN source_ids_array TO source_ids`,
		}},
		{"document_sources edges", "supersessiond_document_sources_source", []string{
			`CREATE TABLE document_sources (derived_id text NOT NULL REFERENCES documents (id) ON DELETE CASCADE, source_id text NOT NULL,
			   position int NOT NULL DEFAULT 0, workspace_name text NOT NULL, PRIMARY KEY (derived_id, source_id))`,
			`INSERT INTO document_sources (derived_id, source_id, workspace_name)
			   SELECT DISTINCT d.id, s.v, d.workspace_name FROM documents d CROSS JOIN LATERAL jsonb_array_elements_text(
			     CASE WHEN jsonb_typeof(d.source_ids) = 'array' THEN d.source_ids ELSE '[]' END) AS s(v)`,
			`DROP INDEX supersessiond_documents_source_ids`,
			`ALTER TABLE documents DROP COLUMN source_ids`,
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			ctx := context.Background()
			if _, err := bench.GenerateTombstones(ctx, db.DB, bench.TombstoneCorpus{
				Documents: 40_000, Workspaces: 8, SoftDeleted: 3_000, SupersededShare: 0.5,
				DerivedShare: 0.3, CrossWorkspaceShare: 0.05, Dim: 8, Seed: 0.4,
			}); err != nil {
				t.Fatal(err)
			}
			for _, q := range sh.setup {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			plan := schema.ReferencePlan()
			res, err := schema.Migrate(ctx, db.DB, plan, schema.Options{})
			if err != nil || !res.Layout.Reports[schema.Tombstones].OK() {
				t.Fatalf("migrate: %v %s", err, res.Layout.Reports[schema.Tombstones].Line())
			}
			if _, err := db.Exec(`VACUUM (ANALYZE)`); err != nil {
				t.Fatal(err)
			}
			st := schema.Render(res.Layout.Names, tombstonesSQL)
			var batch []candidate
			if err := db.Select(&batch, st.Pending, time.Now(), "-infinity", "", 500); err != nil {
				t.Fatal(err)
			}
			var ids, wss []string
			for _, c := range batch {
				ids, wss = append(ids, c.ID), append(wss, c.WorkspaceName)
			}
			text, nodes, err := explain(ctx, db.DB, false, st.Cited, pq.Array(ids), pq.Array(wss))
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, sh.name, nodes, sh.index)
			if t.Failed() {
				t.Logf("plan:\n%s", text)
			}
		})
	}
}
