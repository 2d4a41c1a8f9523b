-- The reference agent schema (SPEC §4): a PostgreSQL rendering of Signet's
-- memory graph, clawbolt's conversation compaction tables and Honcho's
-- documents, as an agent stack has them before supersessiond is installed.
-- The columns supersessiond adds (superseded_at, protected, last_error, ...)
-- are deliberately absent: the daemon's own migration adds them, exactly as it
-- does on a real agent database. Every statement is idempotent.

CREATE TABLE IF NOT EXISTS memories (
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
);

CREATE TABLE IF NOT EXISTS entities (
  id text PRIMARY KEY,
  agent_id text NOT NULL DEFAULT 'default',
  name text NOT NULL,
  entity_type text NOT NULL DEFAULT 'person',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, name)
);

CREATE TABLE IF NOT EXISTS entity_aspects (
  id text PRIMARY KEY,
  entity_id text NOT NULL REFERENCES entities ON DELETE CASCADE,
  agent_id text NOT NULL DEFAULT 'default',
  name text NOT NULL,
  canonical_name text NOT NULL,
  weight real NOT NULL DEFAULT 0.5,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (entity_id, canonical_name)
);

CREATE TABLE IF NOT EXISTS entity_attributes (
  id text PRIMARY KEY,
  aspect_id text REFERENCES entity_aspects ON DELETE SET NULL,
  agent_id text NOT NULL DEFAULT 'default',
  memory_id text REFERENCES memories ON DELETE SET NULL,
  kind text NOT NULL CHECK (kind IN ('attribute', 'constraint')),
  content text NOT NULL,
  normalized_content text NOT NULL,
  confidence real NOT NULL DEFAULT 0,
  importance real NOT NULL DEFAULT 0.5,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
  superseded_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS memory_history (
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
);

CREATE TABLE IF NOT EXISTS messages (
  id bigserial PRIMARY KEY,
  agent_id text NOT NULL,
  seq bigint NOT NULL,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  body text NOT NULL,
  tool_calls jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, seq)
);

CREATE TABLE IF NOT EXISTS compaction_events (
  id bigserial PRIMARY KEY,
  agent_id text NOT NULL,
  triggered_at timestamptz NOT NULL DEFAULT now(),
  min_message_seq bigint,
  max_message_seq bigint,
  status text NOT NULL DEFAULT 'completed',
  retry_count int NOT NULL DEFAULT 0,
  memory_updated boolean NOT NULL DEFAULT false,
  summary_len int
);

CREATE TABLE IF NOT EXISTS documents (
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
);
