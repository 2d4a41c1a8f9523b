// Package tombstones is the tombstone reconciliation job (SPEC §5): it
// hard-deletes soft-deleted documents, except superseded ones that a live
// document of the same workspace still cites in source_ids; those are kept
// as tombstones, their embedding removed, so reasoning chains stay
// navigable without the vector index carrying dead rows. It answers the
// review of Honcho PR #457, whose flaws are the invariants here.
//
// A pass has two phases, each in batches of maintenance.tombstones.batchSize,
// each batch one short transaction:
//
//   - Triage. Tombstones soft-deleted longer than minAge ago and never
//     preserved are claimed in (deleted_at, id) order with FOR UPDATE SKIP
//     LOCKED, so concurrent passes (several daemons, the CLI) take disjoint
//     batches and never wait on each other. One set-based query per batch
//     finds which of its superseded tombstones a live document of the same
//     workspace cites (the GIN index on source_ids, ?|). In the same
//     transaction those are preserved — embedding NULL and
//     tombstone_preserved_at set by one statement, so neither happens alone,
//     and only once — and the rest hard-deleted. Preserved tombstones never
//     re-enter triage: the claim takes only unmarked rows.
//   - Re-check. Preserved tombstones are re-checked in (tombstone_preserved_at,
//     id) order with the same dependent query, without locking or writing the
//     ones that stay; those whose last live dependent is gone (deleted,
//     soft-deleted, edited, moved to another workspace) or that are no longer
//     superseded are locked (SKIP LOCKED) and hard-deleted: released. The
//     re-check resumes where the previous pass stopped (a cursor in
//     supersessiond_state) and goes round, so every preserved tombstone is
//     reached however many there are.
//
// Rules. Live means deleted_at IS NULL: a soft-deleted dependent, preserved
// or not, does not keep anything. A document citing itself does not count.
// A citation is a top-level string of source_ids as the jsonb ? operator
// sees it: an array element, a bare string, or an object key; NULL and other
// shapes cite nothing and never fail a batch (counting the bare string and
// the object key errs towards keeping: a wrongly kept tombstone is released
// later, a wrongly deleted one is gone). Documents restored by the agent
// (deleted_at NULL again) are never touched.
//
// The embedding column is never read, only set NULL, so its type does not
// matter (pgvector's vector, real[], bytea, ...). Shadow mode and the
// mutationsFrozen brake run the same scans in read-only transactions that
// lock nothing, and report what would be preserved, deleted and released.
//
// Time budget. A pass stops starting batches when its budget is used
// (Budget: a quarter of the schedule's interval, between 10 s and 5 min);
// triage gets three quarters of it while a backlog remains, so releases are
// never starved. Every pass does at least one batch of each phase. A huge
// backlog is worked off over several passes; the report says what was left.
//
// Cost. Each statement is bounded by its batch and uses its index, which
// TestPlansUseTheIndexes checks on a generated table: the paging statements
// read their partial index in order (sorting is disabled in the batch
// transaction, because the planner's estimates for these mostly-NULL columns
// would otherwise make every batch read the whole backlog); the dependent
// query reads the GIN index, kept without a pending list (migration 00003);
// writes reach the claimed, locked rows by ctid. A pass over 100,000
// tombstones among 1,000,000 documents takes about 3 s on two shared cores
// (BenchmarkReconcile).
//
// A failure (the database going away, cancellation) loses at most the
// batch in flight, which rolls back whole; the next tick goes on. Nothing
// depends on the daemon's lease: the claims and the guarded release are
// safe under any number of concurrent passes.
package tombstones
