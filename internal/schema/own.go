package schema

// The daemon's own objects. Its tables live in a schema of its own; in the
// agent's schema it adds only the columns SPEC §4 marks as added, indexes,
// and the classification trigger on the attributes table. Every statement is
// a template over Names and idempotent.

// ownDDL creates the own tables, by name.
var ownDDL = map[string]string{
	// Cursors and watermarks that must survive restarts.
	"state": `CREATE TABLE IF NOT EXISTS {{.State}} (
  name text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
	// Scheduled-job leases, one row per job: tick is the schedule time the
	// holder ran for, so each tick runs once across replicas; term increases
	// on every acquisition, fencing off a holder whose lease expired.
	"leases": `CREATE TABLE IF NOT EXISTS {{.Leases}} (
  name text PRIMARY KEY,
  holder text NOT NULL,
  term bigint NOT NULL,
  tick timestamptz,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
)`,
	// The inline hook's durable outbox: the trigger appends a row in the
	// transaction that classifies an attribute, so no classification is
	// missed whatever happens to notifications, connections or the daemon.
	"classified": `CREATE TABLE IF NOT EXISTS {{.Outbox}} (
  seq bigserial PRIMARY KEY,
  attribute_id text NOT NULL,
  agent_id text NOT NULL,
  aspect_id text NOT NULL,
  classified_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_by text,
  claimed_until timestamptz,
  attempts int NOT NULL DEFAULT 0
)`,
	// The aspects whose attributes changed in a way that may call for a new
	// decision (SPEC §11), appended by the trigger in the changing
	// transaction, so a change made while no daemon runs is not lost. The
	// incremental sweep claims and consumes rows; a full pass deletes those
	// its start's snapshot saw (xid: the recording transaction). Append-only:
	// the agent's transactions never wait on each other here. attribute_id
	// names the attribute that changed; a record without one (the sweep's
	// own, or an earlier release's trigger) asks for the whole aspect.
	"changes": `CREATE TABLE IF NOT EXISTS {{.Changes}} (
  seq bigserial PRIMARY KEY,
  agent_id text NOT NULL,
  aspect_id text NOT NULL,
  attribute_id text,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_by text,
  claimed_until timestamptz
);
CREATE INDEX IF NOT EXISTS changes_aspect ON {{.Changes}} (agent_id, aspect_id)`,
	// The blocking keys of large aspects (SPEC §11), so that an incremental
	// pass reads only the siblings a changed attribute's keys can meet
	// instead of its whole aspect: one or more fragments per aspect, each an
	// encoded key index (internal/supersession/digest.go) made by one
	// heuristics version. A full pass writes a fragment per aspect it read
	// and, complete, deletes those its start's snapshot saw; an incremental
	// pass adds a fragment with the keys of the attributes it examined.
	// Fragments are only ever added or replaced whole, so two writers never
	// lose each other's keys. Stored uncompressed: read whole, rarely large.
	"aspect_keys": `CREATE TABLE IF NOT EXISTS {{.Keys}} (
  agent_id text NOT NULL,
  aspect_id text NOT NULL,
  heuristics text NOT NULL,
  keys bytea NOT NULL,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
ALTER TABLE {{.Keys}} ALTER COLUMN keys SET STORAGE EXTERNAL;
CREATE INDEX IF NOT EXISTS aspect_keys_aspect ON {{.Keys}} (agent_id, aspect_id)`,
	// The LLM judge's windows (SPEC §13), keyed by the window's cache key
	// (SHA-256 of the prompt version, the model and the prompt: its aspect
	// and statements in order). A window is claimed before it is asked
	// (claimed_by, claimed_until: a second asker, another replica or the
	// hook beside a sweep, finds the claim and asks nothing), then holds its
	// answer (state answered, verdict) for good: a window whose statements
	// did not change is never asked again. A failed or unreadable answer
	// backs off per window (attempts, next_attempt_at).
	"llm_windows": `CREATE TABLE IF NOT EXISTS {{.Windows}} (
  key bytea PRIMARY KEY,
  model text NOT NULL,
  state text NOT NULL CHECK (state IN ('claimed', 'answered', 'failed')),
  claimed_by text,
  claimed_until timestamptz,
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  verdict jsonb,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
	// The LLM requests made, per minute, by every replica together:
	// maintenance.llm.maxRequestsPerHour is checked against the last sixty
	// minutes when windows are claimed.
	"llm_spend": `CREATE TABLE IF NOT EXISTS {{.Spend}} (
  minute timestamptz PRIMARY KEY,
  requests int NOT NULL
)`,
	// The history of a store without one (Honcho, mem0: SPEC §14): the
	// columns of memory_history, the same events, read by every operator
	// command as the history. Its snapshots (an attribute_superseded row's
	// undo holds the retired row whole, a mem0 vector included) are what
	// undo restores from, so migrate --remove keeps it while it holds any.
	"history": `CREATE TABLE IF NOT EXISTS {{.Own}}.history (
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
	// The tombstone job's record of what it hard-deleted, its one
	// irreversible act: each document's id, workspace and a SHA-256 digest
	// of its content for good, and the whole row (embedding included) for
	// maintenance.tombstones.keepDeleted, so a mistaken pass can be
	// restored (reconcile --restore); then the job purges the copy.
	"deleted_documents": `CREATE TABLE IF NOT EXISTS {{.Deleted}} (
  seq bigserial PRIMARY KEY,
  run_id text NOT NULL,
  document_id text NOT NULL,
  workspace_name text NOT NULL,
  content_sha256 text NOT NULL,
  phase text NOT NULL CHECK (phase IN ('triage', 'release')),
  deleted_at timestamptz NOT NULL DEFAULT now(),
  document jsonb,
  purged_at timestamptz,
  restored_at timestamptz
);
CREATE INDEX IF NOT EXISTS deleted_documents_document ON {{.Deleted}} (document_id);
CREATE INDEX IF NOT EXISTS deleted_documents_run ON {{.Deleted}} (run_id);
CREATE INDEX IF NOT EXISTS deleted_documents_kept ON {{.Deleted}} (deleted_at) WHERE document IS NOT NULL`,
}

// triggerFunctionDDL is the classification trigger's function, in the own
// schema. It runs as its owner (SECURITY DEFINER, with a fixed search path),
// so the agent's role needs no privilege on the daemon's schema to classify
// an attribute. A classification (insert, or a new aspect) goes to the
// inline hook's outbox and wakes the daemon; identical notification payloads
// are folded into one per transaction, so a bulk classification wakes it
// once. Every change that may call for a new decision (SPEC §11: classified,
// inserted, reactivated, un-protected, content edited, kind changed; an undo
// is a reactivation) records its aspect for the incremental sweep.
const triggerFunctionDDL = `CREATE OR REPLACE FUNCTION {{.Own}}.attribute_classified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF NEW.aspect_id IS NULL THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' OR OLD.aspect_id IS DISTINCT FROM NEW.aspect_id THEN
    INSERT INTO {{.Outbox}} (attribute_id, agent_id, aspect_id)
    VALUES (NEW.id::text, NEW.agent_id::text, NEW.aspect_id::text);
    PERFORM pg_notify('supersessiond_classified', NEW.agent_id::text);
  END IF;
  IF NEW.status = 'active' AND (TG_OP = 'INSERT'
      OR OLD.aspect_id IS DISTINCT FROM NEW.aspect_id
      OR OLD.status IS DISTINCT FROM NEW.status
      OR OLD.content IS DISTINCT FROM NEW.content
      OR OLD.kind IS DISTINCT FROM NEW.kind
      OR (OLD.protected AND NOT coalesce(NEW.protected, false))) THEN
    INSERT INTO {{.Changes}} (agent_id, aspect_id, attribute_id) VALUES (NEW.agent_id::text, NEW.aspect_id::text, NEW.id::text);
  END IF;
  RETURN NULL;
END
$fn$`

// triggerEvents are the events that fire the trigger. It fires on every
// update and the function tells what changed: a column list (UPDATE OF, or
// a WHEN clause) would make the agent's columns depend on the daemon's
// trigger, and the stack's own migrations could no longer alter them. An
// installed trigger on other events is outdated, and migrate replaces it.
const triggerEvents = "AFTER INSERT OR UPDATE ON"

// triggerDDL points the trigger at the own schema's function (an earlier
// release's trigger called a function in the agent's schema, and fired on
// aspect_id only).
var triggerDDL = []string{
	`DROP TRIGGER IF EXISTS supersessiond_attribute_classified ON {{.Attributes}}`,
	`CREATE TRIGGER supersessiond_attribute_classified
  ` + triggerEvents + ` {{.Attributes}}
  FOR EACH ROW EXECUTE FUNCTION {{.Own}}.attribute_classified()`,
}
