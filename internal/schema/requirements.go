package schema

import "slices"

// What each job's statements rely on, as data: the columns they read and
// write (with the types they work with), the columns migrate adds, the
// indexes they are planned around, and the privileges the connecting role
// needs. Inspect checks a database against these; Migrate and Grant act on
// them. A statement that relies on something not listed here is a bug.

var (
	textTypes = []string{"text", "varchar"}
	timeTypes = []string{"timestamptz", "timestamp"}
	intTypes  = []string{"int2", "int4", "int8"}
	boolTypes = []string{"bool"}
)

// colReq is one column a job relies on.
type colReq struct {
	table, name string
	types       []string // acceptable type names (typname); nil: any
	added       string   // migrate adds it with this column definition
	nullWritten bool     // the daemon sets it NULL: it must be nullable
	optional    bool     // its absence selects another shape, not a failure
}

var columnsOf = map[Job][]colReq{
	Supersession: {
		{table: Attributes, name: "id", types: textTypes},
		{table: Attributes, name: "agent_id", types: textTypes},
		{table: Attributes, name: "aspect_id", types: textTypes},
		{table: Attributes, name: "memory_id", types: textTypes},
		{table: Attributes, name: "kind", types: textTypes},
		{table: Attributes, name: "content", types: textTypes},
		{table: Attributes, name: "status", types: textTypes},
		{table: Attributes, name: "superseded_by", types: textTypes, nullWritten: true},
		{table: Attributes, name: "created_at", types: timeTypes},
		{table: Attributes, name: "updated_at", types: timeTypes},
		{table: Attributes, name: "superseded_at", types: timeTypes, added: "timestamptz", nullWritten: true},
		{table: Attributes, name: "protected", types: boolTypes, added: "boolean NOT NULL DEFAULT false"},
		{table: Aspects, name: "id", types: textTypes, optional: true},
		{table: Aspects, name: "agent_id", types: textTypes, optional: true},
		{table: Aspects, name: "name", types: textTypes, optional: true},
		// The operator's rows (review, apply, undo) record the console
		// session they were decided in; the audit trail reads it.
		{table: History, name: "session_id", types: textTypes},
	},
	Compaction: {
		{table: CompactionEvents, name: "id", types: intTypes},
		{table: CompactionEvents, name: "agent_id", types: textTypes},
		{table: CompactionEvents, name: "triggered_at", types: timeTypes},
		{table: CompactionEvents, name: "min_message_seq", types: intTypes},
		{table: CompactionEvents, name: "max_message_seq", types: intTypes},
		{table: CompactionEvents, name: "status", types: textTypes},
		{table: CompactionEvents, name: "retry_count", types: intTypes},
		{table: CompactionEvents, name: "memory_updated", types: boolTypes},
		{table: CompactionEvents, name: "summary_len", types: intTypes},
		{table: CompactionEvents, name: "last_error", types: textTypes, added: "text", nullWritten: true},
		{table: CompactionEvents, name: "next_attempt_at", types: timeTypes, added: "timestamptz", nullWritten: true},
		{table: CompactionEvents, name: "completed_at", types: timeTypes, added: "timestamptz"},
		{table: Messages, name: "agent_id", types: textTypes},
		{table: Messages, name: "seq", types: intTypes},
		{table: Messages, name: "direction", types: textTypes},
		{table: Messages, name: "body", types: textTypes},
		{table: Messages, name: "tool_calls", optional: true},
		{table: Memories, name: "id", types: textTypes},
		{table: Memories, name: "agent_id", types: textTypes},
		{table: Memories, name: "type", types: textTypes},
		{table: Memories, name: "content", types: textTypes},
		{table: Memories, name: "normalized_content", types: textTypes},
		{table: Memories, name: "source_type", types: textTypes},
		{table: Memories, name: "source_id", types: textTypes},
		{table: Memories, name: "idempotency_key", types: textTypes},
	},
	Tombstones: {
		{table: Documents, name: "id", types: textTypes},
		{table: Documents, name: "workspace_name", types: textTypes},
		{table: Documents, name: "deleted_at", types: timeTypes},
		{table: Documents, name: "superseded_by", types: textTypes, optional: true},
		{table: Documents, name: "source_ids", optional: true},
		{table: Documents, name: "embedding", optional: true, nullWritten: true},
		{table: Documents, name: "tombstone_preserved_at", types: timeTypes, added: "timestamptz"},
		{table: DocumentSources, name: "derived_id", types: textTypes, optional: true},
		{table: DocumentSources, name: "source_id", types: textTypes, optional: true},
		{table: DocumentSources, name: "workspace_name", types: textTypes, optional: true},
	},
}

// historyColumns are memory_history's columns, written by the supersession
// and compaction jobs: any other NOT NULL column without a default would
// refuse every row they write.
var historyColumns = []colReq{
	{table: History, name: "id", types: textTypes},
	{table: History, name: "memory_id", types: textTypes},
	{table: History, name: "event", types: textTypes},
	{table: History, name: "old_content", types: textTypes},
	{table: History, name: "new_content", types: textTypes},
	{table: History, name: "changed_by", types: textTypes},
	{table: History, name: "reason", types: textTypes},
	{table: History, name: "metadata", types: []string{"jsonb", "json", "text"}},
	{table: History, name: "created_at", types: timeTypes},
	{table: History, name: "actor_type", types: textTypes},
	{table: History, name: "request_id", types: textTypes},
}

// requiredColumns are the columns a job relies on under the plan's store,
// history's included (the daemon's own history has them all: it made it).
func (p Plan) requiredColumns(job Job) []colReq {
	if p.watching(job) {
		return watchColumns
	}
	cols := slices.Clone(columnsOf[job])
	if job == Supersession && p.storeOf() != StoreAttributes {
		cols = append(slices.Clone(storeColumns[p.storeOf()]), colReq{table: History, name: "session_id", types: textTypes})
	}
	if job == Supersession || job == Compaction {
		cols = append(cols, historyColumns...)
	}
	return cols
}

// written lists, per table the daemon inserts into, the columns its inserts
// fill.
var written = map[string][]string{
	History:  {"id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason", "metadata", "actor_type", "request_id", "session_id"},
	Memories: {"id", "agent_id", "type", "content", "normalized_content", "source_type", "source_id", "idempotency_key"},
}

// privilege is a privilege a job needs on a table: SELECT, INSERT, DELETE,
// or UPDATE of the listed columns.
type privilege struct {
	table   string
	kind    string
	columns []string
}

// privilegesOf are the privileges a job needs under the plan's store.
func (p Plan) privilegesOf(job Job) []privilege {
	if p.watching(job) {
		return watchPrivileges
	}
	if job == Supersession && p.storeOf() != StoreAttributes {
		return storePrivileges[p.storeOf()]
	}
	return jobPrivileges[job]
}

// jobPrivileges are each job's privileges, the supersession job's for the
// attribute store.
var jobPrivileges = map[Job][]privilege{
	Supersession: {
		{table: Attributes, kind: "SELECT"},
		{table: Attributes, kind: "UPDATE", columns: []string{"status", "superseded_by", "superseded_at", "updated_at", "protected"}},
		{table: History, kind: "SELECT"},
		{table: History, kind: "INSERT"},
		{table: Aspects, kind: "SELECT"},
	},
	Compaction: {
		{table: CompactionEvents, kind: "SELECT"},
		{table: CompactionEvents, kind: "UPDATE", columns: []string{"status", "retry_count", "memory_updated", "summary_len", "last_error", "next_attempt_at", "completed_at"}},
		{table: Messages, kind: "SELECT"},
		{table: Memories, kind: "SELECT"},
		{table: Memories, kind: "INSERT"},
		{table: History, kind: "SELECT"},
		{table: History, kind: "INSERT"},
	},
	Tombstones: {
		{table: Documents, kind: "SELECT"},
		{table: Documents, kind: "UPDATE", columns: []string{"embedding", "tombstone_preserved_at"}},
		{table: Documents, kind: "DELETE"},
		{table: DocumentSources, kind: "SELECT"},
	},
}

// IndexSpec is an index a job's statements are planned around.
type IndexSpec struct {
	Name      string // the daemon's name for it
	Table     string // logical table
	Unique    bool
	Method    string
	Keys      []string // as pg_get_indexdef prints them, for comparison
	OpClasses []string // "" = the default for the key
	Predicate string
	// DDL creates it (a template over Names, with {{.Table}} the table).
	DDL string
	// ByName: only this very index will do (an ON CONFLICT target, an
	// expression index); otherwise an equivalent the stack has is used.
	ByName bool
	// When, if set, says whether the spec applies to a database's shape.
	When func(n *Names) bool
}

// jobIndexes are each job's indexes, the supersession job's for the
// attribute store (Plan.indexesOf has the others').
func jobIndexes(job Job) []IndexSpec {
	switch job {
	case Supersession:
		return supersessionIndexes
	case Compaction:
		return compactionIndexes
	case Tombstones:
		return tombstoneIndexes
	}
	return nil
}

// The supersession job's indexes. The sibling index serves the sweep's
// keyset scan over aspects (an index-only scan: kind is included so that
// constraints are left out without visiting the heap) and the inline hook's
// sibling lookup. The history indexes serve the audit trail (newest first,
// by event, by agent), the vetoes the plan and the write look up, and the
// unique indexes that make "once" a database fact: one proposal per (old,
// new) pair ever, one review and one application per proposal, one revert per
// supersession.
var supersessionIndexes = []IndexSpec{
	{Name: "supersessiond_attr_active_siblings", Table: Attributes, Method: "btree",
		Keys: []string{"agent_id", "aspect_id", "created_at", "id"}, Predicate: "status = 'active' AND aspect_id IS NOT NULL",
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_attr_active_siblings ON {{.Attributes}} (agent_id, aspect_id, created_at, id) INCLUDE (kind)
  WHERE status = 'active' AND aspect_id IS NOT NULL`, ByName: true},
	{Name: "supersessiond_history_created", Table: History, Method: "btree", Keys: []string{"created_at DESC", "id DESC"},
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_created ON {{.History}} (created_at DESC, id DESC)`},
	{Name: "supersessiond_history_event_created", Table: History, Method: "btree", Keys: []string{"event", "created_at DESC", "id DESC"},
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_event_created ON {{.History}} (event, created_at DESC, id DESC)`},
	{Name: "supersessiond_history_agent_created", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_agent_created ON {{.History}} (({{meta ""}} ->> 'agent_id'), created_at DESC, id DESC)`},
	{Name: "supersessiond_history_one_proposal", Table: History, Unique: true, ByName: true,
		DDL: `CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_proposal
  ON {{.History}} (({{meta ""}} ->> 'old_attribute_id'), ({{meta ""}} ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal'`},
	{Name: "supersessiond_history_one_review", Table: History, Unique: true, ByName: true,
		DDL: `CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_review
  ON {{.History}} (({{meta ""}} ->> 'proposal_id'))
  WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')`},
	{Name: "supersessiond_history_one_apply", Table: History, Unique: true, ByName: true,
		DDL: `CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_apply
  ON {{.History}} (({{meta ""}} ->> 'proposal_id'))
  WHERE event = 'attribute_superseded' AND {{meta ""}} ? 'proposal_id'`},
	{Name: "supersessiond_history_one_revert", Table: History, Unique: true, ByName: true,
		DDL: `CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_revert
  ON {{.History}} (({{meta ""}} ->> 'reverted_history_id'))
  WHERE event = 'supersession_reverted'`},
	{Name: "supersessiond_history_vetoes", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_vetoes
  ON {{.History}} (({{meta ""}} ->> 'old_attribute_id'), ({{meta ""}} ->> 'new_attribute_id'))
  WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted')`},
	{Name: "supersessiond_history_vetoes_new", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_vetoes_new
  ON {{.History}} (({{meta ""}} ->> 'new_attribute_id'))
  WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted')`},
	// The review queue (SPEC §10): one agent's proposals newest first, and
	// an attribute's supersession story (proposals, reviews, supersessions,
	// reverts, on either side) for the console's proposal page.
	{Name: "supersessiond_history_proposals", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_proposals
  ON {{.History}} (({{meta ""}} ->> 'agent_id'), created_at DESC, id DESC)
  WHERE event = 'supersession_proposal'`},
	{Name: "supersessiond_history_old_attribute", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_old_attribute
  ON {{.History}} (({{meta ""}} ->> 'old_attribute_id'))
  WHERE event IN ('supersession_proposal', 'supersession_proposal_accepted', 'supersession_proposal_rejected',
                  'attribute_superseded', 'supersession_reverted')`},
	{Name: "supersessiond_history_new_attribute", Table: History, ByName: true,
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_history_new_attribute
  ON {{.History}} (({{meta ""}} ->> 'new_attribute_id'))
  WHERE event IN ('supersession_proposal', 'supersession_proposal_accepted', 'supersession_proposal_rejected',
                  'attribute_superseded', 'supersession_reverted')`},
}

// The compaction job's indexes: the stale pending events, and the facts'
// idempotency keys (a stack's own unique index on it will do).
var compactionIndexes = []IndexSpec{
	{Name: "supersessiond_compaction_pending", Table: CompactionEvents, Method: "btree", Keys: []string{"triggered_at"},
		Predicate: "status = 'pending'",
		DDL:       `CREATE INDEX IF NOT EXISTS supersessiond_compaction_pending ON {{.Events}} (triggered_at) WHERE status = 'pending'`},
	{Name: "supersessiond_memories_idempotency", Table: Memories, Method: "btree", Keys: []string{"idempotency_key"},
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_memories_idempotency ON {{.Memories}} (idempotency_key)`},
}

// The tombstone job's indexes: the dependent check is one set-based query
// per batch over an index of citations (GIN on source_ids, or the edge
// table's source index), and triage and re-check walk partial indexes of
// the tombstones awaiting them.
var tombstoneIndexes = []IndexSpec{
	{Name: "supersessiond_documents_source_ids", Table: Documents, Method: "gin", Keys: []string{"source_ids"},
		OpClasses: []string{"jsonb_ops"},
		DDL:       `CREATE INDEX IF NOT EXISTS supersessiond_documents_source_ids ON {{.Documents}} USING gin (source_ids) WITH (fastupdate = off)`,
		When:      func(n *Names) bool { return n.SourceIDs == "jsonb" }},
	{Name: "supersessiond_documents_source_ids", Table: Documents, Method: "gin", Keys: []string{"source_ids"},
		OpClasses: []string{"array_ops"},
		DDL:       `CREATE INDEX IF NOT EXISTS supersessiond_documents_source_ids ON {{.Documents}} USING gin (source_ids) WITH (fastupdate = off)`,
		When:      func(n *Names) bool { return n.SourceIDs == "array" }},
	{Name: "supersessiond_documents_tombstones", Table: Documents, Method: "btree", Keys: []string{"deleted_at", "id"},
		Predicate: "deleted_at IS NOT NULL AND tombstone_preserved_at IS NULL",
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_documents_tombstones ON {{.Documents}} (deleted_at, id)
  WHERE deleted_at IS NOT NULL AND tombstone_preserved_at IS NULL`},
	{Name: "supersessiond_documents_preserved", Table: Documents, Method: "btree", Keys: []string{"tombstone_preserved_at", "id"},
		Predicate: "tombstone_preserved_at IS NOT NULL",
		DDL: `CREATE INDEX IF NOT EXISTS supersessiond_documents_preserved ON {{.Documents}} (tombstone_preserved_at, id)
  WHERE tombstone_preserved_at IS NOT NULL`},
	{Name: "supersessiond_document_sources_source", Table: DocumentSources, Method: "btree", Keys: []string{"source_id", "workspace_name"},
		DDL:  `CREATE INDEX IF NOT EXISTS supersessiond_document_sources_source ON {{.Sources}} (source_id, workspace_name)`,
		When: func(n *Names) bool { return n.HasSources }},
}
