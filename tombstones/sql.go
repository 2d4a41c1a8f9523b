package tombstones

// The statements of one reconciliation pass. Every one is bounded by a batch
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
SELECT id, workspace_name, superseded_by IS NOT NULL AS superseded, deleted_at AS at, ctid::text AS tid
FROM documents
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

// citedSQL is the dependent check: which candidates ($1 ids, $2 their
// workspaces, in step) are cited by a live document of the same workspace.
// It is one statement per batch, whatever the batch size.
//
// The citing documents are found through the GIN index on source_ids
// (jsonb_ops answers ?| from the index) and materialised first, so the only
// plan for the big table is the index scan. Written as a join or an EXISTS
// over documents, the planner may instead join the candidates to every live
// document on workspace_name and filter: with a handful of workspaces that
// is a quadratic scan of the table (seconds per batch at a million rows).
//
// The ids reach ?| through a sub-select, as a parameter the planner cannot
// see into: given the array as a constant, it estimates the operator's
// selectivity element by element, which at 250 ids took 1.4 ms of planning
// per batch, more than running the query (0.1 ms this way). The index is
// used all the same; its only alternative is reading the whole table.
//
// A citation is what the jsonb ? operator matches: a top-level string of
// source_ids — an array element, a bare string, or an object key. NULL and
// other shapes (numbers, nested arrays) cite nothing, and never raise an
// error. A soft-deleted document (deleted_at set, preserved or not) is not
// live. A document citing itself does not count (a candidate is soft-deleted,
// hence never live, so d.id <> c.id only states the rule).
const citedSQL = `
WITH citing AS MATERIALIZED (
  SELECT d.id, d.workspace_name, d.source_ids
  FROM documents d
  WHERE d.source_ids ?| (SELECT $1::text[])
    AND d.deleted_at IS NULL
)
SELECT DISTINCT c.id
FROM unnest($1::text[], $2::text[]) AS c(id, workspace_name)
JOIN citing d ON d.workspace_name = c.workspace_name
             AND d.source_ids ? c.id
             AND d.id <> c.id`

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
UPDATE documents
SET embedding = NULL, tombstone_preserved_at = now()
WHERE ctid = ANY($1::tid[])`

// deleteSQL hard-deletes claimed tombstones that nothing live needs.
const deleteSQL = `
DELETE FROM documents
WHERE ctid = ANY($1::tid[])`

// preservedPageSQL pages through preserved tombstones for the release
// re-check, in the order of supersessiond_documents_preserved
// (tombstone_preserved_at, id), from ($1, $2) exclusive to ($3, $4)
// inclusive: the pass resumes after where the previous one stopped and wraps
// around, so every preserved tombstone is re-checked in turn however large
// the set. Rows preserved at or after $5 (the start of this pass) were just
// checked and are left for the next pass. Nothing is locked: re-checking
// must not write to rows that stay (releaseSQL locks the few that go).
const preservedPageSQL = `
SELECT id, workspace_name, superseded_by IS NOT NULL AS superseded, tombstone_preserved_at AS at
FROM documents
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
DELETE FROM documents d
USING (
  SELECT id FROM documents
  WHERE id = ANY($1::text[])
    AND deleted_at IS NOT NULL
  FOR UPDATE SKIP LOCKED
) gone
WHERE d.id = gone.id`

// backlogSQL counts the tombstones awaiting triage now (soft-deleted, older
// than minAge ($1 seconds), not preserved) beyond the keyset position ($2,
// $3) where the pass's triage stopped: after a full pass, those that came of
// age meanwhile; after a pass the budget stopped, what it left. It never
// walks the index entries of rows the pass just deleted, which stay in the
// index, dead, until vacuum (counting from the start right after a pass over
// 100,000 tombstones took 1.3 s of random heap reads).
const backlogSQL = `
SELECT count(*)
FROM documents
WHERE deleted_at IS NOT NULL
  AND tombstone_preserved_at IS NULL
  AND deleted_at <= now() - make_interval(secs => $1)
  AND (deleted_at, id) > ($2::timestamptz, $3::text)`

// heldSQL counts the preserved tombstones.
const heldSQL = `
SELECT count(*)
FROM documents
WHERE tombstone_preserved_at IS NOT NULL
  AND deleted_at IS NOT NULL`

// The release cursor is the daemon's own bookkeeping: where the last pass's
// re-check stopped, so the next one goes on from there.
const cursorName = "tombstones.release_cursor"

const loadCursorSQL = `
SELECT value FROM supersessiond_state WHERE name = $1`

const saveCursorSQL = `
INSERT INTO supersessiond_state (name, value, updated_at)
VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
