package compaction

import "github.com/supersessiond/supersessiond/internal/schema"

// The job's SQL. Every statement is parameterised and touches events through
// the partial index supersessiond_compaction_pending (status = 'pending',
// triggered_at) or by primary key, and messages through their
// UNIQUE (agent_id, seq) index; never one agent's rows for another's event.

// statsSQL counts the pending events by what this run will do with them.
// $1 stale cutoff (now - staleAfter), $2 lookback cutoff (now - lookback),
// $3 now.
const statsSQL = `
SELECT
  count(*) FILTER (WHERE triggered_at >= $1)                        AS fresh,
  count(*) FILTER (WHERE triggered_at < $1 AND triggered_at >= $2)  AS stale,
  count(*) FILTER (WHERE triggered_at < $1 AND triggered_at >= $2
                     AND next_attempt_at > $3)                      AS backing_off,
  count(*) FILTER (WHERE triggered_at < $2)                         AS beyond_lookback,
  min(triggered_at) FILTER (WHERE triggered_at < $1 AND triggered_at >= $2) AS oldest_stale
FROM {{.Events}}
WHERE status = 'pending'`

// claimSQL claims up to :n due events and counts the attempt, in one
// statement committed before any LLM call: a crash after it still counts the
// attempt. SKIP LOCKED lets concurrent claimers (other daemons, `compact
// --once`) take disjoint events; the provisional next_attempt_at keeps them
// from taking these again while this worker is busy with them, and is when a
// crashed attempt is retried: the un-jittered backoff of this attempt
// (:initial·2^(attempt-1) seconds capped at :max), or the processing hold
// :hold if longer. The pass walks the index once: (:after_at, :after_id) is
// the last (triggered_at, id) it claimed, and what lies before it was
// claimed, skipped as locked (another claimer's, which sets its own
// next_attempt_at) or not due; without the cursor each batch would re-read
// every event the pass already claimed. :stale stale cutoff, :lookback
// lookback cutoff, :start run start, :attempts maxAttempts.
const claimSQL = `
WITH due AS (
  SELECT id
  FROM {{.Events}}
  WHERE status = 'pending'
    AND triggered_at < :stale
    AND triggered_at >= greatest(CAST(:lookback AS timestamptz), CAST(:after_at AS timestamptz))
    AND (triggered_at, id) > (CAST(:after_at AS timestamptz), CAST(:after_id AS bigint))
    AND (next_attempt_at IS NULL OR next_attempt_at <= :start)
  ORDER BY triggered_at, id
  LIMIT :n
  FOR UPDATE SKIP LOCKED
)
UPDATE {{.Events}} AS e
SET retry_count = least(e.retry_count + 1, CAST(:attempts AS int)),
    next_attempt_at = CAST(:now AS timestamptz) + make_interval(secs =>
      greatest(CAST(:hold AS float8), least(CAST(:max AS float8), CAST(:initial AS float8) * power(CAST(2 AS float8), least(e.retry_count, 40)))))
FROM due
WHERE e.id = due.id
RETURNING e.id, e.agent_id, e.triggered_at, e.min_message_seq, e.max_message_seq, e.retry_count`

// messagesSQL reads, for a batch of claimed events at once, each event's
// messages: that agent's only, seq within the event's range, handed back in
// seq order. A range can be huge (a million messages), so it reads only what
// the LLM prompt can use: the newest :messages messages, each cut to :chars
// characters, and of those only the newest that fit a transcript of
// :transcript characters (the newest are the most likely still topical; the
// LLM client keeps the newest too). A message with an empty body but tool
// calls is shown as its calls. :ids, :agents, :los, :his are parallel
// arrays: event id, agent id, min seq, max seq.
const messagesSQL = `
SELECT c.event_id, w.seq, w.direction, w.body
FROM unnest(CAST(:ids AS bigint[]), CAST(:agents AS text[]), CAST(:los AS bigint[]), CAST(:his AS bigint[])) AS c(event_id, agent_id, lo, hi)
CROSS JOIN LATERAL (
  SELECT newest.seq, newest.direction, newest.body,
         sum(length(newest.body)) OVER (ORDER BY newest.seq DESC) AS upto
  FROM (
    SELECT m.seq, m.direction,
           {{if .ToolCalls}}CASE WHEN btrim(coalesce(m.body, '')) = '' AND m.tool_calls IS NOT NULL
                THEN '[tool calls] ' || left(CAST(m.tool_calls AS text), 500)
                ELSE left(coalesce(m.body, ''), :chars)
           END{{else}}left(coalesce(m.body, ''), :chars){{end}} AS body
    FROM {{.Messages}} AS m
    WHERE m.agent_id = c.agent_id
      AND m.seq BETWEEN c.lo AND c.hi
    ORDER BY m.seq DESC
    LIMIT :messages
  ) AS newest
) AS w
WHERE w.upto - length(w.body) < :transcript
ORDER BY c.event_id, w.seq`

// digestCountsSQL counts a range's messages for the deterministic summary.
// $1 agent, $2 min seq, $3 max seq.
const digestCountsSQL = `
SELECT count(*)                                        AS total,
       count(*) FILTER (WHERE direction = 'inbound')  AS inbound,
       count(*) FILTER (WHERE direction = 'outbound') AS outbound
FROM {{.Messages}}
WHERE agent_id = $1 AND seq BETWEEN $2 AND $3`

// digestLinesSQL reads the beginnings (:chars characters) of the first
// :lines messages of each side of the range :lo..:hi of :agent, in seq
// order: the summary lists first lines until it is full.
const digestLinesSQL = `
(SELECT direction, seq, left(coalesce(body, ''), :chars) AS body
 FROM {{.Messages}}
 WHERE agent_id = :agent AND seq BETWEEN :lo AND :hi AND direction = 'inbound'
 ORDER BY seq
 LIMIT :lines)
UNION ALL
(SELECT direction, seq, left(coalesce(body, ''), :chars) AS body
 FROM {{.Messages}}
 WHERE agent_id = :agent AND seq BETWEEN :lo AND :hi AND direction = 'outbound'
 ORDER BY seq
 LIMIT :lines)
ORDER BY direction, seq`

// lockEventSQL takes the event's row lock for the outcome transaction: the
// outcome is written only if the event is still pending (another worker may
// have finished it meanwhile), and, for a failure, only by the attempt that
// owns it.
const lockEventSQL = `
SELECT status, retry_count
FROM {{.Events}}
WHERE id = $1
FOR UPDATE`

// insertFactsSQL inserts the re-compacted facts, set-based. The idempotency
// key (per event and normalised fact) is the guard: a retry that somehow gets
// here twice inserts nothing twice. It is checked with NOT EXISTS rather than
// ON CONFLICT, so that a stack's unique index in whatever form (a
// constraint, a partial index) or none at all serves: the outcome
// transaction holds the event's row lock, and no other writer uses the
// event's keys, so the check cannot race.
// :agent, :event (its id as text), and parallel arrays: :ids, :contents,
// :normalized, :keys (idempotency).
const insertFactsSQL = `
INSERT INTO {{.Memories}} (id, agent_id, type, content, normalized_content, source_type, source_id, idempotency_key)
SELECT f.id, :agent, 'fact', f.content, f.normalized, 'compaction', :event, f.key
FROM (SELECT DISTINCT ON (key) * FROM unnest(CAST(:ids AS text[]), CAST(:contents AS text[]), CAST(:normalized AS text[]),
                                             CAST(:keys AS text[])) AS u(id, content, normalized, key)) AS f
WHERE NOT EXISTS (SELECT 1 FROM {{.Memories}} m WHERE m.idempotency_key = f.key)
RETURNING id`

// insertSummarySQL stores the deterministic summary of a given-up range once
// per event, and returns the id of the summary memory, new or existing.
// :id, :agent, :content, :event (its id as text), :key (idempotency).
const insertSummarySQL = `
WITH existing AS (
  SELECT id FROM {{.Memories}} WHERE idempotency_key = :key LIMIT 1
),
ins AS (
  INSERT INTO {{.Memories}} (id, agent_id, type, content, source_type, source_id, idempotency_key)
  SELECT :id, :agent, 'compaction_summary', :content, 'compaction', :event, :key
  WHERE NOT EXISTS (SELECT 1 FROM existing)
  RETURNING id
)
SELECT id FROM ins
UNION ALL
SELECT id FROM existing`

// completeSQL: $1 event id, $2 now, $3 summary_len.
const completeSQL = `
UPDATE {{.Events}}
SET status = 'completed', memory_updated = true, completed_at = $2,
    next_attempt_at = NULL, last_error = NULL, summary_len = $3
WHERE id = $1`

// rescheduleSQL: $1 event id, $2 last error, $3 next attempt.
const rescheduleSQL = `
UPDATE {{.Events}}
SET last_error = $2, next_attempt_at = $3
WHERE id = $1`

// failSQL: $1 event id, $2 last error, $3 summary_len (NULL without a
// summary: the column keeps what it held, so a stack that declares it NOT
// NULL, as clawbolt does, takes the write too).
const failSQL = `
UPDATE {{.Events}}
SET status = 'failed', last_error = $2, next_attempt_at = NULL, summary_len = coalesce($3, summary_len)
WHERE id = $1`

// historySQL writes the attempt's audit row.
const historySQL = `
INSERT INTO {{.History}} (id, memory_id, event, new_content, changed_by, reason, metadata)
VALUES (:id, :memory_id, :event, :new_content, :changed_by, :reason, {{metaIn "CAST(:metadata AS jsonb)"}})`

// candidatesSQL lists, for shadow mode, the events a live run would claim,
// without locking or changing anything. :stale, :lookback, :start as in
// claimSQL, :n at most.
const candidatesSQL = `
SELECT e.id, e.agent_id, e.triggered_at, e.min_message_seq, e.max_message_seq, e.retry_count,
       EXISTS (SELECT 1 FROM {{.Messages}} AS m
               WHERE m.agent_id = e.agent_id
                 AND m.seq BETWEEN e.min_message_seq AND e.max_message_seq) AS has_messages
FROM {{.Events}} AS e
WHERE e.status = 'pending'
  AND e.triggered_at < :stale
  AND e.triggered_at >= :lookback
  AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= :start)
ORDER BY e.triggered_at, e.id
LIMIT :n`

// statements are the job's SQL, rendered for one database
// (schema.Render).
type statements struct {
	Stats, DigestCounts, LockEvent, Complete, Reschedule, Fail                    string
	Claim, Messages, DigestLines, InsertFacts, InsertSummary, History, Candidates schema.Named
}

var compactionSQL = statements{
	Stats: statsSQL, Claim: schema.NamedSQL(claimSQL), Messages: schema.NamedSQL(messagesSQL), DigestCounts: digestCountsSQL,
	DigestLines: schema.NamedSQL(digestLinesSQL), LockEvent: lockEventSQL, InsertFacts: schema.NamedSQL(insertFactsSQL),
	InsertSummary: schema.NamedSQL(insertSummarySQL), Complete: completeSQL, Reschedule: rescheduleSQL, Fail: failSQL,
	History: schema.NamedSQL(historySQL), Candidates: schema.NamedSQL(candidatesSQL),
}
