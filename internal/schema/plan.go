package schema

// Job is one of the daemon's jobs as far as the database is concerned: the
// sweep, the inline hook and the operator commands all need the supersession
// tables; compaction retries and tombstone reconciliation need their own.
type Job string

const (
	Supersession Job = "supersession"
	Compaction   Job = "compaction"
	Tombstones   Job = "tombstones"
)

// Jobs in the order check reports them.
var Jobs = []Job{Supersession, Compaction, Tombstones}

// offSetting is the setting that turns a job off, for messages.
var offSetting = map[Job]string{
	Supersession: "memory.pipelineV2.structural.supersessionEnabled: false",
	Compaction:   "maintenance.schedules.compactionRetry: off",
	Tombstones:   "maintenance.schedules.tombstones: off",
}

// Logical names of the agent's tables: the keys of maintenance.tables.
const (
	Attributes       = "attributes"
	Aspects          = "aspects"
	History          = "history"
	Memories         = "memories"
	Messages         = "messages"
	CompactionEvents = "compactionEvents"
	Documents        = "documents"
	DocumentSources  = "documentSources"
)

// defaultTable is each logical table's name in the reference schema (SPEC §4)
// and in the stacks it was drawn from.
var defaultTable = map[string]string{
	Attributes:       "entity_attributes",
	Aspects:          "entity_aspects",
	History:          "memory_history",
	Memories:         "memories",
	Messages:         "messages",
	CompactionEvents: "compaction_events",
	Documents:        "documents",
	DocumentSources:  "document_sources",
	Mem0:             "mem0",
}

// tableReq is a table a job reads or writes; an optional one selects a
// shape when present and costs nothing when absent.
type tableReq struct {
	name     string
	optional bool
}

// jobTables lists the tables each job reads or writes, the supersession
// job's for the attribute store (Plan.tablesOf has the others').
var jobTables = map[Job][]tableReq{
	Supersession: {{Attributes, false}, {History, false}, {Aspects, true}},
	Compaction:   {{CompactionEvents, false}, {Messages, false}, {Memories, false}, {History, false}},
	Tombstones:   {{Documents, false}, {DocumentSources, true}},
}

// Plan is what a configuration asks of the database: which jobs are on,
// where the agent's tables are and what they are called, and where the
// daemon keeps its own.
type Plan struct {
	On     map[Job]bool
	Schema string            // maintenance.database.schema; "" = the search path
	Own    string            // maintenance.database.ownSchema
	Tables map[string]string // logical name → configured name ("" = default)
	// Store is maintenance.supersession.store ("" = attributes), and
	// HonchoLevels the levels that take part when it is honcho.
	Store        Store
	HonchoLevels []string

	// watchCompaction: the compaction job only watches (clawbolt's
	// tables); found by Inspect, so set in a Layout's plan only.
	watchCompaction bool
}

// ReferencePlan is the plan of the reference schema with every job on: what
// the tests, the demo and the bench run against.
func ReferencePlan() Plan {
	return Plan{On: map[Job]bool{Supersession: true, Compaction: true, Tombstones: true}, Own: "supersessiond", Tables: map[string]string{}}
}
