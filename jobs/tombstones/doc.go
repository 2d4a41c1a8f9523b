// Package tombstones is the tombstone reconciliation job (SPEC §5, §9): it
// hard-deletes soft-deleted documents, except superseded ones that a live
// document of the same workspace still cites; those are kept as
// tombstones, their embedding removed, so reasoning chains stay navigable
// without the vector index carrying dead rows. It answers the review of
// Honcho PR #457; docs/tombstones.md has the details and the figures.
//
// A pass has two phases, in batches of maintenance.tombstones.batchSize,
// each batch one short transaction within a time budget:
//   - Triage claims tombstones old enough and never preserved (FOR UPDATE
//     SKIP LOCKED, so concurrent passes take disjoint batches), finds with
//     one set-based query per batch which are cited, preserves those
//     (embedding NULL and tombstone_preserved_at set by one statement, once)
//     and deletes the rest.
//   - Re-check walks the preserved tombstones from where the last pass
//     stopped, and releases (deletes) those no longer superseded and cited.
//
// Invariants:
//   - Live means deleted_at IS NULL; a document citing itself does not count;
//     a citation is in source_ids (jsonb or a text array) or a
//     document_sources edge, whichever the stack has; without superseded_by
//     every cited tombstone is kept.
//   - The dependent check is one indexed query per batch on every shape.
//   - Every hard-deleted document is recorded in the statement that deletes
//     it (supersessiond.deleted_documents: run id, id, workspace, content
//     SHA-256), with its whole row as jsonb for keepDeleted, so a mistaken
//     pass can be restored byte for byte (Restore); a live pass purges older
//     copies and keeps the records.
//   - The embedding is read only into that copy, otherwise only set NULL:
//     any column type works.
//   - Shadow mode, mutationsFrozen and the brake engaged mid-pass change
//     nothing; the report says what a live pass would do.
//   - A failure loses at most the batch in flight, which rolls back whole;
//     correctness never depends on the daemon's lease.
package tombstones
