package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/store"
)

// TombstoneCorpus describes a documents table to generate for measuring
// tombstone reconciliation. Generation is set-based (one INSERT ...
// SELECT over generate_series) and deterministic for a given Seed.
type TombstoneCorpus struct {
	Documents   int // rows to insert (ids doc-1 .. doc-N)
	Workspaces  int // documents are spread round-robin over ws-0 .. ws-(W-1)
	SoftDeleted int // exactly this many get deleted_at (older than minAge unless Young)
	// SupersededShare of the soft-deleted also get superseded_by (a newer
	// document of the same workspace).
	SupersededShare float64
	// DerivedShare of all documents cite 1 to 4 earlier documents in
	// source_ids, mostly of their own workspace; CrossWorkspaceShare of
	// those citations point into another workspace (and must not count).
	DerivedShare        float64
	CrossWorkspaceShare float64
	// MalformedShare of derived documents have a source_ids of another
	// shape than an array of strings: an object keyed by an id, a bare
	// string, a number, an array holding a nested array and a null.
	MalformedShare float64
	// YoungShare of the soft-deleted were deleted 30 seconds ago, younger
	// than the default minAge.
	YoungShare float64
	// Dim is the length of each embedding (real[]); 0 means no embedding.
	Dim  int
	Seed float64 // in [-1, 1]
}

// DefaultTombstoneCorpus is the scale: 1,000,000 documents, 100,000
// of them soft-deleted, half of those superseded.
func DefaultTombstoneCorpus() TombstoneCorpus {
	return TombstoneCorpus{
		Documents:           1_000_000,
		Workspaces:          8,
		SoftDeleted:         100_000,
		SupersededShare:     0.5,
		DerivedShare:        0.3,
		CrossWorkspaceShare: 0.05,
		MalformedShare:      0.001,
		Dim:                 256,
		Seed:                0.42,
	}
}

// TombstoneCorpusStats describes what GenerateTombstones made.
type TombstoneCorpusStats struct {
	Documents   int64
	SoftDeleted int64
	Superseded  int64 // soft-deleted and superseded
	Citing      int64 // documents with a non-null source_ids
	TableBytes  int64 // documents, with indexes and TOAST
	Took        time.Duration
}

// generateSQL inserts the corpus in one statement. A soft-deleted row is
// picked by a multiplicative permutation of 1..N, so exactly SoftDeleted rows
// are picked ($4 is a multiplier coprime with N); citations point backwards
// (derived documents cite older ones), within the workspace (a step of a
// multiple of W) or, for the cross-workspace share, one step off it.
// Embeddings come from a pool of 1,024 random vectors: every row still
// carries its own Dim floats on disk, without generating N*Dim randoms.
const generateSQL = `
WITH vectors AS MATERIALIZED (
  SELECT n, CASE WHEN $9 > 0 THEN
           array(SELECT (random() * 2 - 1)::real FROM generate_series(1, $9) WHERE n >= 0)
         END AS v
  FROM generate_series(0, 1023) n
), rows AS (
  SELECT i,
         (i * $4) % $1 < $3 AS deleted,
         random() < $6 AS derived,
         random() AS r
  FROM generate_series(1::bigint, $1) i
)
INSERT INTO documents (id, workspace_name, observer, observed, content, level,
                       source_ids, embedding, created_at, deleted_at, superseded_by)
SELECT 'doc-' || g.i,
       'ws-' || (g.i % $2),
       'agent-' || (g.i % 3),
       'peer-' || (g.i % 97),
       md5(g.i::text) || ' ' || md5((g.i + 1)::text) || ' ' || md5((g.i + 2)::text),
       CASE WHEN g.derived THEN 'deductive' ELSE 'explicit' END,
       CASE
         WHEN NOT g.derived THEN NULL
         WHEN g.r < $8 THEN (ARRAY[
             jsonb_build_object('doc-' || greatest(g.i - $2, 1), 1),
             to_jsonb('doc-' || greatest(g.i - 2 * $2, 1)),
             to_jsonb(g.i - $2),
             jsonb_build_array(jsonb_build_array('doc-' || greatest(g.i - 3 * $2, 1)), NULL)
           ])[1 + (g.i % 4)::int]
         ELSE (
           SELECT jsonb_agg('doc-' || t.target)
           FROM (
             SELECT g.i - $2 * k.step - CASE WHEN random() < $7 THEN 1 ELSE 0 END AS target
             FROM (SELECT 1 + floor(random() * 2000)::bigint AS step
                   FROM generate_series(1, 1 + floor(random() * 4)::int)
                   WHERE g.i > 0) k
           ) t
           WHERE t.target >= 1)
       END,
       v.v,
       now() - make_interval(secs => ($1 - g.i) * 2),
       CASE
         WHEN NOT g.deleted THEN NULL
         WHEN random() < $10 THEN now() - interval '30 seconds'
         ELSE now() - interval '1 hour' - make_interval(secs => random() * 86400 * 7)
       END,
       CASE WHEN g.deleted AND random() < $5 THEN
         'doc-' || CASE WHEN g.i + $2 <= $1 THEN g.i + $2 ELSE greatest(g.i - $2, 1) END
       END
FROM rows g
JOIN vectors v ON v.n = g.i % 1024`

const statsSQL = `
SELECT count(*) AS documents,
       count(deleted_at) AS soft_deleted,
       count(*) FILTER (WHERE deleted_at IS NOT NULL AND superseded_by IS NOT NULL) AS superseded,
       count(source_ids) AS citing,
       pg_total_relation_size('documents') AS table_bytes
FROM documents`

// GenerateTombstones fills documents (which should be empty) with corpus c,
// then VACUUM ANALYZEs it, as autovacuum would have done to a table of that
// age, and checkpoints, so that a pass is measured on a table in its
// ordinary state.
func GenerateTombstones(ctx context.Context, db *sqlx.DB, c TombstoneCorpus) (TombstoneCorpusStats, error) {
	start := time.Now()
	if c.Documents < 1 || c.Workspaces < 1 || c.SoftDeleted < 0 || c.SoftDeleted > c.Documents {
		return TombstoneCorpusStats{}, fmt.Errorf("bench: invalid corpus %+v", c)
	}
	mult := coprime(int64(c.Documents))
	err := store.InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT setseed($1)`, c.Seed); err != nil {
			return fmt.Errorf("bench: seed: %w", err)
		}
		_, err := tx.ExecContext(ctx, generateSQL, c.Documents, c.Workspaces, c.SoftDeleted, mult,
			c.SupersededShare, c.DerivedShare, c.CrossWorkspaceShare, c.MalformedShare, c.Dim, c.YoungShare)
		if err != nil {
			return fmt.Errorf("bench: generate %d documents: %w", c.Documents, err)
		}
		return nil
	})
	if err != nil {
		return TombstoneCorpusStats{}, err
	}
	if _, err := db.ExecContext(ctx, `VACUUM (ANALYZE) documents`); err != nil {
		return TombstoneCorpusStats{}, fmt.Errorf("bench: vacuum documents: %w", err)
	}
	// Flush the generation's gigabyte of dirty pages now, so that a pass
	// measured next does not pay for them. Only superusers (and, from
	// PostgreSQL 15, pg_checkpoint) may: elsewhere the pass shares the cost.
	_, _ = db.ExecContext(ctx, `CHECKPOINT`)
	var s TombstoneCorpusStats
	row := db.QueryRowxContext(ctx, statsSQL)
	if err := row.Scan(&s.Documents, &s.SoftDeleted, &s.Superseded, &s.Citing, &s.TableBytes); err != nil {
		return s, fmt.Errorf("bench: describe the corpus: %w", err)
	}
	s.Took = time.Since(start)
	return s, nil
}

// coprime returns a multiplier m with gcd(m, n) = 1, so that i -> i*m mod n
// permutes 0..n-1.
func coprime(n int64) int64 {
	for _, m := range []int64{7919, 7927, 7933, 7937, 104729} {
		if gcd(m, n) == 1 {
			return m
		}
	}
	return 1
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// NaiveResult is what NaiveReconcile did.
type NaiveResult struct {
	Examined  int
	Preserved int
	Deleted   int
	Took      time.Duration
}

// The baseline's statements, in the shape of Honcho PR #457's
// cleanup_soft_deleted_documents: the ORM loads whole Document rows (the
// embedding too) for the batch and for each superseded document's children,
// checks the children one document at a time, then NULLs the embeddings of
// the kept ones and deletes the rest with one statement each per batch. Its
// dependent lookup uses the same GIN index as the set-based job, so the
// comparison measures the per-document queries, not a missing index.
const (
	naiveBatchSQL = `
SELECT id, workspace_name, observer, observed, content, level, source_ids, embedding::text AS embedding,
       internal_metadata, created_at, deleted_at, superseded_by
FROM documents
WHERE deleted_at IS NOT NULL
  AND tombstone_preserved_at IS NULL
  AND deleted_at <= now() - make_interval(secs => $1)
ORDER BY deleted_at, id
LIMIT $2`
	naiveChildrenSQL = `
SELECT id, workspace_name, observer, observed, content, level, source_ids, embedding::text AS embedding,
       internal_metadata, created_at, deleted_at, superseded_by
FROM documents
WHERE source_ids ? $1
  AND workspace_name = $2
  AND deleted_at IS NULL
  AND id <> $1`
	naivePreserveSQL = `
UPDATE documents SET embedding = NULL, tombstone_preserved_at = now() WHERE id = ANY($1)`
	naiveDeleteSQL = `
DELETE FROM documents WHERE id = ANY($1)`
)

// naiveDoc is a whole document row, as an ORM loads it.
type naiveDoc struct {
	ID               string     `db:"id"`
	WorkspaceName    string     `db:"workspace_name"`
	Observer         string     `db:"observer"`
	Observed         string     `db:"observed"`
	Content          string     `db:"content"`
	Level            string     `db:"level"`
	SourceIDs        []byte     `db:"source_ids"`
	Embedding        *string    `db:"embedding"`
	InternalMetadata []byte     `db:"internal_metadata"`
	CreatedAt        time.Time  `db:"created_at"`
	DeletedAt        *time.Time `db:"deleted_at"`
	SupersededBy     *string    `db:"superseded_by"`
}

// NaiveReconcile is the per-document baseline, the way Honcho PR #457 does
// it: fetch a batch of soft-deleted documents, then for each superseded one
// a query for its dependents, then one UPDATE for the kept and one DELETE
// for the rest, committing per batch. Unlike the PR it marks what it
// preserved (tombstone_preserved_at), so a pass ends and the two approaches
// reach the same final state. It stops after limit tombstones (0: no limit).
func NaiveReconcile(ctx context.Context, db *sqlx.DB, minAge time.Duration, batchSize, limit int) (NaiveResult, error) {
	start := time.Now()
	var r NaiveResult
	for limit == 0 || r.Examined < limit {
		n := batchSize
		if limit > 0 {
			n = min(n, limit-r.Examined)
		}
		done := false
		var keep, drop []string
		err := store.InTx(ctx, db, func(tx *sqlx.Tx) error {
			var batch []naiveDoc
			if err := tx.SelectContext(ctx, &batch, naiveBatchSQL, minAge.Seconds(), n); err != nil {
				return fmt.Errorf("bench: naive: fetch batch: %w", err)
			}
			if len(batch) == 0 {
				done = true
				return nil
			}
			keep, drop = keep[:0], drop[:0]
			for _, d := range batch {
				if d.SupersededBy != nil {
					var children []naiveDoc
					if err := tx.SelectContext(ctx, &children, naiveChildrenSQL, d.ID, d.WorkspaceName); err != nil {
						return fmt.Errorf("bench: naive: dependents of %s: %w", d.ID, err)
					}
					if len(children) > 0 {
						keep = append(keep, d.ID)
						continue
					}
				}
				drop = append(drop, d.ID)
			}
			if len(keep) > 0 {
				if _, err := tx.ExecContext(ctx, naivePreserveSQL, pq.Array(keep)); err != nil {
					return fmt.Errorf("bench: naive: preserve: %w", err)
				}
			}
			if len(drop) > 0 {
				if _, err := tx.ExecContext(ctx, naiveDeleteSQL, pq.Array(drop)); err != nil {
					return fmt.Errorf("bench: naive: delete: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		r.Examined += len(keep) + len(drop)
		r.Preserved += len(keep)
		r.Deleted += len(drop)
		if done {
			break
		}
	}
	r.Took = time.Since(start)
	return r, nil
}
