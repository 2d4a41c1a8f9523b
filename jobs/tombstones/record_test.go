package tombstones_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// rowText is a document as PostgreSQL prints the whole row: every column,
// the embedding's every float and the jsonb columns included.
func rowText(t *testing.T, db *sqlx.DB, id string) string {
	t.Helper()
	var s string
	if err := db.Get(&s, `SELECT d::text FROM documents d WHERE id = $1`, id); err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return s
}

type record struct {
	RunID     string  `db:"run_id"`
	Workspace string  `db:"workspace_name"`
	Digest    string  `db:"content_sha256"`
	Phase     string  `db:"phase"`
	Document  *string `db:"document"`
}

func recordOf(t *testing.T, db *sqlx.DB, id string) record {
	t.Helper()
	var r record
	if err := db.Get(&r, `SELECT run_id, workspace_name, content_sha256, phase, document::text AS document
		FROM supersessiond.deleted_documents WHERE document_id = $1 ORDER BY seq DESC LIMIT 1`, id); err != nil {
		t.Fatalf("the deletion of %s is not recorded: %v", id, err)
	}
	return r
}

// Every document a pass hard-deletes, at triage or released later, is
// recorded with its workspace and content digest under the pass's run id
// and listed in the report; the kept row restores it byte for byte, by run
// or by id, once; the brake refuses a restore.
func TestEveryDeletionIsRecordedAndRestoresByteForByte(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "T1", ws: "ws-1", deleted: "old"},
		doc{id: "T2", ws: "ws-2", deleted: "old", superseded: true},
		doc{id: "D", ws: "ws-2", sources: `["T2"]`},
	)
	// Values that do not survive a careless copy: float4 extremes, NaN,
	// infinities, nested jsonb, text with quotes, a backslash and non-ASCII.
	if _, err := db.Exec(`UPDATE documents SET embedding = '{0.1,1e-45,-3.4028235e+38,NaN,-Infinity,0.33333334}',
		content = E'Lives in Zürich, "quoted" and \\backslashed\\', internal_metadata = '{"a": [1, 2.50, {"b": null}], "c": "ü"}'
		WHERE id = 'T1'`); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{"T1": rowText(t, db.DB, "T1")}

	cfg := testConfig(500)
	first := pass(t, db.DB, cfg)
	if first.Deleted != 1 || first.Preserved != 1 || !slices.Equal(first.DeletedIDs, []string{"T1"}) {
		t.Fatalf("first pass: %+v", first)
	}
	rec := recordOf(t, db.DB, "T1")
	digest := sha256.Sum256([]byte("Lives in Zürich, \"quoted\" and \\backslashed\\"))
	if rec.RunID != first.RunID || rec.Workspace != "ws-1" || rec.Digest != hex.EncodeToString(digest[:]) || rec.Phase != "triage" || rec.Document == nil {
		t.Fatalf("T1's record: %+v (run %s)", rec, first.RunID)
	}

	// T2 is released once D, its last dependent, goes.
	before["T2"] = rowText(t, db.DB, "T2")
	if _, err := db.Exec(`DELETE FROM documents WHERE id = 'D'`); err != nil {
		t.Fatal(err)
	}
	second := pass(t, db.DB, cfg)
	if second.Released != 1 || !slices.Equal(second.DeletedIDs, []string{"T2"}) || recordOf(t, db.DB, "T2").Phase != "release" {
		t.Fatalf("second pass: %+v", second)
	}

	j := newJob(db.DB, tombstones.Options{})
	frozen := testConfig(500)
	frozen.Memory.PipelineV2.MutationsFrozen = true
	if _, err := j.Restore(ctx, settings(frozen), tombstones.RestoreRequest{IDs: []string{"T1"}}); !errors.Is(err, tombstones.ErrRefused) {
		t.Fatalf("a restore under mutationsFrozen: %v", err)
	}
	dry, err := j.Restore(ctx, settings(cfg), tombstones.RestoreRequest{RunID: first.RunID, DryRun: true})
	if err != nil || dry.Restored != 1 || dry.Documents[0].Outcome != tombstones.OutcomeWouldRestore {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if n := countDocs(t, db.DB, "T1"); n != 0 {
		t.Fatal("the dry run restored T1")
	}
	byRun, err := j.Restore(ctx, settings(cfg), tombstones.RestoreRequest{RunID: first.RunID})
	if err != nil || byRun.Restored != 1 {
		t.Fatalf("restore by run: %+v %v", byRun, err)
	}
	byID, err := j.Restore(ctx, settings(cfg), tombstones.RestoreRequest{IDs: []string{"T2", "never-deleted"}})
	if err != nil || byID.Restored != 1 || byID.Refused != 1 {
		t.Fatalf("restore by id: %+v %v", byID, err)
	}
	for id, want := range before {
		if got := rowText(t, db.DB, id); got != want {
			t.Errorf("%s restored as\n%s\nwas\n%s", id, got, want)
		}
	}
	again, err := j.Restore(ctx, settings(cfg), tombstones.RestoreRequest{IDs: []string{"T1"}})
	if err != nil || again.Restored != 0 || !strings.Contains(again.Documents[0].Reason, "already restored") {
		t.Fatalf("a second restore: %+v %v", again, err)
	}
}

// A kept copy outlives maintenance.tombstones.keepDeleted only until the
// next live pass, which purges it and keeps the record; a shadow pass keeps
// it; keepDeleted 0 keeps no copy at all.
func TestKeptCopiesArePurgedAfterKeepDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	world(t, db.DB, doc{id: "A", deleted: "old"}, doc{id: "B", deleted: "old"})
	cfg := testConfig(1)
	cfg.Maintenance.Tombstones.KeepDeleted = time.Hour
	pass(t, db.DB, cfg)
	if _, err := db.Exec(`UPDATE supersessiond.deleted_documents SET deleted_at = now() - interval '2 hours' WHERE document_id = 'A'`); err != nil {
		t.Fatal(err)
	}
	shadow := testConfig(1)
	shadow.Memory.PipelineV2.ShadowMode = true
	if r := pass(t, db.DB, shadow); r.Purged != 0 || recordOf(t, db.DB, "A").Document == nil {
		t.Fatalf("a shadow pass purged: %+v", r)
	}
	if r := pass(t, db.DB, cfg); r.Purged != 1 {
		t.Fatalf("live pass: %+v", r)
	}
	if a, b := recordOf(t, db.DB, "A"), recordOf(t, db.DB, "B"); a.Document != nil || a.Digest == "" || b.Document == nil {
		t.Fatalf("after the purge: A %+v, B %+v", a, b)
	}
	r, err := newJob(db.DB, tombstones.Options{}).Restore(ctx, settings(cfg), tombstones.RestoreRequest{IDs: []string{"A"}})
	if err != nil || r.Restored != 0 || !strings.Contains(r.Documents[0].Reason, "purged") {
		t.Fatalf("restore of a purged copy: %+v %v", r, err)
	}

	world(t, db.DB, doc{id: "C", deleted: "old"})
	cfg.Maintenance.Tombstones.KeepDeleted = 0
	if r := pass(t, db.DB, cfg); !slices.Equal(r.DeletedIDs, []string{"C"}) || recordOf(t, db.DB, "C").Document != nil {
		t.Fatalf("keepDeleted 0 kept a copy: %+v", r)
	}
}

func countDocs(t *testing.T, db *sqlx.DB, id string) int {
	t.Helper()
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM documents WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return n
}

// A kept copy large enough to be compressed (a real embedding's row) is
// compressed with lz4 where the server has it (the test clusters' do), and
// restores byte for byte all the same.
func TestKeptCopiesAreCompressedWithLz4(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	worldWith(t, db.DB, `(SELECT array_agg(((i * 7919) % 1000) / 997.0)::real[] FROM generate_series(1, 1536) i)`,
		doc{id: "T1", deleted: "old"})
	before := rowText(t, db.DB, "T1")
	cfg := testConfig(500)
	first := pass(t, db.DB, cfg)
	if first.Deleted != 1 {
		t.Fatalf("pass: %+v", first)
	}
	var method *string
	if err := db.Get(&method, `SELECT pg_column_compression(document) FROM supersessiond.deleted_documents WHERE document_id = 'T1'`); err != nil {
		t.Fatal(err)
	}
	if method == nil || *method != "lz4" {
		got := "none"
		if method != nil {
			got = *method
		}
		t.Fatalf("the kept copy's compression: %s, want lz4", got)
	}
	if r, err := newJob(db.DB, tombstones.Options{}).Restore(ctx, settings(cfg), tombstones.RestoreRequest{IDs: []string{"T1"}}); err != nil || r.Restored != 1 {
		t.Fatalf("restore: %+v %v", r, err)
	}
	if got := rowText(t, db.DB, "T1"); got != before {
		t.Fatalf("T1 restored as\n%.200s\nwas\n%.200s", got, before)
	}
}
