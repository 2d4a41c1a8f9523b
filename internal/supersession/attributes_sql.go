package supersession

import (
	"fmt"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// The attribute store's SQL (attributeStore), as templates over
// schema.Names, rendered once when the engine is built: the only
// statements that read or write the agent's attributes, its aspects' names
// and the supersession rows of its history.

// lockSQL takes the old rows' locks, in id order so that concurrent writers
// never deadlock on each other, before anything is checked. Under READ
// COMMITTED the statement that follows then sees every change that was
// committed before the locks were granted: an operator's undo (which holds
// the same lock while it restores the row and writes its revert) or review
// (which takes it while it records the rejection) is either fully visible to
// the guard or waits for this write to finish. Checking in the statement
// that locks would not do: its snapshot is older than the lock it waited for.
const lockSQL = `
SELECT id FROM {{.Attributes}} WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// applySQL supersedes a batch of old attributes in one statement, under the
// locks lockSQL took. For each request it re-checks the decision's
// assumptions, and for the automatic paths that no operator vetoed the pair
// (rejected it, or undid a supersession of the old attribute after the new
// one was recorded), updates the row and inserts its attribute_superseded
// row carrying the undo snapshot (prior status, superseded_by, superseded_at,
// updated_at) and what the supersession left (for undo's "changed since"
// check). Requests whose guard fails produce no row: the caller compares
// what came back.
const applySQL = storeReq + `,
prior AS (
  SELECT r.ord, a.id, a.status, a.superseded_by, a.superseded_at, a.updated_at, a.memory_id, a.content,
         r.new_id, r.new_content, r.meta, r.reason
  FROM req r
  JOIN {{.Attributes}} a ON a.id = r.old_id AND a.agent_id = r.agent_id
  WHERE (a.status = 'active' OR (r.force_chain AND a.status = 'superseded' AND a.superseded_by IS DISTINCT FROM r.new_id))
    AND a.kind = 'attribute'
    AND NOT a.protected
    AND a.content = r.old_content
    AND EXISTS (
      SELECT 1 FROM {{.Attributes}} n
      WHERE n.id = r.new_id AND n.agent_id = r.agent_id AND n.status = 'active' AND n.kind = 'attribute'
        AND (r.any_aspect OR n.aspect_id IS NOT DISTINCT FROM a.aspect_id) AND n.content = r.new_content AND n.id <> a.id)
    AND NOT (r.respect_vetoes AND EXISTS (
      SELECT 1 FROM {{.History}} h
      WHERE h.event IN ('supersession_proposal_rejected', 'supersession_reverted')
        AND {{meta "h"}} ->> 'old_attribute_id' = a.id
        AND ({{meta "h"}} ->> 'new_attribute_id' = r.new_id
          OR (h.event = 'supersession_reverted'
            AND h.created_at >= (SELECT n.created_at FROM {{.Attributes}} n WHERE n.id = r.new_id)))))
  ORDER BY a.id
  FOR UPDATE OF a
),
upd AS (
  UPDATE {{.Attributes}} a
  SET status = 'superseded', superseded_by = p.new_id, superseded_at = now(), updated_at = now()
  FROM prior p
  WHERE a.id = p.id
  RETURNING p.ord, a.id, p.memory_id, p.content, p.new_content, p.meta, p.reason,
            p.status AS prior_status, p.superseded_by AS prior_superseded_by,
            p.superseded_at AS prior_superseded_at, p.updated_at AS prior_updated_at,
            a.superseded_at, a.updated_at
),
hist AS (
  SELECT u.*, u.meta || jsonb_build_object(
           'undo', jsonb_build_object(
             'status', u.prior_status, 'superseded_by', u.prior_superseded_by,
             'superseded_at', u.prior_superseded_at, 'updated_at', u.prior_updated_at),
           'applied', jsonb_build_object(
             'status', 'superseded', 'superseded_by', u.meta ->> 'new_attribute_id',
             'superseded_at', u.superseded_at, 'updated_at', u.updated_at)) AS full_meta
  FROM upd u
)
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id, session_id)
SELECT CAST(gen_random_uuid() AS text), coalesce(h.memory_id, h.id), 'attribute_superseded', h.content, h.new_content, :changed_by, h.reason,
       {{metaIn "h.full_meta"}}, :actor_type, :request_id, :session_id
FROM hist h
RETURNING id, {{meta ""}} ->> 'old_attribute_id'`

// proposeSQL inserts proposals, one per (old, new) pair ever: the unique
// index decides, not a prior read, so concurrent writers cannot duplicate.
// Proposals for rows no longer active are not written.
const proposeSQL = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id)
SELECT CAST(gen_random_uuid() AS text), coalesce(a.memory_id, a.id), 'supersession_proposal', a.content, r.new_content, :changed_by, r.reason,
       {{metaIn "r.meta"}}, :actor_type, :request_id
FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS r(old_id text, agent_id text, new_content text, meta jsonb, reason text)
JOIN {{.Attributes}} a ON a.id = r.old_id AND a.agent_id = r.agent_id AND a.status = 'active'
ON CONFLICT (({{meta ""}} ->> 'old_attribute_id'), ({{meta ""}} ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal' DO NOTHING
RETURNING id, {{meta ""}} ->> 'mode', {{meta ""}} ->> 'old_attribute_id', {{meta ""}} ->> 'new_attribute_id'`

// proposedSQL finds which of the given (old, new) pairs have a proposal
// already (a dry run's stand-in for proposeSQL's ON CONFLICT).
const proposedSQL = `
SELECT {{meta ""}} ->> 'old_attribute_id' AS old_id, {{meta ""}} ->> 'new_attribute_id' AS new_id
FROM {{.History}}
WHERE event = 'supersession_proposal'
  AND ({{meta ""}} ->> 'old_attribute_id', {{meta ""}} ->> 'new_attribute_id') IN (SELECT * FROM unnest($1::text[], $2::text[]))`

// vetoesSQL finds the pairs a reviewer rejected or an operator undid among
// the given old attributes, and when each undo was made: an undo vetoes the
// old attribute against every sibling recorded at or before it (Vetoes).
// The plan reads them to pick another target; the write re-checks them under
// the row lock (applySQL).
const vetoesSQL = `
SELECT {{meta ""}} ->> 'old_attribute_id' AS old_id, {{meta ""}} ->> 'new_attribute_id' AS new_id,
       CASE WHEN event = 'supersession_reverted' THEN created_at END AS undone_at
FROM {{.History}}
WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted')
  AND {{meta ""}} ->> 'old_attribute_id' = ANY($1)
  AND {{meta ""}} ->> 'agent_id' = ANY($2)`

// bareColumns is the select list of the scan (Scan): an attribute's own
// columns. It cannot fail to scan whatever a row holds: created_at comes
// only when it is a time the order can use (lib/pq refuses 'infinity'), and
// nullable columns of a foreign schema are coalesced. The bound on
// created_at is a subquery so that it is computed once per statement, not
// once per row (a tenth of reading a chunk).
const bareColumns = `a.id, coalesce(a.agent_id, '') AS agent_id, a.aspect_id, coalesce(a.kind, '') AS kind,
       a.content, CASE WHEN isfinite(a.created_at) AND a.created_at <= (SELECT now() + interval '1 day') THEN a.created_at END AS created_at,
       coalesce(a.protected, false) AS protected`

// chunkSQL reads the next :rows rows of the scan after (or, with from,
// from) the aspect :agent/:aspect (of :only, when not empty), in the order of the sibling index (agent, aspect,
// created_at, id): an index scan that reads each row once and sorts
// nothing. Aspects are named per batch (namesSQL), not per row.
const chunkSQL = `
SELECT ` + bareColumns + `
FROM {{.Attributes}} a
WHERE a.status = 'active' AND a.aspect_id IS NOT NULL AND a.kind <> 'constraint'
  AND (a.agent_id, a.aspect_id) %s (:agent, :aspect)
  AND (:only = '' OR a.agent_id = :only)
ORDER BY a.agent_id, a.aspect_id, a.created_at, a.id
LIMIT :rows`

var (
	chunkAfterSQL = fmt.Sprintf(chunkSQL, ">")
	chunkFromSQL  = fmt.Sprintf(chunkSQL, ">=")
)

// namesSQL names a batch's aspects: those of their agent only.
const namesSQL = `
SELECT k.agent_id, k.aspect_id, coalesce(asp.name, '')
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
JOIN {{.Aspects}} asp ON asp.id = k.aspect_id AND asp.agent_id = k.agent_id`

// aspectsSQL loads the active attributes of the given (agent, aspect)
// pairs, as parallel arrays, in one query. It does not sort: scanGroups
// orders each group, and at a few thousand siblings a sort here was most of
// the query's time (and of the inline hook's lag). Nor does it name the
// aspects: queryGroups names each group once (namesSQL); joining the
// aspects table for every row was two thirds of the query.
const aspectsSQL = `
SELECT ` + bareColumns + `
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
JOIN {{.Attributes}} a ON a.agent_id = k.agent_id AND a.aspect_id = k.aspect_id
WHERE a.status = 'active' AND a.kind <> 'constraint'`

// aspectSizesSQL counts what aspectsSQL would load of each given aspect,
// so that a caller can load many aspects a bounded batch at a time.
const aspectSizesSQL = `
SELECT k.agent_id, k.aspect_id, count(a.id) AS n
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
LEFT JOIN {{.Attributes}} a ON a.agent_id = k.agent_id AND a.aspect_id = k.aspect_id
  AND a.status = 'active' AND a.kind <> 'constraint'
GROUP BY k.agent_id, k.aspect_id`

// attributesSQL loads active attributes by id, as aspectsSQL loads them by
// aspect: the changed attributes of an incremental pass and the siblings
// their keys meet.
const attributesSQL = `
SELECT ` + bareColumns + `
FROM unnest($1::text[]) AS k(id)
JOIN {{.Attributes}} a ON a.id = k.id
WHERE a.status = 'active' AND a.kind <> 'constraint'`

// attributeStatements are the store's SQL, rendered for one database
// (schema.Render).
type attributeStatements struct {
	Lock, Proposed, Vetoes, Names, Aspects, AspectSizes, Attributes string
	Apply, Propose, ChunkAfter, ChunkFrom                           schema.Named
}

var attributeSQL = attributeStatements{
	Lock: lockSQL, Apply: schema.NamedSQL(applySQL), Propose: schema.NamedSQL(proposeSQL), Proposed: proposedSQL, Vetoes: vetoesSQL,
	ChunkAfter: schema.NamedSQL(chunkAfterSQL), ChunkFrom: schema.NamedSQL(chunkFromSQL), Names: namesSQL, Aspects: aspectsSQL,
	AspectSizes: aspectSizesSQL, Attributes: attributesSQL,
}
