package tombstones

import (
	"strings"
)

// The statements of one reconciliation pass, as templates over schema.Names:
// the documents table wherever the stack keeps it, and its shape (with or
// without superseded_by; citations in source_ids as jsonb or a text array,
// in a document_sources edge table, or both). Every one is bounded by a batch
// (LIMIT, or an id array no longer than the batch), so no statement holds
// locks or builds results in proportion to the backlog. None of them reads
// documents.embedding: its type is the agent's (pgvector's vector, real[],
// bytea...) and the only thing ever done to it is setting it NULL.

// dbNowSQL fixes the pass's reference time on the database's clock, the
// clock deleted_at was written with.
const dbNowSQL = `SELECT now()`

// orderedScanSQL starts each batch transaction. The paging statements
// (pendingSQL, claimSQL, preservedPageSQL) must walk their partial index in
// order and stop after a batch. The planner underestimates how many rows they
// match, badly: deleted_at and tombstone_preserved_at are NULL on most rows,
// and it counts that NULL fraction again for every clause on the column (IS
// NOT NULL, the cutoff, the keyset comparison), so it expects ~1% of the real
// backlog and prefers a bitmap scan of every match plus a sort: each batch
// then reads the whole backlog, and a pass becomes quadratic (measured at
// 100,000 documents: 43 ms a batch instead of 4). No rewording of the
// predicates estimates better, so sorting is ruled out for the transaction;
// none of its statements needs a sort (DISTINCT and joins hash).
const orderedScanSQL = `SET LOCAL enable_sort = off`

// pendingSQL pages through the tombstones awaiting triage, in the order of
// the partial index supersessiond_documents_tombstones (deleted_at, id):
// soft-deleted, old enough ($1 is the cutoff, now() - minAge at the start of
// the pass), never preserved. ($2, $3) is the keyset cursor: the pass never
// revisits a position, so rows skipped because another pass holds them are
// that pass's business, and the scan ends.
const pendingSQL = `
SELECT id, workspace_name, ` + superseded + ` AS superseded, deleted_at AS at, ctid::text AS tid
FROM {{.Documents}}
WHERE deleted_at IS NOT NULL
  AND tombstone_preserved_at IS NULL
  AND deleted_at <= $1
  AND (deleted_at, id) > ($2::timestamptz, $3::text)
ORDER BY deleted_at, id
LIMIT $4`

// claimSQL is pendingSQL taking the rows: each batch is owned by exactly one
// pass until it commits, and concurrent passes (two daemons, the CLI beside
// the daemon) take disjoint batches instead of waiting or deadlocking.
// Shadow passes use pendingSQL and lock nothing.
const claimSQL = pendingSQL + `
FOR UPDATE SKIP LOCKED`

// superseded says whether a tombstone was replaced. Without superseded_by
// (Honcho releases before PR #457) nothing records that, so every cited
// tombstone is kept: the lossless choice.
const superseded = `{{if .SupersededBy}}superseded_by IS NOT NULL{{else}}true{{end}}`

// citedSQL is the dependent check: which candidates ($1 ids, $2 their
// workspaces, in step) are cited by a live document of the same workspace.
// It is one statement per batch, whatever the batch size, over an index for
// each place a stack records citations:
//
//   - source_ids as jsonb: the GIN index (jsonb_ops answers ?|); a
//     citation is what the ? operator matches, a top-level string (an array
//     element, a bare string, or an object key); NULL and other shapes cite
//     nothing and never raise an error;
//   - source_ids as a text array: the GIN index (array_ops answers &&);
//   - a document_sources edge table (Honcho from migration a7c3e9f1b2d4): its
//     index on source_id; a citation is an edge whose derived document is
//     live, in the candidate's workspace.
//
// The citing documents of each kind are found first and materialised, so the
// only plan for the big table is its index scan: written as a join or an
// EXISTS over documents, the planner may instead join the candidates to
// every live document on workspace_name and filter, a quadratic scan of the
// table with a handful of workspaces. The ids reach ?| and && through a
// sub-select, as a parameter the planner cannot see into: given the array as
// a constant, it estimates the operator's selectivity element by element
// (1.4 ms of planning per batch of 250, more than running the query). A
// soft-deleted document (deleted_at set, preserved or not) is not live, and
// a document citing itself does not count.
const citedSQL = `
WITH cand AS (SELECT * FROM unnest($1::text[], $2::text[]) AS c(id, workspace_name))
{{- if eq .SourceIDs "jsonb"}},
by_json AS MATERIALIZED (
  SELECT d.id, d.workspace_name, d.source_ids
  FROM {{.Documents}} d
  WHERE d.source_ids ?| (SELECT $1::text[])
    AND d.deleted_at IS NULL
){{end}}
{{- if eq .SourceIDs "array"}},
by_array AS MATERIALIZED (
  SELECT d.id, d.workspace_name, d.source_ids
  FROM {{.Documents}} d
  WHERE d.source_ids && (SELECT $1::text[])::{{.SourceArray}}
    AND d.deleted_at IS NULL
){{end}}
{{- if .HasSources}},
by_edge AS MATERIALIZED (
  SELECT s.source_id, d.workspace_name, d.id
  FROM unnest((SELECT $1::text[])) AS k(id)
  JOIN {{.Sources}} s ON s.source_id = k.id
  JOIN {{.Documents}} d ON d.id = s.derived_id
  WHERE d.deleted_at IS NULL
){{end}}
SELECT DISTINCT c.id
FROM cand c
WHERE false
{{- if eq .SourceIDs "jsonb"}}
   OR EXISTS (SELECT 1 FROM by_json d WHERE d.workspace_name = c.workspace_name AND d.source_ids ? c.id AND d.id <> c.id){{end}}
{{- if eq .SourceIDs "array"}}
   OR EXISTS (SELECT 1 FROM by_array d WHERE d.workspace_name = c.workspace_name AND c.id = ANY(d.source_ids) AND d.id <> c.id){{end}}
{{- if .HasSources}}
   OR EXISTS (SELECT 1 FROM by_edge e WHERE e.workspace_name = c.workspace_name AND e.source_id = c.id AND e.id <> c.id){{end}}`

// preserveSQL keeps claimed superseded tombstones that live documents cite:
// the embedding goes (so the vector index does not carry dead rows) and the
// mark is set in the same statement, so neither can happen without the
// other. It is written once per row: triage claims only unmarked rows.
//
// preserveSQL and deleteSQL address the claimed rows by ctid, as the claim
// returned it: the claim holds them locked until this transaction ends, so
// nobody can update, delete or move them meanwhile, and a TID scan reaches
// each row without descending the primary key (at a million documents those
// descents, on pages mostly out of shared buffers, were most of a write's
// time). For the same reason they need no guard repeating the claim's
// conditions; such a guard would also match the partial index of pending
// tombstones, and the planner then ANDs that whole index into each write.
const preserveSQL = `
UPDATE {{.Documents}}
SET {{if .Embedding}}embedding = NULL, {{end}}tombstone_preserved_at = now()
WHERE ctid = ANY($1::tid[])`

// deleteSQL hard-deletes claimed tombstones that nothing live needs, and
// records each in the same statement (recordDeleted): no document is gone
// without its record.
const deleteSQL = `
WITH gone AS (
  DELETE FROM {{.Documents}} d
  WHERE d.ctid = ANY($1::tid[])
  RETURNING ` + goneMark + `
)` + recordDeleted

// recordDeleted ends deleteSQL and releaseSQL, whose deleted rows are gone:
// it records each deleted document's id, workspace and the SHA-256 of its
// content as stored (in the database's own encoding); $2 is the pass's run
// id, $3 the phase (triage or release). The deleted ids come back.
//
// Rendered twice (keeping): while maintenance.tombstones.keepDeleted is not
// 0 it also keeps the row itself as jsonb, embedding included whatever its
// type (pgvector's vector becomes its text form, an array a JSON array),
// which reconcile --restore puts back with jsonb_populate_record; that is
// the one statement of the job that reads the embedding. With keepDeleted 0
// it reads only what it records.
const recordDeleted = `
INSERT INTO {{.Deleted}} (run_id, document_id, workspace_name, content_sha256, document, phase)
SELECT $2, g.id::text, g.workspace_name::text,
       encode(sha256(convert_to(g.content::text, current_setting('server_encoding'))), 'hex'),
       ` + copyMark + `, $3
FROM gone g
RETURNING document_id`

// The marks keeping replaces: what the deletion returns, and the kept copy.
const (
	goneMark = "/*gone*/"
	copyMark = "/*copy*/"
)

// keeping renders a recording deletion keeping the whole row, or not.
func keeping(query string, keep bool) string {
	if keep {
		return strings.NewReplacer(goneMark, "d.*", copyMark, "to_jsonb(g)").Replace(query)
	}
	return strings.NewReplacer(goneMark, "d.id, d.workspace_name, d.content", copyMark, "NULL::jsonb").Replace(query)
}

// preservedPageSQL pages through preserved tombstones for the release
// re-check, in the order of supersessiond_documents_preserved
// (tombstone_preserved_at, id), from ($1, $2) exclusive to ($3, $4)
// inclusive: the pass resumes after where the previous one stopped and wraps
// around, so every preserved tombstone is re-checked in turn however large
// the set. Rows preserved at or after $5 (the start of this pass) were just
// checked and are left for the next pass. Nothing is locked: re-checking
// must not write to rows that stay (releaseSQL locks the few that go).
const preservedPageSQL = `
SELECT id, workspace_name, ` + superseded + ` AS superseded, tombstone_preserved_at AS at
FROM {{.Documents}}
WHERE tombstone_preserved_at IS NOT NULL
  AND deleted_at IS NOT NULL
  AND (tombstone_preserved_at, id) > ($1::timestamptz, $2::text)
  AND (tombstone_preserved_at, id) <= ($3::timestamptz, $4::text)
  AND tombstone_preserved_at < $5
ORDER BY tombstone_preserved_at, id
LIMIT $6`

// releaseSQL hard-deletes preserved tombstones that no longer qualify. It
// locks them first, skipping any another pass holds, so two passes never
// both count one release. A row an agent restored meanwhile (deleted_at
// NULL) no longer matches and stays. (Nothing but a release ever clears
// tombstone_preserved_at, so that needs no guard; one would also let the
// planner AND the whole index of preserved tombstones into the statement.)
const releaseSQL = `
WITH gone AS (
  DELETE FROM {{.Documents}} d
  USING (
    SELECT id FROM {{.Documents}}
    WHERE id = ANY($1::text[])
      AND deleted_at IS NOT NULL
    FOR UPDATE SKIP LOCKED
  ) locked
  WHERE d.id = locked.id
  RETURNING ` + goneMark + `
)` + recordDeleted

// backlogSQL counts the tombstones awaiting triage now (soft-deleted, older
// than minAge ($1 seconds), not preserved) beyond the keyset position ($2,
// $3) where the pass's triage stopped: after a full pass, those that came of
// age meanwhile; after a pass the budget stopped, what it left. It never
// walks the index entries of rows the pass just deleted, which stay in the
// index, dead, until vacuum (counting from the start right after a pass over
// 100,000 tombstones took 1.3 s of random heap reads).
const backlogSQL = `
SELECT count(*)
FROM {{.Documents}}
WHERE deleted_at IS NOT NULL
  AND tombstone_preserved_at IS NULL
  AND deleted_at <= now() - make_interval(secs => $1)
  AND (deleted_at, id) > ($2::timestamptz, $3::text)`

// heldSQL counts the preserved tombstones.
const heldSQL = `
SELECT count(*)
FROM {{.Documents}}
WHERE tombstone_preserved_at IS NOT NULL
  AND deleted_at IS NOT NULL`

// purgeSQL drops the kept copies of documents deleted more than keepDeleted
// ($1 seconds) ago, a batch ($2) at a time, oldest first through the partial
// index of kept copies; the record of each deletion (id, workspace, digest)
// stays. Rows another pass is purging are skipped.
const purgeSQL = `
WITH old AS (
  SELECT seq FROM {{.Deleted}}
  WHERE document IS NOT NULL
    AND deleted_at < now() - make_interval(secs => $1)
  ORDER BY deleted_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE {{.Deleted}} d
SET document = NULL, purged_at = now()
FROM old
WHERE d.seq = old.seq`

// The release cursor is the daemon's own bookkeeping: where the last pass's
// re-check stopped, so the next one goes on from there.
const cursorName = "tombstones.release_cursor"

const loadCursorSQL = `
SELECT value FROM {{.State}} WHERE name = $1`

const saveCursorSQL = `
INSERT INTO {{.State}} (name, value, updated_at)
VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`

// statements are the job's SQL, rendered for one database
// (schema.Render).
type statements struct {
	Claim, DbNow, OrderedScan, Pending, Cited, Preserve, PreservedPage, Backlog, Held, LoadCursor, SaveCursor string
	// Delete and Release record what they delete; [1] also keeps the row
	// (keeping).
	Delete, Release                                          [2]string
	Purge, Deletions, Columns, Restore, Exists, MarkRestored string
}

var tombstonesSQL = statements{
	Claim: claimSQL, DbNow: dbNowSQL, OrderedScan: orderedScanSQL, Pending: pendingSQL, Cited: citedSQL,
	Preserve: preserveSQL, PreservedPage: preservedPageSQL, Backlog: backlogSQL, Held: heldSQL,
	LoadCursor: loadCursorSQL, SaveCursor: saveCursorSQL,
	Delete:  [2]string{keeping(deleteSQL, false), keeping(deleteSQL, true)},
	Release: [2]string{keeping(releaseSQL, false), keeping(releaseSQL, true)},
	Purge:   purgeSQL, Deletions: deletionsSQL, Columns: documentColumnsSQL, Restore: restoreSQL,
	Exists: documentExistsSQL, MarkRestored: markRestoredSQL,
}
