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
	// LLM verdicts per (old content, new content, model): no pair is asked
	// twice, across runs, restarts and replicas. Keyed by SHA-256 of the
	// exact contents: an edited attribute is a new question.
	"llm_verdicts": `CREATE TABLE IF NOT EXISTS {{.Verdicts}} (
  old_hash bytea NOT NULL,
  new_hash bytea NOT NULL,
  model text NOT NULL,
  contradicts boolean NOT NULL,
  confidence real NOT NULL,
  reasoning text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (old_hash, new_hash, model)
)`,
}

// triggerFunctionDDL is the classification trigger's function, in the own
// schema. It runs as its owner (SECURITY DEFINER, with a fixed search path),
// so the agent's role needs no privilege on the daemon's schema to classify
// an attribute. Identical notification payloads are folded into one per
// transaction: a bulk classification wakes the daemon once, and the outbox
// holds every row.
const triggerFunctionDDL = `CREATE OR REPLACE FUNCTION {{.Own}}.attribute_classified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF NEW.aspect_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.aspect_id IS DISTINCT FROM NEW.aspect_id) THEN
    INSERT INTO {{.Outbox}} (attribute_id, agent_id, aspect_id)
    VALUES (NEW.id::text, NEW.agent_id::text, NEW.aspect_id::text);
    PERFORM pg_notify('supersessiond_classified', NEW.agent_id::text);
  END IF;
  RETURN NULL;
END
$fn$`

// triggerDDL points the trigger at the own schema's function (an earlier
// release's trigger called a function in the agent's schema).
var triggerDDL = []string{
	`DROP TRIGGER IF EXISTS supersessiond_attribute_classified ON {{.Attributes}}`,
	`CREATE TRIGGER supersessiond_attribute_classified
  AFTER INSERT OR UPDATE OF aspect_id ON {{.Attributes}}
  FOR EACH ROW EXECUTE FUNCTION {{.Own}}.attribute_classified()`,
}
