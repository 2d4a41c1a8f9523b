package supersession

import (
	"fmt"
	"strings"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// The statements of the stores real stacks keep their facts in (SPEC §14),
// behind the attribute store's questions: Honcho's documents and mem0's
// collection read as attributes. A scope plays the aspect's part, with the
// change trigger's two keys (schema/stores.go): agent_id is its owner and
// aspect_id the scope as a JSON array, so that the change feed, the key
// digests and the cursor of a pass mean the same on every store. A scope
// has no name. Every row is a plain attribute (there are no constraints);
// protection is the daemon's mark in a Honcho document's internal
// metadata (a mem0 memory has no place for it).
//
// What the write keeps: the history row of a retirement carries, besides
// the attribute store's undo snapshot, the row as it was (undo.row), which
// is what undo re-inserts when the row is gone (Honcho's reconciler
// hard-deletes a soft-deleted document minutes later; mem0's retirement is
// the delete). Honcho's snapshot leaves the embedding out (undo re-inserts
// the document with none, pending, and Honcho embeds it again, and adds the
// document's own document_sources rows, which go with it); mem0's keeps
// the vector as its text, which both pgvector and real[] read back exactly.

// honchoColumns are a document as an attribute (bareColumns).
const honchoColumns = `d.id, d.workspace_name AS agent_id, CAST(jsonb_build_array(d.observer, d.observed) AS text) AS aspect_id,
       'attribute' AS kind, d.content,
       CASE WHEN isfinite(d.created_at) AND d.created_at <= (SELECT now() + interval '1 day') THEN d.created_at END AS created_at,
       coalesce(d.internal_metadata -> 'protected' = 'true', false) AS protected`

// honchoLive: a document takes part while Honcho reads it (not soft
// deleted) and its level is one of maintenance.supersession.honchoLevels.
const honchoLive = `d.deleted_at IS NULL AND d.level = ANY(%s)`

// honchoChunkSQL is chunkSQL on documents, in the order of the live-scope
// index: the cursor's aspect is the scope's JSON array, read back apart.
const honchoChunkSQL = `
SELECT ` + honchoColumns + `
FROM {{.Documents}} d
WHERE ` + honchoLive + `
  AND (d.workspace_name, d.observer, d.observed) %s
      (:agent, coalesce(CAST(nullif(:aspect, '') AS jsonb) ->> 0, ''), coalesce(CAST(nullif(:aspect, '') AS jsonb) ->> 1, ''))
  AND (:only = '' OR d.workspace_name = :only)
ORDER BY d.workspace_name, d.observer, d.observed, d.created_at, d.id
LIMIT :rows`

// honchoScopeJoin joins the (owner, scope) pairs k to their documents.
const honchoScopeJoin = `{{.Documents}} d ON d.workspace_name = k.agent_id
  AND d.observer = CAST(k.aspect_id AS jsonb) ->> 0 AND d.observed = CAST(k.aspect_id AS jsonb) ->> 1`

var honchoAspectsSQL = `
SELECT ` + honchoColumns + `
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
JOIN ` + honchoScopeJoin + `
WHERE ` + fmt.Sprintf(honchoLive, "$3")

var honchoSizesSQL = `
SELECT k.agent_id, k.aspect_id, count(d.id) AS n
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
LEFT JOIN ` + honchoScopeJoin + ` AND ` + fmt.Sprintf(honchoLive, "$3") + `
GROUP BY k.agent_id, k.aspect_id`

var honchoAttributesSQL = `
SELECT ` + honchoColumns + `
FROM unnest($1::text[]) AS k(id)
JOIN {{.Documents}} d ON d.id = k.id
WHERE ` + fmt.Sprintf(honchoLive, "$2")

const honchoLockSQL = `
SELECT id FROM {{.Documents}} WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// storeReq is the batch of applySQL's requests, for every store (the
// attributes' applySQL and the stores').
const storeReq = `
WITH req AS (
  SELECT * FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS r(
    ord int, old_id text, new_id text, agent_id text, old_content text, new_content text,
    meta jsonb, reason text, force_chain boolean, any_aspect boolean, respect_vetoes boolean)
)`

// storeVetoed is applySQL's veto check, new_created the new row's time.
const storeVetoed = `NOT (r.respect_vetoes AND EXISTS (
      SELECT 1 FROM {{.History}} h
      WHERE h.event IN ('supersession_proposal_rejected', 'supersession_reverted')
        AND {{meta "h"}} ->> 'old_attribute_id' = r.old_id
        AND ({{meta "h"}} ->> 'new_attribute_id' = r.new_id
          OR (h.event = 'supersession_reverted' AND h.created_at >= %s))))`

// storeHistory inserts the retirement's history rows from hist (ord, id,
// content, new_content, meta, reason, snapshot, at).
const storeHistory = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id, session_id)
SELECT CAST(gen_random_uuid() AS text), h.id, 'attribute_superseded', h.content, h.new_content, :changed_by, h.reason,
       {{metaIn "h.full_meta"}}, :actor_type, :request_id, :session_id
FROM (
  SELECT u.*, u.meta || jsonb_build_object(
           'undo', jsonb_build_object('status', 'active', 'superseded_by', NULL, 'superseded_at', NULL,
             'updated_at', u.prior_updated_at, 'row', u.snapshot),
           'applied', jsonb_build_object('status', '%s', 'superseded_by', u.meta ->> 'new_attribute_id',
             'superseded_at', u.at, 'updated_at', u.at)) AS full_meta
  FROM upd u) h
RETURNING id, {{meta ""}} ->> 'old_attribute_id'`

// honchoApplySQL retires documents Honcho's way: the soft delete its reads
// already skip, the replacement's id in internal_metadata (and in
// superseded_by where PR #457's column exists).
var honchoApplySQL = storeReq + `,
prior AS (
  SELECT r.ord, d.id, d.content, d.created_at AS prior_updated_at, r.new_id, r.new_content, r.meta, r.reason,
         to_jsonb(d) - 'embedding'
         {{- if .HasSources}} || jsonb_build_object('supersessiond_sources', (
           SELECT coalesce(jsonb_agg(to_jsonb(s)), CAST('[]' AS jsonb)) FROM {{.Sources}} s WHERE s.derived_id = d.id)){{end}} AS snapshot
  FROM req r
  JOIN {{.Documents}} d ON d.id = r.old_id AND d.workspace_name = r.agent_id
  WHERE (d.deleted_at IS NULL OR (r.force_chain AND d.internal_metadata ->> 'superseded_by' IS DISTINCT FROM r.new_id
         AND d.internal_metadata -> 'superseded_by' IS NOT NULL))
    AND NOT coalesce(d.internal_metadata -> 'protected' = 'true', false)
    AND d.content = r.old_content
    AND EXISTS (
      SELECT 1 FROM {{.Documents}} n
      WHERE n.id = r.new_id AND n.workspace_name = r.agent_id AND n.deleted_at IS NULL
        AND (r.any_aspect OR (n.observer = d.observer AND n.observed = d.observed)) AND n.content = r.new_content AND n.id <> d.id)
    AND ` + fmt.Sprintf(storeVetoed, `(SELECT n.created_at FROM {{.Documents}} n WHERE n.id = r.new_id)`) + `
  ORDER BY d.id
  FOR UPDATE OF d
),
upd AS (
  UPDATE {{.Documents}} d
  SET deleted_at = now(),
      internal_metadata = coalesce(d.internal_metadata, CAST('{}' AS jsonb)) || jsonb_build_object('superseded_by', p.new_id)
      {{- if .SupersededBy}}, superseded_by = p.new_id{{end}}
  FROM prior p
  WHERE d.id = p.id
  RETURNING p.ord, d.id, p.content, p.new_content, p.meta, p.reason, p.snapshot, p.prior_updated_at, d.deleted_at AS at
)` + fmt.Sprintf(storeHistory, "superseded")

// honchoProposeSQL is proposeSQL on documents.
const honchoProposeSQL = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id)
SELECT CAST(gen_random_uuid() AS text), d.id, 'supersession_proposal', d.content, r.new_content, :changed_by, r.reason,
       {{metaIn "r.meta"}}, :actor_type, :request_id
FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS r(old_id text, agent_id text, new_content text, meta jsonb, reason text)
JOIN {{.Documents}} d ON d.id = r.old_id AND d.workspace_name = r.agent_id AND d.deleted_at IS NULL
ON CONFLICT (({{meta ""}} ->> 'old_attribute_id'), ({{meta ""}} ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal' DO NOTHING
RETURNING id, {{meta ""}} ->> 'mode', {{meta ""}} ->> 'old_attribute_id', {{meta ""}} ->> 'new_attribute_id'`

// mem0's scope, as the change trigger writes it: the owner, and the three
// ids as a JSON array. Rows are ordered, and joined, by the three ids with
// an empty string for an id not set (the supersessiond_mem0_scope index): mem0 never
// writes an empty one.
const (
	mem0Owner = `coalesce(m.payload ->> 'user_id', m.payload ->> 'agent_id', m.payload ->> 'run_id', '')`
	mem0Scope = `CAST(jsonb_build_array(m.payload ->> 'user_id', m.payload ->> 'agent_id', m.payload ->> 'run_id') AS text)`
	mem0Keys  = `(coalesce(m.payload ->> 'user_id', ''), coalesce(m.payload ->> 'agent_id', ''), coalesce(m.payload ->> 'run_id', ''))`
)

// mem0Columns are a memory as an attribute (bareColumns), its created_at
// the payload's text: a time mem0 wrote is parsed where a row that lacks
// one can be skipped with its reason (Attribute.BadTime), not fail the
// statement. A memory is never protected: the mark would have to go into
// mem0's payload, which mem0 hands back to its callers.
const mem0Columns = `CAST(m.id AS text) AS id, ` + mem0Owner + ` AS agent_id, ` + mem0Scope + ` AS aspect_id,
       'attribute' AS kind, m.payload ->> 'data' AS content, m.payload ->> 'created_at' AS created_at,
       false AS protected`

// mem0ScopeOf is the three ids of a scope's JSON array (expr), empty when unset.
func mem0ScopeOf(expr string) string {
	var parts []string
	for i := range 3 {
		parts = append(parts, fmt.Sprintf("coalesce(CAST(nullif(%s, '') AS jsonb) ->> %d, '')", expr, i))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

var mem0ChunkSQL = `
SELECT ` + mem0Columns + `
FROM {{.Mem0}} m
WHERE ` + mem0Keys + ` %s ` + mem0ScopeOf(":aspect") + `
  AND (:only = '' OR ` + mem0Owner + ` = :only)
ORDER BY ` + mem0Keys[1:len(mem0Keys)-1] + `, m.id
LIMIT :rows`

var mem0ScopeJoin = `{{.Mem0}} m ON ` + mem0Keys + ` = ` + mem0ScopeOf("k.aspect_id")

var mem0AspectsSQL = `
SELECT ` + mem0Columns + `
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
JOIN ` + mem0ScopeJoin

var mem0SizesSQL = `
SELECT k.agent_id, k.aspect_id, count(m.id) AS n
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
LEFT JOIN ` + mem0ScopeJoin + `
GROUP BY k.agent_id, k.aspect_id`

const mem0AttributesSQL = `
SELECT ` + mem0Columns + `
FROM {{.Mem0}} m WHERE m.id = ANY(CAST($1 AS uuid[]))`

const mem0LockSQL = `
SELECT id FROM {{.Mem0}} WHERE id = ANY(CAST($1 AS uuid[])) ORDER BY id FOR UPDATE`

// mem0ApplySQL retires memories mem0's way, by deleting them; the history
// row keeps the whole row (id, payload, the vector as text) for undo.
var mem0ApplySQL = storeReq + `,
prior AS (
  SELECT r.ord, m.id, m.payload ->> 'data' AS content, r.new_id, r.new_content, r.meta, r.reason,
         m.payload ->> 'updated_at' AS prior_updated_at,
         jsonb_build_object('id', m.id, 'payload', m.payload, 'vector', CAST(m.vector AS text)) AS snapshot
  FROM req r
  JOIN {{.Mem0}} m ON m.id = CAST(r.old_id AS uuid)
  JOIN {{.Mem0}} n ON n.id = CAST(r.new_id AS uuid) AND n.id <> m.id AND n.payload ->> 'data' = r.new_content
  WHERE ` + mem0Owner + ` = r.agent_id
    AND m.payload ->> 'data' = r.old_content
    AND (r.any_aspect OR ` + mem0Keys + ` = ` + strings.ReplaceAll(mem0Keys, "m.", "n.") + `)
    AND ` + fmt.Sprintf(storeVetoed, `CASE WHEN r.respect_vetoes THEN CAST(n.payload ->> 'created_at' AS timestamptz) END`) + `
  ORDER BY m.id
  FOR UPDATE OF m
),
upd AS (
  DELETE FROM {{.Mem0}} m
  USING prior p
  WHERE m.id = p.id
  RETURNING p.ord, CAST(p.id AS text) AS id, p.content, p.new_content, p.meta, p.reason, p.snapshot, p.prior_updated_at, now() AS at
)` + fmt.Sprintf(storeHistory, "deleted")

var mem0ProposeSQL = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id)
SELECT CAST(gen_random_uuid() AS text), CAST(m.id AS text), 'supersession_proposal', m.payload ->> 'data', r.new_content, :changed_by, r.reason,
       {{metaIn "r.meta"}}, :actor_type, :request_id
FROM jsonb_to_recordset(CAST(:batch AS jsonb)) AS r(old_id text, agent_id text, new_content text, meta jsonb, reason text)
JOIN {{.Mem0}} m ON m.id = CAST(r.old_id AS uuid) AND ` + mem0Owner + ` = r.agent_id
ON CONFLICT (({{meta ""}} ->> 'old_attribute_id'), ({{meta ""}} ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal' DO NOTHING
RETURNING id, {{meta ""}} ->> 'mode', {{meta ""}} ->> 'old_attribute_id', {{meta ""}} ->> 'new_attribute_id'`

// storeStatements are the attribute store's statements for a store.
func storeStatements(s schema.Store) attributeStatements {
	switch s {
	case schema.StoreHoncho:
		return attributeStatements{
			Lock: honchoLockSQL, Apply: schema.NamedSQL(honchoApplySQL), Propose: schema.NamedSQL(honchoProposeSQL),
			Proposed: proposedSQL, Vetoes: vetoesSQL,
			ChunkAfter: schema.NamedSQL(fmt.Sprintf(honchoChunkSQL, ":levels", ">")),
			ChunkFrom:  schema.NamedSQL(fmt.Sprintf(honchoChunkSQL, ":levels", ">=")),
			Aspects:    honchoAspectsSQL, AspectSizes: honchoSizesSQL, Attributes: honchoAttributesSQL,
		}
	case schema.StoreMem0:
		return attributeStatements{
			Lock: mem0LockSQL, Apply: schema.NamedSQL(mem0ApplySQL), Propose: schema.NamedSQL(mem0ProposeSQL),
			Proposed: proposedSQL, Vetoes: vetoesSQL,
			ChunkAfter: schema.NamedSQL(fmt.Sprintf(mem0ChunkSQL, ">")), ChunkFrom: schema.NamedSQL(fmt.Sprintf(mem0ChunkSQL, ">=")),
			Aspects: mem0AspectsSQL, AspectSizes: mem0SizesSQL, Attributes: mem0AttributesSQL,
		}
	}
	return attributeSQL
}

// The operator's commands read a store's rows as attributes (AttributeView):
// a document or a memory with the columns of entity_attributes that they
// read, its status derived (Honcho: live, or retired with or without a
// replacement; mem0: a row is live while it exists). A view in the query,
// not in the database: the daemon adds nothing to a stack's schema for it.
const honchoViewSQL = `
SELECT d.id, d.workspace_name AS agent_id, CAST(jsonb_build_array(d.observer, d.observed) AS text) AS aspect_id,
       d.id AS memory_id, CAST('attribute' AS text) AS kind, d.content,
       CAST(CASE WHEN d.deleted_at IS NULL THEN 'active'
                 WHEN d.internal_metadata -> 'superseded_by' IS NOT NULL THEN 'superseded' ELSE 'deleted' END AS text) AS status,
       d.internal_metadata ->> 'superseded_by' AS superseded_by, d.deleted_at AS superseded_at,
       coalesce(d.deleted_at, d.created_at) AS updated_at, d.created_at,
       coalesce(d.internal_metadata -> 'protected' = 'true', false) AS protected
FROM {{.Documents}} d`

// isoTime is a payload's ISO 8601 time (key) as a timestamp, NULL when it
// is not one: a bad value must not fail an operator's listing. (No
// question mark and no colon, \x3a instead: the view goes into named
// statements, which would read them as parameters.)
func isoTime(key string) string {
	v := "m.payload ->> '" + key + "'"
	return `CASE WHEN ` + v + ` ~ '^\d{4}-[01]\d-[0-3]\dT[0-2]\d\x3a[0-5]\d\x3a[0-5]\d(\.\d+){0,1}(Z|[+-][0-2]\d\x3a{0,1}[0-5]\d)$'
            THEN CAST(` + v + ` AS timestamptz) END`
}

var mem0ViewSQL = `
SELECT CAST(m.id AS text) AS id, ` + mem0Owner + ` AS agent_id, ` + mem0Scope + ` AS aspect_id,
       CAST(m.id AS text) AS memory_id, CAST('attribute' AS text) AS kind, m.payload ->> 'data' AS content,
       CAST('active' AS text) AS status, CAST(NULL AS text) AS superseded_by, CAST(NULL AS timestamptz) AS superseded_at,
       coalesce(` + isoTime("updated_at") + `, ` + isoTime("created_at") + `, timestamptz 'epoch') AS updated_at,
       ` + isoTime("created_at") + ` AS created_at, false AS protected
FROM {{.Mem0}} m`

// AttributeView returns names for the operator's commands' reads: on a
// store other than the attribute graph, Attributes is the store's rows read
// as attributes. Their writes go through the engine (Engine.Restore,
// Engine.Protect, Engine.Apply).
func AttributeView(names *schema.Names) *schema.Names {
	view := *names
	switch names.Store {
	case schema.StoreHoncho:
		view.Attributes = "(" + names.SQL(honchoViewSQL) + ")"
	case schema.StoreMem0:
		view.Attributes = "(" + names.SQL(mem0ViewSQL) + ")"
	}
	return &view
}

// The statements that put back what a retirement took (Engine.Restore).
// Honcho: a document still there (soft-deleted) is made live again; one its
// reconciler has removed is re-inserted from the snapshot with no embedding
// and pending, so that Honcho embeds it again, with the citations it had.
// mem0: the memory is re-inserted whole, payload and vector as they were.
// A restore that finds the row back already does nothing (the caller says
// so).
const (
	honchoReviveSQL = `
UPDATE {{.Documents}} SET deleted_at = NULL, internal_metadata = internal_metadata - 'superseded_by'
  {{- if .SupersededBy}}, superseded_by = NULL{{end}}
WHERE id = :id AND deleted_at IS NOT NULL`
	honchoReinsertSQL = `
INSERT INTO {{.Documents}}
SELECT * FROM jsonb_populate_record(CAST(NULL AS {{.Documents}}), CAST(:row AS jsonb) || jsonb_build_object(
  'deleted_at', NULL, 'embedding', NULL, 'sync_state', 'pending', 'last_sync_at', NULL, 'sync_attempts', 0))
ON CONFLICT (id) DO NOTHING`
	// honchoEdgesSQL puts back a re-inserted document's own citations (its
	// document_sources rows, which went with it), those the snapshot kept.
	honchoEdgesSQL = `
INSERT INTO {{.Sources}}
SELECT * FROM jsonb_populate_recordset(CAST(NULL AS {{.Sources}}), CAST(:row AS jsonb) -> 'supersessiond_sources')
ON CONFLICT DO NOTHING`
	mem0ReinsertSQL = `
INSERT INTO {{.Mem0}}
SELECT * FROM jsonb_populate_record(CAST(NULL AS {{.Mem0}}), CAST(:row AS jsonb))
ON CONFLICT (id) DO NOTHING`
	honchoProtectSQL = `
UPDATE {{.Documents}} SET internal_metadata = coalesce(internal_metadata, CAST('{}' AS jsonb)) || jsonb_build_object('protected', CAST(:on AS boolean))
WHERE id = :id`
)

// Dependents (Honcho): a live document that cites a retired one, through
// source_ids (jsonb or an array) or document_sources, whichever the release
// has, is flagged: internal_metadata.stale_basis lists the retired ids it
// cites. Undo takes the restored id out of every list (and the list out
// when it is empty). The citations are found from the retired ids through
// the indexes the tombstone job shares (Honcho's GIN on source_ids, its
// index on document_sources.source_id), all the ids in one index scan (one
// probe per id cost a millisecond or more each on a GIN index whose pending
// list was not yet merged); a document citing itself does not count.
const honchoCitations = `
ret AS (SELECT d.id, d.workspace_name FROM {{.Documents}} d WHERE d.id = ANY($1::text[])),
{{- if eq .SourceIDs "jsonb"}}
by_json AS MATERIALIZED (
  SELECT d.id, d.workspace_name, d.source_ids FROM {{.Documents}} d
  WHERE d.source_ids ?| (SELECT $1::text[]) AND d.deleted_at IS NULL),
{{- end}}
{{- if eq .SourceIDs "array"}}
by_array AS MATERIALIZED (
  SELECT d.id, d.workspace_name, d.source_ids FROM {{.Documents}} d
  WHERE d.source_ids && (SELECT $1::text[])::{{.SourceArray}} AND d.deleted_at IS NULL),
{{- end}}
cit AS (
  SELECT NULL::text AS derived_id, NULL::text AS source_id WHERE false
{{- if eq .SourceIDs "jsonb"}}
  UNION SELECT j.id, r.id FROM ret r JOIN by_json j ON j.workspace_name = r.workspace_name AND j.source_ids ? r.id
{{- end}}
{{- if eq .SourceIDs "array"}}
  UNION SELECT j.id, r.id FROM ret r JOIN by_array j ON j.workspace_name = r.workspace_name AND r.id = ANY(j.source_ids)
{{- end}}
{{- if .HasSources}}
  UNION SELECT s.derived_id, s.source_id FROM ret r JOIN {{.Sources}} s ON s.source_id = r.id AND s.workspace_name = r.workspace_name
{{- end}}
)`

const honchoFlagSQL = `
WITH ` + honchoCitations + `,
per AS (SELECT derived_id, jsonb_agg(DISTINCT source_id) AS ids FROM cit WHERE derived_id <> source_id GROUP BY derived_id)
UPDATE {{.Documents}} x
SET internal_metadata = jsonb_set(coalesce(x.internal_metadata, '{}'), '{stale_basis}', (
  SELECT jsonb_agg(DISTINCT v) FROM jsonb_array_elements(
    CASE WHEN jsonb_typeof(x.internal_metadata -> 'stale_basis') = 'array' THEN x.internal_metadata -> 'stale_basis' ELSE '[]' END || p.ids) v))
FROM per p
WHERE x.id = p.derived_id AND x.deleted_at IS NULL`

const honchoUnflagSQL = `
WITH ` + honchoCitations + `
UPDATE {{.Documents}} x
SET internal_metadata = CASE
  WHEN (x.internal_metadata -> 'stale_basis') - $2::text = '[]'::jsonb THEN x.internal_metadata - 'stale_basis'
  ELSE jsonb_set(x.internal_metadata, '{stale_basis}', (x.internal_metadata -> 'stale_basis') - $2::text) END
WHERE x.id IN (SELECT derived_id FROM cit)
  AND jsonb_typeof(x.internal_metadata -> 'stale_basis') = 'array'
  AND x.internal_metadata -> 'stale_basis' @> jsonb_build_array($2::text)`
