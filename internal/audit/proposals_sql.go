package audit

// The review queue's SQL (SPEC §10). A proposal's status is derived from
// the history rows that refer to it and from the two attributes as they are
// now; nothing is stored twice. Every lookup goes through an index migrate
// creates: the proposals themselves by (event, created_at) or by
// (agent, created_at) among proposals, their review by proposal_id
// (supersessiond_history_one_review), their application by proposal_id
// (supersessiond_history_one_apply), its revert by reverted_history_id
// (supersessiond_history_one_revert), the attributes by primary key.

// proposalStatus is the derivation, in precedence order: what happened last
// to the agent's data wins over what was said about it. An undone
// supersession stays "undone" even if the row changed since; an applied one
// "applied" (its old attribute is superseded, which is the point); a
// proposal whose rows no longer hold (either attribute gone, not active, of
// another agent, or its content edited since) is "stale" whatever its
// review said, since neither applying nor reviewing it means what it meant;
// then the review; then "pending".
const proposalStatus = `
       CASE
         WHEN rv.id IS NOT NULL THEN 'undone'
         WHEN ap.id IS NOT NULL THEN 'applied'
         WHEN o.id IS NULL OR n.id IS NULL OR o.status <> 'active' OR n.status <> 'active'
              OR o.content IS DISTINCT FROM h.old_content OR n.content IS DISTINCT FROM h.new_content THEN 'stale'
         WHEN r.event = 'supersession_proposal_accepted' THEN 'accepted'
         WHEN r.event = 'supersession_proposal_rejected' THEN 'rejected'
         ELSE 'pending'
       END`

// proposalFrom joins each proposal h to what refers to it. The partial
// indexes' predicates are repeated so the planner can use them.
const proposalFrom = `
FROM {{.History}} h
LEFT JOIN LATERAL (
  SELECT x.id, x.event, x.created_at, coalesce({{meta "x"}} ->> 'note', '') AS note
  FROM {{.History}} x
  WHERE x.event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')
    AND {{meta "x"}} ->> 'proposal_id' = h.id
  LIMIT 1) r ON true
LEFT JOIN LATERAL (
  SELECT x.id, x.created_at FROM {{.History}} x
  WHERE x.event = 'attribute_superseded' AND {{meta "x"}} ? 'proposal_id' AND {{meta "x"}} ->> 'proposal_id' = h.id
  LIMIT 1) ap ON true
LEFT JOIN LATERAL (
  SELECT x.id, x.created_at FROM {{.History}} x
  WHERE x.event = 'supersession_reverted' AND {{meta "x"}} ->> 'reverted_history_id' = ap.id
  LIMIT 1) rv ON true
LEFT JOIN {{.Attributes}} o ON o.id = {{meta "h"}} ->> 'old_attribute_id' AND o.agent_id = {{meta "h"}} ->> 'agent_id'
LEFT JOIN {{.Attributes}} n ON n.id = {{meta "h"}} ->> 'new_attribute_id' AND n.agent_id = {{meta "h"}} ->> 'agent_id'`

// proposalWhere is the filters of `proposals` except status. $1 agent, $2
// signal name, $3 and $4 the confidence range (NULL: open), $5 a proposal
// id to page after (newest first: only older ones), $6 ids to restrict to
// (empty: any). Unused filters fold away when the statement is planned
// with its parameters, so each combination gets its own index plan.
const proposalWhere = `
WHERE h.event = 'supersession_proposal'
  AND ($1 = '' OR {{meta "h"}} ->> 'agent_id' = $1)
  AND ($2 = '' OR {{meta "h"}} -> 'signals' @> jsonb_build_array(jsonb_build_object('name', $2::text)))
  AND ($3::float8 IS NULL OR ({{meta "h"}} ->> 'confidence')::float8 >= $3)
  AND ($4::float8 IS NULL OR ({{meta "h"}} ->> 'confidence')::float8 <= $4)
  AND ($5 = '' OR (h.created_at, h.id) < ((SELECT c.created_at FROM {{.History}} c WHERE c.id = $5), $5))
  AND (cardinality($6::text[]) = 0 OR h.id = ANY($6))`

// whoSQL is who wrote history row x, for the queue: its changed_by,
// session, request and operator.
const whoSQL = `jsonb_build_object('changed_by', x.changed_by, 'session_id', x.session_id, 'request_id', x.request_id,
         'operator', {{meta "x"}} ->> 'operator', 'operator_source', {{meta "x"}} ->> 'operator_source')`

// proposalsSQL lists proposals with their status, newest first. $7 status
// (” any), $8 limit. Who decided is looked up by primary key for the rows
// listed only (the planner evaluates those subqueries after the limit).
const proposalsSQL = `
SELECT p.*,
       (SELECT ` + whoSQL + ` FROM {{.History}} x WHERE x.id = p.review_id) AS review_by,
       (SELECT ` + whoSQL + ` FROM {{.History}} x WHERE x.id = p.applied_id) AS applied_by,
       (SELECT ` + whoSQL + ` FROM {{.History}} x WHERE x.id = p.reverted_id) AS reverted_by
FROM (
SELECT h.id, h.created_at, h.memory_id, coalesce(h.old_content, '') AS old_content, coalesce(h.new_content, '') AS new_content,
       coalesce(h.reason, '') AS reason, {{meta "h"}} AS metadata,
       r.id AS review_id, r.event AS review_event, r.note AS review_note, r.created_at AS review_at,
       ap.id AS applied_id, ap.created_at AS applied_at, rv.id AS reverted_id, rv.created_at AS reverted_at,
       o.status AS old_status, o.content AS old_now, coalesce(o.protected, false) AS old_protected,
       n.status AS new_status, n.content AS new_now,` + proposalStatus + ` AS status
` + proposalFrom + proposalWhere + `
) p
WHERE ($7 = '' OR p.status = $7)
ORDER BY p.created_at DESC, p.id DESC
LIMIT $8`

// proposalCountsSQL counts the proposals the filters select, per status.
const proposalCountsSQL = `
SELECT status, count(*) AS n FROM (
SELECT` + proposalStatus + ` AS status
` + proposalFrom + proposalWhere + `
) p GROUP BY status`

// lockOldSharedSQL takes the old attributes' locks for a batch of reviews,
// as a single review does (shareAttributeSQL), in id order as the engine's
// write does, so neither can deadlock the other.
const lockOldSharedSQL = `
SELECT 1 FROM {{.Attributes}} a WHERE id = ANY($1) ORDER BY id FOR SHARE`

// reviewBatchSQL records one decision per proposal of a batch that is still
// pending now, under the locks lockOldSharedSQL took (a separate statement:
// its snapshot must be newer than those locks). Pending is re-checked as the
// status derivation has it: no review (and the unique index decides a race
// with another reviewer), not applied, both rows still as proposed. $1 the
// proposal ids, $2 event, $3 note, $4 changed_by, $5 actor_type, $6
// request_id, $7 session_id, $8 the operator's name, $9 how it is known.
const reviewBatchSQL = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id, session_id)
SELECT gen_random_uuid()::text, h.memory_id, $2, h.old_content, h.new_content, $4, nullif($3, ''),
       {{metaIn "jsonb_build_object('agent_id', m.agent, 'proposal_id', h.id, 'note', $3::text, 'old_attribute_id', m.old, 'new_attribute_id', m.new) || jsonb_strip_nulls(jsonb_build_object('operator', nullif($8::text, ''), 'operator_source', nullif($9::text, '')))"}},
       $5, nullif($6::text, ''), nullif($7::text, '')
FROM {{.History}} h
CROSS JOIN LATERAL (SELECT {{meta "h"}} ->> 'agent_id' AS agent, {{meta "h"}} ->> 'old_attribute_id' AS old,
                           {{meta "h"}} ->> 'new_attribute_id' AS new) m
JOIN {{.Attributes}} o ON o.id = m.old AND o.agent_id = m.agent AND o.status = 'active' AND o.content IS NOT DISTINCT FROM h.old_content
JOIN {{.Attributes}} n ON n.id = m.new AND n.agent_id = m.agent AND n.status = 'active' AND n.content IS NOT DISTINCT FROM h.new_content
WHERE h.id = ANY($1) AND h.event = 'supersession_proposal'
  AND NOT EXISTS (SELECT 1 FROM {{.History}} x
                  WHERE x.event = 'attribute_superseded' AND {{meta "x"}} ? 'proposal_id' AND {{meta "x"}} ->> 'proposal_id' = h.id)
ORDER BY h.created_at DESC, h.id DESC
ON CONFLICT (({{meta ""}} ->> 'proposal_id'))
  WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected') DO NOTHING
RETURNING id, {{meta ""}} ->> 'proposal_id'`

// attributesSQL reads attributes of one agent as they are now.
const attributesSQL = `
SELECT a.id, a.agent_id, a.aspect_id, a.kind, a.content, a.status, a.superseded_by, a.superseded_at,
       coalesce(a.protected, false) AS protected, a.created_at, a.updated_at
FROM {{.Attributes}} a WHERE a.id = ANY($1) AND a.agent_id = $2`

// siblingsSQL reads the other active attributes of an aspect (the sibling
// index), oldest first, at most $4.
const siblingsSQL = `
SELECT a.id, a.agent_id, a.aspect_id, a.kind, a.content, a.status, a.superseded_by, a.superseded_at,
       coalesce(a.protected, false) AS protected, a.created_at, a.updated_at
FROM {{.Attributes}} a
WHERE a.agent_id = $1 AND a.aspect_id = $2 AND a.status = 'active' AND a.aspect_id IS NOT NULL AND NOT (a.id = ANY($3))
ORDER BY a.created_at, a.id
LIMIT $4`

// chainSQL follows superseded_by from an attribute, within its agent: where
// its content went.
const chainSQL = `
WITH RECURSIVE chain AS (
  SELECT a.id, a.superseded_by, 0 AS depth FROM {{.Attributes}} a WHERE a.id = $1 AND a.agent_id = $2
  UNION ALL
  SELECT a.id, a.superseded_by, c.depth + 1 FROM chain c
  JOIN {{.Attributes}} a ON a.id = c.superseded_by AND a.agent_id = $2
  WHERE c.depth < 20
)
SELECT a.id, a.agent_id, a.aspect_id, a.kind, a.content, a.status, a.superseded_by, a.superseded_at,
       coalesce(a.protected, false) AS protected, a.created_at, a.updated_at
FROM chain c JOIN {{.Attributes}} a ON a.id = c.id AND a.agent_id = $2
ORDER BY c.depth`

// attributeHistorySQL is the supersession story of some attributes of one
// agent: proposals about them, reviews, supersessions and reverts, where
// either is the old or the new side (supersessiond_history_old_attribute and
// _new_attribute), oldest first.
const attributeHistorySQL = `
SELECT id, memory_id, event, old_content, new_content, changed_by, reason, {{meta ""}} AS metadata, created_at,
       actor_type, session_id, request_id
FROM {{.History}}
WHERE event IN ('supersession_proposal', 'supersession_proposal_accepted', 'supersession_proposal_rejected',
                'attribute_superseded', 'supersession_reverted')
  AND ({{meta ""}} ->> 'old_attribute_id' = ANY($1) OR {{meta ""}} ->> 'new_attribute_id' = ANY($1))
  AND {{meta ""}} ->> 'agent_id' = $2
ORDER BY created_at, id
LIMIT 200`

// agentsSQL lists the agents that have proposals (the console's filter).
const agentsSQL = `
SELECT DISTINCT {{meta ""}} ->> 'agent_id' AS agent FROM {{.History}}
WHERE event = 'supersession_proposal' AND {{meta ""}} ->> 'agent_id' IS NOT NULL
ORDER BY 1 LIMIT 1000`

// statsSQL counts what reviews say about the judgment (SPEC §10), overall,
// per method, per signal (a proposal counts for every signal it carries,
// once) and per confidence band of 0.1, over the proposals of $1 (agent,
// ” all) created at or after $2 (NULL: ever). Per proposal: accepted and
// rejected come from its review, applied from an attribute_superseded row
// carrying its id, undone from that row's revert; decided is any of the
// first three, and it was right when it was accepted or applied and not
// undone since.
const statsSQL = `
WITH p AS MATERIALIZED (
  SELECT coalesce(nullif({{meta "h"}} ->> 'method', ''), 'unknown') AS method,
         ({{meta "h"}} ->> 'confidence')::float8 AS confidence,
         CASE WHEN jsonb_typeof({{meta "h"}} -> 'signals') = 'array' THEN {{meta "h"}} -> 'signals' ELSE '[]'::jsonb END AS signals,
         coalesce(r.event = 'supersession_proposal_accepted', false) AS accepted,
         coalesce(r.event = 'supersession_proposal_rejected', false) AS rejected,
         ap.id IS NOT NULL AS applied,
         rv.id IS NOT NULL AS undone,` + proposalStatus + ` AS status
` + proposalFrom + `
  WHERE h.event = 'supersession_proposal'
    AND ($1 = '' OR {{meta "h"}} ->> 'agent_id' = $1)
    AND ($2::timestamptz IS NULL OR h.created_at >= $2)
)
SELECT 'all' AS dim, '' AS key, ` + statsCounts + ` FROM p
UNION ALL
SELECT 'method', method, ` + statsCounts + ` FROM p GROUP BY method
UNION ALL
SELECT 'signal', s.name, ` + statsCounts + ` FROM p
CROSS JOIN LATERAL (SELECT DISTINCT coalesce(e ->> 'name', '?') AS name FROM jsonb_array_elements(p.signals) e) s
GROUP BY s.name
UNION ALL
SELECT 'confidence', coalesce(to_char(floor(confidence * 10) / 10, 'FM0.0'), '?'), ` + statsCounts + ` FROM p
GROUP BY 2`

const statsCounts = `count(*) AS proposals,
       count(*) FILTER (WHERE status = 'pending') AS pending,
       count(*) FILTER (WHERE status = 'stale') AS stale,
       count(*) FILTER (WHERE accepted) AS accepted,
       count(*) FILTER (WHERE rejected) AS rejected,
       count(*) FILTER (WHERE applied) AS applied,
       count(*) FILTER (WHERE applied AND NOT accepted) AS applied_unreviewed,
       count(*) FILTER (WHERE undone) AS undone,
       count(*) FILTER (WHERE accepted OR rejected OR applied) AS decided,
       count(*) FILTER (WHERE (accepted OR applied) AND NOT undone) AS correct`
