// Package compaction is the compaction-event retry job (SPEC §5): it finds
// compaction events stuck in `pending` and re-runs them, so that trimmed
// conversation is never lost. Each stale event ends `completed` (the
// range's facts stored as memories) or `failed` (a deterministic summary of
// the range stored instead); docs/compaction.md walks through a pass.
//
// A pass claims due events in batches with one FOR UPDATE SKIP LOCKED
// statement that counts the attempt and commits before any LLM call; reads
// each batch's messages in one bounded query; asks the LLM from a few
// workers outside any transaction; and writes each outcome in a short
// transaction holding the event's row lock.
//
// Invariants:
//   - Only stale events are touched: fresh, completed, failed, beyond
//     lookback and backing-off events are never claimed, and retry_count
//     never passes maxAttempts.
//   - The attempt is committed before the LLM call; no network wait happens
//     inside a transaction.
//   - An outcome is written at most once per event (the writing transaction
//     requires the event pending, and a failure still at its attempt); facts
//     and summaries carry idempotency keys, checked under that lock, so any
//     unique index of the stack's (or none) serves.
//   - One agent's messages are never read for another agent's event, and a
//     message encrypted at rest never reaches the LLM or a summary.
//   - Shadow mode, mutationsFrozen, and the brake engaged mid-pass change
//     nothing more.
//   - A failed pass leaves every event consistent: pending, its attempt
//     counted, retried after its provisional next_attempt_at.
//   - Every outcome writes one memory_history row (compaction_retried or
//     compaction_failed, memory_id compaction:<event id>).
package compaction
