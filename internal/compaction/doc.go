// Package compaction is the compaction-event retry job (SPEC §5): it finds
// compaction events stuck in `pending` and re-runs them, so that trimmed
// conversation is never lost.
//
// The agent (clawbolt) advances its trim watermark before an asynchronous
// LLM compaction lands; when that compaction fails, the trimmed messages are
// gone from the agent's context and its continuity note covers them for 60
// minutes only. This job closes the gap for good: each stale event ends
// either `completed`, with the range's facts stored as memories, or `failed`,
// with a deterministic summary of the range stored as a memory.
//
// # A pass
//
//  1. Count the pending events (report, backlog gauges).
//  2. Claim due events in batches: `pending`, `triggered_at` older than
//     staleAfter and within lookback, `next_attempt_at` null or not after the
//     pass's start. The claim is one statement, a FOR UPDATE SKIP LOCKED CTE
//     over the partial index on pending events' triggered_at, that increments
//     retry_count and sets a provisional next_attempt_at, committed before any
//     LLM call. So a crash after the claim still counts the attempt, and no
//     other worker (another daemon, `compact --once`) takes the event while
//     this one works on it: it comes back only when its provisional
//     next_attempt_at passes, after the un-jittered backoff of the attempt or
//     the processing hold (3 LLM timeouts + 1 minute), whichever is longer.
//     A pass walks the index once (each claim resumes after the last
//     (triggered_at, id) it claimed) and claims only events due at its
//     start, so it ends, and touches each event at most once.
//  3. Read each batch's messages in one query: that agent's only, that seq
//     range only, in seq order; at most the newest 1000 messages, each cut to
//     4000 characters, and of those the newest fitting 64,000 characters, so a
//     range of a million messages or of 1 MB bodies costs what the prompt can
//     use and no more.
//  4. Workers (maintenance.llm.maxConcurrency of them; the shared LLM client
//     bounds calls across jobs too) ask the LLM for the facts, outside any
//     transaction, then write the outcome in one short transaction that holds
//     the event's row lock and checks that the event is still pending:
//     - success: facts inserted (type fact, source_type compaction, source_id
//     the event id, idempotency key compaction:<event>:<sha256 of the
//     normalised fact>, ON CONFLICT DO NOTHING), the event completed with
//     memory_updated and completed_at, a compaction_retried history row;
//     - failure before maxAttempts: last_error (bounded, no secrets) and
//     next_attempt_at = now + backoff within [backoff.initial, backoff.max]
//     (initial·2^(attempt-1) plus up to 50% jitter, capped), a
//     compaction_retried history row;
//     - failure at maxAttempts: the event failed, the range's deterministic
//     summary stored as a compaction_summary memory (idempotency key
//     compaction-summary:<event>), a compaction_failed history row.
//     An event without a (valid) seq range is failed at once with that
//     reason; one whose messages are all gone is failed at once with a
//     summary saying so. Without an LLM configured every attempt fails with
//     "no LLM configured" and the event ends as a summary after maxAttempts.
//
// # Invariants
//
//   - Only stale events are touched: fresh, completed, failed, beyond
//     lookback and backing-off events are never claimed.
//   - The attempt is committed before the LLM call; no LLM call or other
//     network wait happens inside a transaction.
//   - An outcome is written at most once per event: the writing transaction
//     locks the event and requires it pending (and, for a failure, still at
//     the attempt that failed, so a slow attempt cannot overwrite a later
//     one's claim). Facts and the summary also carry idempotency keys, so even
//     a repeated write inserts nothing twice.
//   - One agent's messages are never read for another agent's event.
//   - Shadow mode and mutationsFrozen change nothing, not even retry_count:
//     the report lists what would be retried.
//   - A failed pass (database gone, context cancelled) leaves every event
//     consistent: pending with its attempt counted, retried after its
//     provisional next_attempt_at.
//
// # History rows
//
// Every attempt that reaches an outcome writes exactly one memory_history
// row, changed_by supersessiond:compaction, memory_id compaction:<event id>
// (history needs a non-null memory_id and an attempt concerns an event, not
// one memory; the synthetic id is stable, so one event's rows are easy to
// select): compaction_retried for a completed or rescheduled attempt (an
// auditor sees every failed try, not only the last error),
// compaction_failed when the event is given up. metadata carries agent_id,
// event_id, attempt, max_attempts, outcome, error (null on success),
// error_kind, the seq range, messages_read, model, facts returned and
// inserted with their memory ids, summary_memory_id, next_attempt_at. An
// attempt cut short by a crash or shutdown writes no row; the gap shows in
// the attempt numbers.
//
// summary_len is set to the characters of what was stored: the facts joined
// by newlines on completion, the summary on failure. memory_updated is set on
// completion only (a reply with no durable facts still completes the
// event: the LLM judged the range small talk); a failed event keeps it false,
// and its summary memory is found by source_id.
package compaction
