package audit

import (
	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// Ops are the operator's commands on one database: its connection, its
// statements (templates over the stack's names, rendered once) and the
// supersession engine whose guarded write every change goes through.
type Ops struct {
	db     *sqlx.DB
	sql    statements
	engine *supersession.Engine
	actor  supersession.Actor // who the rows written say decided (As)
}

// New returns the operator's commands for the database names describes
// (nil: the reference schema).
func New(db *sqlx.DB, names *schema.Names, engine *supersession.Engine) *Ops {
	if names != nil && names.Store != schema.StoreAttributes {
		// A store's rows, read as attributes; its writes are the engine's.
		names = supersession.AttributeView(names)
	}
	return &Ops{db: db, engine: engine, actor: Operator{Channel: ChannelCLI}.actor(), sql: schema.Render(names, auditSQL)}
}

// statements are the operator's commands' SQL, rendered for one database
// (schema.Render).
type statements struct {
	Entry, ShareAttribute, PriorReview, AppliedFrom, PairState, PriorRevert,
	LockForUndo, LockForSupersede, LockForProtect, Protect, Dependents string
	History, InsertHistory, Restore schema.Named
	Queue                           queueStatements // the review queue's (proposals.go)
}

var auditSQL = statements{
	History: schema.NamedSQL(historySQL), Entry: entrySQL, InsertHistory: schema.NamedSQL(insertHistorySQL), ShareAttribute: shareAttributeSQL,
	PriorReview: priorReviewSQL, AppliedFrom: appliedFromSQL, PairState: pairStateSQL, PriorRevert: priorRevertSQL,
	LockForUndo: lockForUndoSQL, Restore: schema.NamedSQL(restoreSQL), LockForSupersede: lockForSupersedeSQL,
	LockForProtect: lockForProtectSQL, Protect: protectSQL, Dependents: dependentsSQL, Queue: queueSQL,
}

// historySQL serves every filter combination from the indexes migrate
// creates: (created_at), (event, created_at), (agent, created_at). An
// attribute_superseded row that was undone carries the id of its
// supersession_reverted row (one index probe per supersession shown).
const historySQL = `
SELECT h.id, h.memory_id, h.event, h.old_content, h.new_content, h.changed_by, h.reason, h.metadata, h.created_at,
       h.actor_type, h.session_id, h.request_id,
       CASE WHEN h.event = 'attribute_superseded' THEN (
         SELECT r.id FROM {{.History}} r
         WHERE r.event = 'supersession_reverted' AND {{meta "r"}} ->> 'reverted_history_id' = h.id LIMIT 1) END AS undone_by
FROM {{.History}} h
WHERE (:agent = '' OR {{meta "h"}} ->> 'agent_id' = :agent)
  AND (:event = '' OR h.event = :event)
  AND (CAST(:since AS timestamptz) IS NULL OR h.created_at >= :since)
ORDER BY h.created_at DESC, h.id DESC
LIMIT :limit`

const entrySQL = `
SELECT id, memory_id, event, old_content, new_content, changed_by, reason, metadata, created_at,
       actor_type, session_id, request_id
FROM {{.History}} WHERE id = $1`

// insertHistorySQL writes an operator's history row (historyRow).
const insertHistorySQL = `
INSERT INTO {{.History}} (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id, session_id)
VALUES (CAST(gen_random_uuid() AS text), :memory_id, :event, :old_content, :new_content, :changed_by, :reason,
        {{metaIn "CAST(:metadata AS jsonb)"}}, :actor_type, :request_id, :session_id)
RETURNING id`

// shareAttributeSQL takes the old attribute's lock while a review is
// recorded: a supersession being written waits, or is written first.
const shareAttributeSQL = `SELECT 1 FROM {{.Attributes}} a WHERE id = $1 AND agent_id = $2 FOR SHARE`

const priorReviewSQL = `
SELECT id, event, created_at FROM {{.History}}
WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected') AND {{meta ""}} ->> 'proposal_id' = $1`

const appliedFromSQL = `
SELECT id FROM {{.History}} WHERE event = 'attribute_superseded' AND {{meta ""}} ->> 'proposal_id' = $1`

const pairStateSQL = `
SELECT id, agent_id, status, kind, protected, content, superseded_by, aspect_id
FROM {{.Attributes}} a WHERE id = ANY($1) AND agent_id = $2`

const priorRevertSQL = `
SELECT id FROM {{.History}} WHERE event = 'supersession_reverted' AND {{meta ""}} ->> 'reverted_history_id' = $1`

const lockForUndoSQL = `
SELECT agent_id, status, superseded_by, superseded_at, updated_at
FROM {{.Attributes}} a WHERE id = $1 AND agent_id = $2 FOR UPDATE`

const restoreSQL = `
UPDATE {{.Attributes}} SET status = :status, superseded_by = :superseded_by, superseded_at = :superseded_at, updated_at = now()
WHERE id = :id`

// lockForSupersedeSQL reads and locks only the named agent's rows: an id of
// another agent is, to the command, an id that does not exist.
const lockForSupersedeSQL = `
SELECT id, agent_id, aspect_id, kind, status, protected, superseded_by, content
FROM {{.Attributes}} a WHERE id = ANY($1) AND agent_id = $2 ORDER BY id FOR UPDATE`

const lockForProtectSQL = `SELECT agent_id, memory_id, content, protected FROM {{.Attributes}} a WHERE id = $1 FOR UPDATE`

const protectSQL = `UPDATE {{.Attributes}} SET protected = $2 WHERE id = $1`
