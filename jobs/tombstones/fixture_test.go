package tombstones_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// doc is one row of a test world.
type doc struct {
	id, ws     string
	deleted    string // "" live, "old" soft-deleted an hour ago, "young" ten seconds ago
	superseded bool   // superseded_by set (to "<id>-v2")
	sources    string // source_ids as JSON text; "" is SQL NULL
}

// world inserts docs in one statement. Every row gets an embedding (real[]
// unless the column was altered; then embeddingSQL gives the value).
func world(t *testing.T, db *sqlx.DB, docs ...doc) {
	t.Helper()
	worldWith(t, db, `ARRAY[0.25, 0.5, 0.75]::real[]`, docs...)
}

func worldWith(t *testing.T, db *sqlx.DB, embeddingSQL string, docs ...doc) {
	t.Helper()
	var ids, wss, deleted, superseded, sources []string
	for _, d := range docs {
		ws := d.ws
		if ws == "" {
			ws = "ws-a"
		}
		ids = append(ids, d.id)
		wss = append(wss, ws)
		deleted = append(deleted, d.deleted)
		sup := ""
		if d.superseded {
			sup = d.id + "-v2"
		}
		superseded = append(superseded, sup)
		sources = append(sources, d.sources)
	}
	_, err := db.Exec(`
		INSERT INTO documents (id, workspace_name, observer, observed, content, source_ids, embedding,
		                       internal_metadata, deleted_at, superseded_by)
		SELECT id, ws, 'agent', 'user', 'content of ' || id, nullif(src, '')::jsonb, `+embeddingSQL+`,
		       '{"k": "v"}',
		       CASE del WHEN 'old' THEN now() - interval '1 hour'
		                WHEN 'young' THEN now() - interval '10 seconds' END,
		       nullif(sup, '')
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, ws, del, sup, src)`,
		pq.Array(ids), pq.Array(wss), pq.Array(deleted), pq.Array(superseded), pq.Array(sources))
	if err != nil {
		t.Fatalf("insert world: %v", err)
	}
}

// outcome is what became of a row: live, pending (soft-deleted, not
// triaged), preserved, or gone.
type outcome string

const (
	live      outcome = "live"
	pending   outcome = "pending"
	preserved outcome = "preserved"
	gone      outcome = "gone"
)

type rowState struct {
	Deleted       bool       `db:"deleted"`
	Preserved     bool       `db:"preserved"`
	EmbeddingNull bool       `db:"embedding_null"`
	Content       string     `db:"content"`
	Sources       *string    `db:"sources"`
	SupersededBy  *string    `db:"superseded_by"`
	Metadata      string     `db:"metadata"`
	DeletedAt     *time.Time `db:"deleted_at"`
	PreservedAt   *time.Time `db:"tombstone_preserved_at"`
	Xmin          string     `db:"xmin"`
	Xmax          string     `db:"xmax"`
	CreatedAt     time.Time  `db:"created_at"`
	Workspace     string     `db:"workspace_name"`
	ID            string     `db:"id"`
}

func rows(t *testing.T, db *sqlx.DB) map[string]rowState {
	t.Helper()
	var rs []rowState
	err := db.Select(&rs, `
		SELECT id, workspace_name, deleted_at IS NOT NULL AS deleted,
		       tombstone_preserved_at IS NOT NULL AS preserved,
		       embedding IS NULL AS embedding_null, content, source_ids::text AS sources,
		       superseded_by, internal_metadata::text AS metadata, deleted_at, tombstone_preserved_at,
		       xmin::text AS xmin, xmax::text AS xmax, created_at
		FROM documents`)
	if err != nil {
		t.Fatalf("read documents: %v", err)
	}
	out := make(map[string]rowState, len(rs))
	for _, r := range rs {
		out[r.ID] = r
	}
	return out
}

func (r rowState) outcome(t *testing.T) outcome {
	t.Helper()
	switch {
	case !r.Deleted:
		// Restored by the agent: live, whatever mark an earlier pass left.
		return live
	case r.Preserved:
		if !r.EmbeddingNull {
			t.Errorf("%s: preserved with its embedding still set", r.ID)
		}
		return preserved
	default:
		return pending
	}
}

// outcomes maps every id of docs to its outcome.
func outcomes(t *testing.T, db *sqlx.DB, ids []string) map[string]outcome {
	t.Helper()
	rs := rows(t, db)
	out := make(map[string]outcome, len(ids))
	for _, id := range ids {
		r, ok := rs[id]
		if !ok {
			out[id] = gone
			continue
		}
		out[id] = r.outcome(t)
	}
	return out
}

func idsOf(docs []doc) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	return ids
}

func testConfig(batchSize int) *config.Config {
	cfg := config.Default()
	cfg.Maintenance.Tombstones.MinAge = 5 * time.Minute
	cfg.Maintenance.Tombstones.BatchSize = batchSize
	return cfg
}

// settings are what a pass runs under with cfg, as the daemon makes them.
func settings(cfg *config.Config) tombstones.Settings { return daemon.SettingsOf(cfg).Tombstones }

func newJob(db *sqlx.DB, opts tombstones.Options) *tombstones.Job {
	return tombstones.New(jobs.Deps{DB: db}, opts)
}

func pass(t *testing.T, db *sqlx.DB, cfg *config.Config) *tombstones.Report {
	t.Helper()
	r, err := newJob(db, tombstones.Options{}).Reconcile(context.Background(), settings(cfg))
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	return r
}

// ownPool opens a separate pool on the test database, so that the job's
// connections can be told apart from the test's (pg_terminate_backend).
func ownPool(t *testing.T, db *pgtest.DB) *sqlx.DB {
	t.Helper()
	p, err := sqlx.Open("postgres", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// checksum is a digest of every column but the embedding's value, plus each
// row's xmin and xmax: equal checksums mean no row was written, deleted, or
// even locked.
func checksum(t *testing.T, db *sqlx.DB) string {
	t.Helper()
	var s string
	err := db.Get(&s, `
		SELECT coalesce(md5(string_agg(concat_ws('|', id, workspace_name, content, source_ids::text,
		         embedding IS NULL, deleted_at, superseded_by, tombstone_preserved_at, xmin, xmax), ',' ORDER BY id)), '')
		FROM documents`)
	if err != nil {
		t.Fatalf("checksum: %v", err)
	}
	return s
}

// oracle computes, independently of the job's SQL, what a pass must do to
// the current table: each soft-deleted document older than minAge, or
// already preserved, is (or stays) preserved when superseded and cited by a
// live document of the same workspace (a citation being a top-level string
// of source_ids: array element, bare string or object key; not itself), else
// it is gone. The state before the pass decides everything: a pass only
// removes soft-deleted documents, which were never live dependents.
func oracle(t *testing.T, db *sqlx.DB, minAge time.Duration) map[string]outcome {
	t.Helper()
	type r struct {
		ID         string  `db:"id"`
		WS         string  `db:"workspace_name"`
		Deleted    bool    `db:"deleted"`
		Old        bool    `db:"old"`
		Preserved  bool    `db:"preserved"`
		Superseded bool    `db:"superseded"`
		Sources    *string `db:"sources"`
	}
	var all []r
	err := db.Select(&all, `
		SELECT id, workspace_name, deleted_at IS NOT NULL AS deleted,
		       coalesce(deleted_at <= now() - make_interval(secs => $1), false) AS old,
		       tombstone_preserved_at IS NOT NULL AS preserved, superseded_by IS NOT NULL AS superseded,
		       source_ids::text AS sources
		FROM documents`, minAge.Seconds())
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	citedBy := map[[2]string]bool{} // (workspace, id) cited by a live document
	for _, d := range all {
		if d.Deleted || d.Sources == nil {
			continue
		}
		for _, id := range citations(*d.Sources) {
			if id != d.ID {
				citedBy[[2]string{d.WS, id}] = true
			}
		}
	}
	out := make(map[string]outcome, len(all))
	for _, d := range all {
		switch {
		case !d.Deleted:
			out[d.ID] = live
		case d.Preserved && d.Superseded && citedBy[[2]string{d.WS, d.ID}]:
			out[d.ID] = preserved
		case d.Preserved:
			out[d.ID] = gone // released
		case !d.Old:
			out[d.ID] = pending
		case d.Superseded && citedBy[[2]string{d.WS, d.ID}]:
			out[d.ID] = preserved
		default:
			out[d.ID] = gone
		}
	}
	return out
}

// citations are the top-level strings of a source_ids value, the way the
// jsonb ? operator sees them.
func citations(raw string) []string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		panic(fmt.Sprintf("source_ids from the database is not JSON: %q", raw))
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		var ks []string
		for k := range v {
			ks = append(ks, k)
		}
		return ks
	case []any:
		var ss []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				ss = append(ss, s)
			}
		}
		return ss
	}
	return nil
}

// diff lists the ids whose outcome differs from want.
func diff(t *testing.T, db *sqlx.DB, want map[string]outcome) string {
	t.Helper()
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	got := outcomes(t, db, ids)
	var bad []string
	for id, w := range want {
		if got[id] != w {
			bad = append(bad, fmt.Sprintf("%s: got %s, want %s", id, got[id], w))
		}
	}
	sort.Strings(bad)
	if len(bad) > 10 {
		bad = append(bad[:10], fmt.Sprintf("... and %d more", len(bad)-10))
	}
	return strings.Join(bad, "\n")
}
