-- supersessiond's own objects in the agent database. Everything here is
-- additive: columns the SPEC marks "added", indexes the jobs need, the
-- daemon's bookkeeping tables and the post-classify notification trigger.
-- Statements are idempotent (IF NOT EXISTS) so a database that already has
-- some of these objects, from a hand-run script or an earlier attempt,
-- migrates cleanly.

-- +goose Up

-- Columns the SPEC marks as added.
ALTER TABLE entity_attributes ADD COLUMN IF NOT EXISTS superseded_at timestamptz;
ALTER TABLE entity_attributes ADD COLUMN IF NOT EXISTS protected boolean NOT NULL DEFAULT false;
ALTER TABLE compaction_events ADD COLUMN IF NOT EXISTS last_error text;
ALTER TABLE compaction_events ADD COLUMN IF NOT EXISTS next_attempt_at timestamptz;
ALTER TABLE compaction_events ADD COLUMN IF NOT EXISTS completed_at timestamptz;
ALTER TABLE documents ADD COLUMN IF NOT EXISTS tombstone_preserved_at timestamptz;

-- Supersession: the active, classified attributes of an (agent, aspect) in
-- age order. Serves the sweep's keyset scan over aspects (an index-only scan:
-- kind is included so constraints can be left out without visiting the heap)
-- and the inline hook's sibling lookup.
CREATE INDEX IF NOT EXISTS supersessiond_attr_active_siblings
  ON entity_attributes (agent_id, aspect_id, created_at, id) INCLUDE (kind)
  WHERE status = 'active' AND aspect_id IS NOT NULL;

-- Audit trail: newest first, by event, by agent.
CREATE INDEX IF NOT EXISTS supersessiond_history_created
  ON memory_history (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS supersessiond_history_event_created
  ON memory_history (event, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS supersessiond_history_agent_created
  ON memory_history ((metadata ->> 'agent_id'), created_at DESC, id DESC);

-- One proposal per (old, new) pair, ever: a unique index, not a
-- read-then-write, so concurrent sweeps and daemons cannot duplicate one.
CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_proposal
  ON memory_history ((metadata ->> 'old_attribute_id'), (metadata ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal';
-- A proposal is reviewed once, applied once; a supersession is undone once.
CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_review
  ON memory_history ((metadata ->> 'proposal_id'))
  WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected');
CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_apply
  ON memory_history ((metadata ->> 'proposal_id'))
  WHERE event = 'attribute_superseded' AND metadata ? 'proposal_id';
CREATE UNIQUE INDEX IF NOT EXISTS supersessiond_history_one_revert
  ON memory_history ((metadata ->> 'reverted_history_id'))
  WHERE event = 'supersession_reverted';

-- Compaction retries: the stale pending events.
CREATE INDEX IF NOT EXISTS supersessiond_compaction_pending
  ON compaction_events (triggered_at)
  WHERE status = 'pending';

-- Tombstones: the dependent check is one set-based query per batch over this
-- GIN index (jsonb_ops, for the ?| operator).
CREATE INDEX IF NOT EXISTS supersessiond_documents_source_ids
  ON documents USING gin (source_ids);
CREATE INDEX IF NOT EXISTS supersessiond_documents_tombstones
  ON documents (deleted_at, id)
  WHERE deleted_at IS NOT NULL AND tombstone_preserved_at IS NULL;
CREATE INDEX IF NOT EXISTS supersessiond_documents_preserved
  ON documents (tombstone_preserved_at, id)
  WHERE tombstone_preserved_at IS NOT NULL;

-- Bookkeeping: cursors and watermarks that must survive restarts.
CREATE TABLE IF NOT EXISTS supersessiond_state (
  name text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Scheduled-job leases: one row per job. `tick` is the schedule time the
-- holder ran for, so each tick runs once across replicas; `term` increases on
-- every acquisition, fencing off a holder whose lease expired.
CREATE TABLE IF NOT EXISTS supersessiond_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  term bigint NOT NULL,
  tick timestamptz,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

-- The inline hook's durable outbox. The trigger below appends a row in the
-- same transaction that classifies an attribute, so a classification can
-- never be missed, whatever happens to notifications, connections or the
-- daemon; NOTIFY is only the wake-up hint.
CREATE TABLE IF NOT EXISTS supersessiond_classified (
  seq bigserial PRIMARY KEY,
  attribute_id text NOT NULL,
  agent_id text NOT NULL,
  aspect_id text NOT NULL,
  classified_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_by text,
  claimed_until timestamptz,
  attempts int NOT NULL DEFAULT 0
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION supersessiond_attribute_classified() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.aspect_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.aspect_id IS DISTINCT FROM NEW.aspect_id) THEN
    INSERT INTO supersessiond_classified (attribute_id, agent_id, aspect_id)
    VALUES (NEW.id, NEW.agent_id, NEW.aspect_id);
    -- Identical payloads are folded into one per transaction: a bulk
    -- classification wakes the daemon once, and the outbox holds every row.
    PERFORM pg_notify('supersessiond_classified', NEW.agent_id);
  END IF;
  RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER IF EXISTS supersessiond_attribute_classified ON entity_attributes;
CREATE TRIGGER supersessiond_attribute_classified
  AFTER INSERT OR UPDATE OF aspect_id ON entity_attributes
  FOR EACH ROW EXECUTE FUNCTION supersessiond_attribute_classified();

-- +goose Down
DROP TRIGGER IF EXISTS supersessiond_attribute_classified ON entity_attributes;
DROP FUNCTION IF EXISTS supersessiond_attribute_classified();
DROP TABLE IF EXISTS supersessiond_classified;
DROP TABLE IF EXISTS supersessiond_leases;
DROP TABLE IF EXISTS supersessiond_state;
DROP INDEX IF EXISTS supersessiond_documents_preserved;
DROP INDEX IF EXISTS supersessiond_documents_tombstones;
DROP INDEX IF EXISTS supersessiond_documents_source_ids;
DROP INDEX IF EXISTS supersessiond_compaction_pending;
DROP INDEX IF EXISTS supersessiond_history_one_revert;
DROP INDEX IF EXISTS supersessiond_history_one_apply;
DROP INDEX IF EXISTS supersessiond_history_one_review;
DROP INDEX IF EXISTS supersessiond_history_one_proposal;
DROP INDEX IF EXISTS supersessiond_history_agent_created;
DROP INDEX IF EXISTS supersessiond_history_event_created;
DROP INDEX IF EXISTS supersessiond_history_created;
DROP INDEX IF EXISTS supersessiond_attr_active_siblings;
-- The added columns stay: they may hold data (superseded_at, protected,
-- tombstone_preserved_at) that the agent now relies on.
