package schema

// The reference agent schema (SPEC §4): a PostgreSQL rendering of Signet's
// memory graph, clawbolt's conversation compaction tables and Honcho's
// documents, as an agent stack has them before supersessiond is installed.
// `migrate --reference-schema` creates the absent ones of the jobs that are
// on (new installs, tests, the demo). The columns the daemon adds
// (superseded_at, protected, last_error, ...) are deliberately absent: the
// migration adds them, exactly as it does on a real agent database.

// referenceTables are, per job, the reference tables it creates, in an
// order that satisfies their foreign keys ("entities" is not a logical
// table: it lives beside the aspects).
var referenceTables = map[Job][]string{
	Supersession: {"entities", Aspects, Memories, Attributes, History},
	Compaction:   {Memories, Messages, CompactionEvents, History},
	Tombstones:   {Documents},
}

// referenceTables are the reference tables a job needs under the plan's
// store: Honcho's store is the reference documents table, mem0's has no
// reference rendering (mem0 creates its own collection).
func (p Plan) referenceTables(job Job) []string {
	switch {
	case job == Supersession && p.storeOf() == StoreHoncho:
		return []string{Documents}
	case job == Supersession && p.storeOf() == StoreMem0:
		return nil
	}
	return referenceTables[job]
}

// referenceDDL creates each reference table; templates over referenceNames.
var referenceDDL = map[string]string{
	Memories: `CREATE TABLE IF NOT EXISTS {{.Memories}} (
  id text PRIMARY KEY,
  agent_id text NOT NULL DEFAULT 'default',
  type text NOT NULL DEFAULT 'fact',
  content text NOT NULL,
  normalized_content text,
  confidence real NOT NULL DEFAULT 1,
  importance real NOT NULL DEFAULT 0.5,
  source_type text,
  source_id text,
  idempotency_key text UNIQUE,
  is_deleted boolean NOT NULL DEFAULT false,
  deleted_at timestamptz,
  superseded_by text,
  superseded_at timestamptz,
  superseded_reason text,
  pinned boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
	"entities": `CREATE TABLE IF NOT EXISTS {{.Entities}} (
  id text PRIMARY KEY,
  agent_id text NOT NULL DEFAULT 'default',
  name text NOT NULL,
  entity_type text NOT NULL DEFAULT 'person',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, name)
)`,
	Aspects: `CREATE TABLE IF NOT EXISTS {{.Aspects}} (
  id text PRIMARY KEY,
  entity_id text NOT NULL REFERENCES {{.Entities}} ON DELETE CASCADE,
  agent_id text NOT NULL DEFAULT 'default',
  name text NOT NULL,
  canonical_name text NOT NULL,
  weight real NOT NULL DEFAULT 0.5,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (entity_id, canonical_name)
)`,
	Attributes: `CREATE TABLE IF NOT EXISTS {{.Attributes}} (
  id text PRIMARY KEY,
  aspect_id text REFERENCES {{.Aspects}} ON DELETE SET NULL,
  agent_id text NOT NULL DEFAULT 'default',
  memory_id text REFERENCES {{.Memories}} ON DELETE SET NULL,
  kind text NOT NULL CHECK (kind IN ('attribute', 'constraint')),
  content text NOT NULL,
  normalized_content text NOT NULL,
  confidence real NOT NULL DEFAULT 0,
  importance real NOT NULL DEFAULT 0.5,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
  superseded_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
	History: `CREATE TABLE IF NOT EXISTS {{.History}} (
  id text PRIMARY KEY,
  memory_id text NOT NULL,
  event text NOT NULL,
  old_content text,
  new_content text,
  changed_by text NOT NULL,
  reason text,
  metadata jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  actor_type text,
  session_id text,
  request_id text
)`,
	Messages: `CREATE TABLE IF NOT EXISTS {{.Messages}} (
  id bigserial PRIMARY KEY,
  agent_id text NOT NULL,
  seq bigint NOT NULL,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  body text NOT NULL,
  tool_calls jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, seq)
)`,
	CompactionEvents: `CREATE TABLE IF NOT EXISTS {{.Events}} (
  id bigserial PRIMARY KEY,
  agent_id text NOT NULL,
  triggered_at timestamptz NOT NULL DEFAULT now(),
  min_message_seq bigint,
  max_message_seq bigint,
  status text NOT NULL DEFAULT 'completed',
  retry_count int NOT NULL DEFAULT 0,
  memory_updated boolean NOT NULL DEFAULT false,
  summary_len int
)`,
	Documents: `CREATE TABLE IF NOT EXISTS {{.Documents}} (
  id text PRIMARY KEY,
  workspace_name text NOT NULL,
  observer text NOT NULL,
  observed text NOT NULL,
  content text NOT NULL,
  level text NOT NULL DEFAULT 'explicit',
  source_ids jsonb,
  embedding real[],
  internal_metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  superseded_by text
)`,
}
