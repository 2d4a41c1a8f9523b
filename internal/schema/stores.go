package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Stores (SPEC §14): where the supersession engine finds the facts it
// decides about. The attribute graph of section 4 is one; the stores real
// stacks keep their facts in are the others, each with its own shape of
// rows, scope and retirement. What the supersession job needs depends on
// the store; the other jobs' needs do not.
//
//   - attributes: entity_attributes and the stack's memory_history.
//   - honcho: Honcho's documents (scope: workspace, observer, observed;
//     live while deleted_at is NULL; retired by Honcho's own soft delete),
//     the document_sources edges where the release has them.
//   - mem0: mem0's pgvector collection (id uuid, vector, payload jsonb;
//     scope: the payload's user_id, agent_id and run_id; retired by
//     deleting the row, its snapshot kept in the history).
//
// Honcho and mem0 have no memory_history: the daemon keeps the same events
// in its own schema (history, the logical History table resolved there),
// so every operator command reads them where they are. On a store's table
// the daemon adds indexes and one change trigger, never a column; what it
// adds, `migrate --remove` takes away.
//
// The change trigger writes the incremental sweep's change records
// (changes) in the changing transaction, mapping the store's scope onto
// the records' two keys: agent_id is the scope's owner (Honcho's
// workspace; mem0's user, else its agent, else its run), aspect_id the
// scope itself as a JSON array (Honcho: [observer, observed]; mem0:
// [user_id, agent_id, run_id], nulls where unset), attribute_id the row.

// Store is a value of maintenance.supersession.store.
type Store string

// The stores.
const (
	StoreAttributes Store = "attributes"
	StoreHoncho     Store = "honcho"
	StoreMem0       Store = "mem0"
)

// Mem0 is the logical name of mem0's collection (maintenance.tables.mem0).
const Mem0 = "mem0"

// storeOf is a plan's store; none is the attribute graph.
func (p Plan) storeOf() Store {
	if p.Store == "" {
		return StoreAttributes
	}
	return p.Store
}

// storeTable is the store's table of rows, by its logical name.
var storeTable = map[Store]string{StoreAttributes: Attributes, StoreHoncho: Documents, StoreMem0: Mem0}

// storeSetting names a store as an operator sets it.
func storeSetting(s Store) string { return "maintenance.supersession.store: " + string(s) }

// ownSchema is the plan's own schema.
func (p Plan) ownSchema() string { return coalesce(p.Own, "supersessiond") }

// ownHistory: the store's history is the daemon's own table.
func (p Plan) ownHistory() bool { return p.storeOf() != StoreAttributes }

// tablesOf lists the tables a job reads or writes under the plan's store;
// optional ones select a shape when present and cost nothing when absent.
func (p Plan) tablesOf(job Job) []tableReq {
	if p.watching(job) {
		return []tableReq{{CompactionEvents, false}}
	}
	if job != Supersession {
		return jobTables[job]
	}
	switch p.storeOf() {
	case StoreHoncho:
		return []tableReq{{Documents, false}, {DocumentSources, true}, {History, false}}
	case StoreMem0:
		return []tableReq{{Mem0, false}, {History, false}}
	}
	return jobTables[job]
}

// The columns each store's statements rely on. Honcho's sync_state is set
// to pending on a document undo re-inserts (so Honcho embeds it again), its
// embedding left NULL there; internal_metadata takes the replacement's id
// (superseded_by) and a dependent's stale_basis.
var storeColumns = map[Store][]colReq{
	StoreHoncho: {
		{table: Documents, name: "id", types: textTypes},
		{table: Documents, name: "workspace_name", types: textTypes},
		{table: Documents, name: "observer", types: textTypes},
		{table: Documents, name: "observed", types: textTypes},
		{table: Documents, name: "content", types: textTypes},
		{table: Documents, name: "level", types: textTypes},
		{table: Documents, name: "created_at", types: timeTypes},
		{table: Documents, name: "deleted_at", types: timeTypes, nullWritten: true},
		{table: Documents, name: "internal_metadata", types: []string{"jsonb"}},
		{table: Documents, name: "superseded_by", types: textTypes, optional: true, nullWritten: true},
		{table: Documents, name: "source_ids", optional: true},
		{table: Documents, name: "embedding", optional: true, nullWritten: true},
		{table: Documents, name: "sync_state", types: textTypes, optional: true},
		{table: DocumentSources, name: "derived_id", types: textTypes, optional: true},
		{table: DocumentSources, name: "source_id", types: textTypes, optional: true},
		{table: DocumentSources, name: "workspace_name", types: textTypes, optional: true},
	},
	StoreMem0: {
		{table: Mem0, name: "id", types: []string{"uuid"}},
		{table: Mem0, name: "payload", types: []string{"jsonb"}},
		{table: Mem0, name: "vector", optional: true},
	},
}

// storePrivileges: Honcho's documents are soft-deleted and flagged
// (UPDATE), and re-inserted with their edges when undo finds Honcho's
// reconciler has removed them (INSERT); mem0's rows are deleted and
// re-inserted whole.
var storePrivileges = map[Store][]privilege{
	StoreHoncho: {
		{table: Documents, kind: "SELECT"},
		{table: Documents, kind: "INSERT"},
		{table: Documents, kind: "UPDATE", columns: []string{"deleted_at", "internal_metadata", "superseded_by", "sync_state"}},
		{table: DocumentSources, kind: "SELECT"},
		{table: DocumentSources, kind: "INSERT"},
		{table: History, kind: "SELECT"},
		{table: History, kind: "INSERT"},
	},
	StoreMem0: {
		{table: Mem0, kind: "SELECT"},
		{table: Mem0, kind: "INSERT"},
		{table: Mem0, kind: "DELETE"},
		{table: History, kind: "SELECT"},
		{table: History, kind: "INSERT"},
	},
}

// storeIndexes: a scope's live rows in time order (the sweep's scan and a
// scope's siblings), and for Honcho the citations a dependent is found by
// (the tombstone job's, shared). The history indexes are the attribute
// store's, on the daemon's own history table.
var storeIndexes = map[Store][]IndexSpec{
	StoreHoncho: {
		{Name: "supersessiond_documents_live_scope", Table: Documents, Method: "btree",
			Keys: []string{"workspace_name", "observer", "observed", "created_at", "id"}, Predicate: "deleted_at IS NULL",
			DDL: `CREATE INDEX IF NOT EXISTS supersessiond_documents_live_scope ON {{.Documents}} (workspace_name, observer, observed, created_at, id)
  WHERE deleted_at IS NULL`},
		tombstoneIndexes[0], tombstoneIndexes[1], tombstoneIndexes[4],
	},
	StoreMem0: {
		// The operator's commands and the console find a memory by its id as
		// text (the history's), as they find an attribute.
		{Name: "supersessiond_mem0_id_text", Table: Mem0, ByName: true,
			DDL: `CREATE INDEX IF NOT EXISTS supersessiond_mem0_id_text ON {{.Mem0}} ((CAST(id AS text)))`},
		{Name: "supersessiond_mem0_scope", Table: Mem0, ByName: true,
			DDL: `CREATE INDEX IF NOT EXISTS supersessiond_mem0_scope ON {{.Mem0}}
  ((coalesce(payload ->> 'user_id', '')), (coalesce(payload ->> 'agent_id', '')), (coalesce(payload ->> 'run_id', '')), id)`},
	},
}

// indexesOf are the indexes a job's statements are planned around under
// the plan's store.
func (p Plan) indexesOf(job Job) []IndexSpec {
	if p.watching(job) {
		return watchIndexes
	}
	if job != Supersession || p.storeOf() == StoreAttributes {
		return jobIndexes(job)
	}
	return append(slices.Clone(storeIndexes[p.storeOf()]), historyIndexes()...)
}

// historyIndexes are the supersession job's indexes on the history.
func historyIndexes() []IndexSpec {
	return slices.DeleteFunc(slices.Clone(supersessionIndexes), func(s IndexSpec) bool { return s.Table != History })
}

// allIndexes are every index the daemon may have made, whatever the store
// was then: what `migrate --remove` looks for.
func allIndexes() []IndexSpec {
	var out []IndexSpec
	for _, job := range Jobs {
		out = append(out, jobIndexes(job)...)
	}
	for _, s := range []Store{StoreHoncho, StoreMem0} {
		out = append(out, storeIndexes[s]...)
	}
	return out
}

// storeTriggerName is the change trigger on a store's table (Honcho's
// documents, mem0's collection).
const storeTriggerName = "supersessiond_store_changed"

// storeTriggerFunctions are the trigger's functions, in the own schema, by
// store. Like the classification trigger's, each runs as its owner with a
// fixed search path, fires on every insert and update (no column list: the
// stack's own migrations stay free to alter its columns) and reads only
// the columns the stack has had since it had the table. Retirement is not
// a change to decide on: a soft-deleted document or a deleted memory
// records nothing. A new row is also the inline hook's to decide at once
// (its outbox), as a classification is on the attribute graph.
var storeTriggerFunctions = map[Store]struct{ name, ddl string }{
	StoreHoncho: {"document_changed", `CREATE OR REPLACE FUNCTION {{.Own}}.document_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF NEW.deleted_at IS NULL AND (TG_OP = 'INSERT'
      OR OLD.deleted_at IS NOT NULL
      OR OLD.content IS DISTINCT FROM NEW.content
      OR OLD.level IS DISTINCT FROM NEW.level
      OR OLD.workspace_name IS DISTINCT FROM NEW.workspace_name
      OR OLD.observer IS DISTINCT FROM NEW.observer
      OR OLD.observed IS DISTINCT FROM NEW.observed) THEN
    INSERT INTO {{.Changes}} (agent_id, aspect_id, attribute_id)
    VALUES (NEW.workspace_name::text, jsonb_build_array(NEW.observer::text, NEW.observed::text)::text, NEW.id::text);
    IF TG_OP = 'INSERT' THEN
      INSERT INTO {{.Outbox}} (attribute_id, agent_id, aspect_id)
      VALUES (NEW.id::text, NEW.workspace_name::text, jsonb_build_array(NEW.observer::text, NEW.observed::text)::text);
    END IF;
    PERFORM pg_notify('supersessiond_classified', NEW.workspace_name::text);
  END IF;
  RETURN NULL;
END
$fn$`},
	StoreMem0: {"mem0_changed", `CREATE OR REPLACE FUNCTION {{.Own}}.mem0_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  owner text := coalesce(NEW.payload ->> 'user_id', NEW.payload ->> 'agent_id', NEW.payload ->> 'run_id', '');
BEGIN
  IF TG_OP = 'INSERT'
      OR OLD.payload ->> 'data' IS DISTINCT FROM NEW.payload ->> 'data'
      OR OLD.payload ->> 'created_at' IS DISTINCT FROM NEW.payload ->> 'created_at'
      OR OLD.payload ->> 'user_id' IS DISTINCT FROM NEW.payload ->> 'user_id'
      OR OLD.payload ->> 'agent_id' IS DISTINCT FROM NEW.payload ->> 'agent_id'
      OR OLD.payload ->> 'run_id' IS DISTINCT FROM NEW.payload ->> 'run_id' THEN
    INSERT INTO {{.Changes}} (agent_id, aspect_id, attribute_id)
    VALUES (owner, jsonb_build_array(NEW.payload ->> 'user_id', NEW.payload ->> 'agent_id', NEW.payload ->> 'run_id')::text, NEW.id::text);
    IF TG_OP = 'INSERT' THEN
      INSERT INTO {{.Outbox}} (attribute_id, agent_id, aspect_id)
      VALUES (NEW.id::text, owner, jsonb_build_array(NEW.payload ->> 'user_id', NEW.payload ->> 'agent_id', NEW.payload ->> 'run_id')::text);
    END IF;
    PERFORM pg_notify('supersessiond_classified', owner);
  END IF;
  RETURN NULL;
END
$fn$`},
}

// storeTriggerDDL installs the change trigger on a store's table ({{.Table}}).
var storeTriggerDDL = []string{
	`DROP TRIGGER IF EXISTS ` + storeTriggerName + ` ON {{.Table}}`,
	`CREATE TRIGGER ` + storeTriggerName + `
  ` + triggerEvents + ` {{.Table}}
  FOR EACH ROW EXECUTE FUNCTION {{.Own}}.{{.Function}}()`,
}

// triggerName is the change trigger the plan's store needs, and the table
// it goes on.
func (p Plan) triggerName() (name, table string) {
	if p.storeOf() == StoreAttributes {
		return "supersessiond_attribute_classified", Attributes
	}
	return storeTriggerName, storeTable[p.storeOf()]
}

// triggerFunction is the trigger's function in the own schema.
func (p Plan) triggerFunction() string {
	if p.storeOf() == StoreAttributes {
		return "attribute_classified"
	}
	return storeTriggerFunctions[p.storeOf()].name
}

// found lists the stores whose rows this database holds where the
// configuration points, with where: what check says it found.
func (l *Layout) found() map[Store]string {
	out := map[Store]string{}
	if t := l.Tables[Attributes]; t.hasColumns("id", "agent_id", "aspect_id", "status", "content") {
		out[StoreAttributes] = "the attribute graph (" + t.Display() + ")"
	}
	if t := l.Tables[Documents]; t.hasColumns("id", "workspace_name", "observer", "observed", "content", "level", "deleted_at") {
		out[StoreHoncho] = "Honcho's documents (" + t.Display() + ")"
	}
	if t := l.Tables[Mem0]; t.hasColumns("id", "payload") && t.Columns["id"].Base == "uuid" {
		out[StoreMem0] = "mem0's collection (" + t.Display() + ")"
	}
	return out
}

// otherStores says which other stores the database holds, and the setting
// that selects each, for a supersession job whose store is not there.
func (l *Layout) otherStores() string {
	f := l.found()
	var parts []string
	for _, s := range []Store{StoreAttributes, StoreHoncho, StoreMem0} {
		if where, ok := f[s]; ok && s != l.Plan.storeOf() {
			parts = append(parts, fmt.Sprintf("it has %s: set %s", where, storeSetting(s)))
		}
	}
	return strings.Join(parts, "; or ")
}

// storeShape notes which store the supersession job runs on, and how.
func (l *Layout) storeShape(r *Report) {
	s := l.Plan.storeOf()
	where := l.found()[s]
	if where == "" {
		r.Problems = append(r.Problems, fmt.Sprintf("%s does not have the shape of that store", l.Tables[storeTable[s]].Display()))
		if other := l.otherStores(); other != "" {
			r.Problems = append(r.Problems, other)
		}
		return
	}
	note := "store " + string(s) + ": " + where
	switch s {
	case StoreHoncho:
		var shape []string
		if len(l.Plan.HonchoLevels) > 0 {
			shape = append(shape, "levels "+strings.Join(l.Plan.HonchoLevels, ", "))
		}
		if l.Names.HasSources {
			shape = append(shape, "citations in "+l.Tables[DocumentSources].Display())
		} else if l.Names.SourceIDs != "" {
			shape = append(shape, "citations in source_ids")
		}
		if !l.Names.SyncState {
			shape = append(shape, "no sync_state: a restored document's embedding is left to the operator")
		}
		note += " (" + strings.Join(shape, "; ") + ")"
	case StoreMem0:
		note += " (scope: payload user_id, agent_id, run_id)"
	}
	if l.Plan.ownHistory() {
		note += "; its history in " + l.Plan.ownSchema() + ".history"
	}
	r.Notes = append(r.Notes, note)
}

// hasColumns reports whether the table has every one of the columns.
func (t *Table) hasColumns(names ...string) bool {
	for _, n := range names {
		if !t.hasColumn(n) {
			return false
		}
	}
	return true
}
