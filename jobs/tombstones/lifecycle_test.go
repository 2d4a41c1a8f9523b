package tombstones_test

import (
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// Preserving removes the embedding and marks the row, and changes nothing
// else: content (however large), source_ids, superseded_by, metadata and
// timestamps are what reasoning chains read.
func TestPreserveKeepsEverythingButTheEmbedding(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T", deleted: "old", superseded: true, sources: `["S1", "S2"]`},
		doc{id: "D", sources: `["T"]`},
	)
	huge := strings.Repeat("ünïcødé 🚀 ", 100_000) // ~1.6 MB, TOASTed
	if _, err := db.Exec(`UPDATE documents SET content = $1 WHERE id = 'T'`, huge); err != nil {
		t.Fatal(err)
	}
	before := rows(t, db.DB)["T"]
	r := pass(t, db.DB, testConfig(500))
	if r.Preserved != 1 || r.Deleted != 0 || r.Examined != 1 {
		t.Fatalf("report: %+v", r)
	}
	after, ok := rows(t, db.DB)["T"]
	if !ok {
		t.Fatal("T was deleted")
	}
	if !after.Preserved || !after.EmbeddingNull {
		t.Fatalf("T not preserved as a tombstone: preserved=%v embedding_null=%v", after.Preserved, after.EmbeddingNull)
	}
	if after.Content != huge || *after.Sources != *before.Sources || *after.SupersededBy != "T-v2" ||
		after.Metadata != before.Metadata || !after.DeletedAt.Equal(*before.DeletedAt) || !after.CreatedAt.Equal(before.CreatedAt) ||
		after.Workspace != before.Workspace {
		t.Fatalf("preserving changed more than the embedding:\nbefore %+v\nafter  %+v", before, after)
	}
}

// A second pass over a reconciled table changes nothing and does not even
// touch (write or lock) the preserved rows: they never re-enter triage.
func TestSecondPassIsANoOp(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{1, 3, 500} {
		t.Run("batch="+itoa(batch), func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			var docs []doc
			for _, i := range []string{"1", "2", "3", "4", "5"} {
				docs = append(docs,
					doc{id: "T" + i, deleted: "old", superseded: true},
					doc{id: "X" + i, deleted: "old"},
					doc{id: "Y" + i, deleted: "young", superseded: true},
					doc{id: "D" + i, sources: `["T` + i + `", "X` + i + `", "Y` + i + `"]`},
				)
			}
			world(t, db.DB, docs...)
			cfg := testConfig(batch)
			first := pass(t, db.DB, cfg)
			if first.Preserved != 5 || first.Deleted != 5 {
				t.Fatalf("first pass: %+v", first)
			}
			sum := checksum(t, db.DB)
			for i := range 3 {
				r := pass(t, db.DB, cfg)
				if r.Examined != 0 || r.Preserved != 0 || r.Deleted != 0 || r.Released != 0 || r.Batches != 0 {
					t.Fatalf("pass %d after the first did something: %+v", i+2, r)
				}
				if r.Rechecked != 5 || !r.RecheckComplete || r.Held != 5 || r.Backlog != 0 {
					t.Fatalf("pass %d: want the 5 preserved re-checked, nothing awaiting: %+v", i+2, r)
				}
				if got := checksum(t, db.DB); got != sum {
					t.Fatalf("pass %d wrote to or locked rows (xmin/xmax or values changed)", i+2)
				}
			}
		})
	}
}

// A preserved tombstone is hard-deleted (released) on the first pass after
// its last live dependent is gone, however it went.
func TestReleaseAfterTheLastDependentGoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		goes string // SQL run between the passes
		want map[string]outcome
	}{
		{"dependent soft-deleted", `UPDATE documents SET deleted_at = now() - interval '1 hour' WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": gone}},
		{"dependent soft-deleted just now (too young to triage, but not live)", `UPDATE documents SET deleted_at = now() WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": pending}},
		{"dependent hard-deleted by the agent", `DELETE FROM documents WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": gone}},
		{"dependent's source_ids edited", `UPDATE documents SET source_ids = '["other"]' WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": live}},
		{"dependent's source_ids set NULL", `UPDATE documents SET source_ids = NULL WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": live}},
		{"dependent moved to another workspace", `UPDATE documents SET workspace_name = 'ws-z' WHERE id = 'D'`,
			map[string]outcome{"T": gone, "D": live}},
		{"tombstone no longer superseded", `UPDATE documents SET superseded_by = NULL WHERE id = 'T'`,
			map[string]outcome{"T": gone, "D": live}},
		{"nothing changed: kept", ``,
			map[string]outcome{"T": preserved, "D": live}},
		{"a new dependent replaced the old one: kept", `
			INSERT INTO documents (id, workspace_name, observer, observed, content, source_ids)
			VALUES ('D2', 'ws-a', 'agent', 'user', 'new', '["T"]');
			DELETE FROM documents WHERE id = 'D'`,
			map[string]outcome{"T": preserved, "D": gone, "D2": live}},
		{"tombstone restored by the agent: live again, never released", `
			UPDATE documents SET deleted_at = NULL WHERE id = 'T';
			UPDATE documents SET source_ids = NULL WHERE id = 'D'`,
			map[string]outcome{"T": live, "D": live}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			world(t, db.DB,
				doc{id: "T", deleted: "old", superseded: true},
				doc{id: "D", sources: `["T"]`},
			)
			cfg := testConfig(2)
			if r := pass(t, db.DB, cfg); r.Preserved != 1 {
				t.Fatalf("first pass did not preserve T: %+v", r)
			}
			if tc.goes != "" {
				if _, err := db.Exec(tc.goes); err != nil {
					t.Fatal(err)
				}
			}
			r := pass(t, db.DB, cfg)
			if d := diff(t, db.DB, tc.want); d != "" {
				t.Fatalf("after the second pass:\n%s", d)
			}
			wantReleased := 0
			if tc.want["T"] == gone {
				wantReleased = 1
			}
			if r.Released != wantReleased {
				t.Fatalf("released %d, want %d: %+v", r.Released, wantReleased, r)
			}
		})
	}
}

// With two dependents, the tombstone stays until the second one goes.
func TestReleaseWaitsForTheLastDependent(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T", deleted: "old", superseded: true},
		doc{id: "D1", sources: `["T"]`},
		doc{id: "D2", sources: `{"T": 1}`},
	)
	cfg := testConfig(500)
	pass(t, db.DB, cfg)
	if _, err := db.Exec(`DELETE FROM documents WHERE id = 'D1'`); err != nil {
		t.Fatal(err)
	}
	if r := pass(t, db.DB, cfg); r.Released != 0 {
		t.Fatalf("released while D2 still cites T: %+v", r)
	}
	if d := diff(t, db.DB, map[string]outcome{"T": preserved}); d != "" {
		t.Fatal(d)
	}
	if _, err := db.Exec(`UPDATE documents SET deleted_at = now() - interval '1 hour' WHERE id = 'D2'`); err != nil {
		t.Fatal(err)
	}
	if r := pass(t, db.DB, cfg); r.Released != 1 || r.Deleted != 1 {
		t.Fatalf("want T released and D2 deleted in one pass: %+v", r)
	}
	if d := diff(t, db.DB, map[string]outcome{"T": gone, "D2": gone}); d != "" {
		t.Fatal(d)
	}
}

// A chain: T is cited by U, U (superseded too) by a live D. Deleting D lets
// the next pass release U; T was never preserved, because U was never live.
func TestChainsUnwindOnePassAtATime(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T", deleted: "old", superseded: true},
		doc{id: "U", deleted: "old", superseded: true, sources: `["T"]`},
		doc{id: "D", sources: `["U"]`},
	)
	cfg := testConfig(1)
	pass(t, db.DB, cfg)
	if d := diff(t, db.DB, map[string]outcome{"T": gone, "U": preserved, "D": live}); d != "" {
		t.Fatal(d)
	}
	if _, err := db.Exec(`UPDATE documents SET deleted_at = now() - interval '1 hour' WHERE id = 'D'`); err != nil {
		t.Fatal(err)
	}
	r := pass(t, db.DB, cfg)
	if d := diff(t, db.DB, map[string]outcome{"U": gone, "D": gone}); d != "" {
		t.Fatalf("%s\n%+v", d, r)
	}
}
