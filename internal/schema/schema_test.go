package schema_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func inspect(t *testing.T, db *pgtest.DB, plan schema.Plan) *schema.Layout {
	t.Helper()
	l, err := schema.Inspect(context.Background(), db.DB, plan)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func migrate(t *testing.T, db *pgtest.DB, plan schema.Plan, opts schema.Options) *schema.Result {
	t.Helper()
	res, err := schema.Migrate(context.Background(), db.DB, plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func exec(t *testing.T, db *pgtest.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// migrateOK migrates the reference schema with default options and fails
// the test unless the layout is then complete.
func migrateOK(t *testing.T, db *pgtest.DB) *schema.Result {
	t.Helper()
	res := migrate(t, db, schema.ReferencePlan(), schema.Options{})
	if !res.Layout.OK() {
		t.Fatalf("after migrate: %s", res.Layout.Reports[schema.Supersession].Line())
	}
	return res
}

// addAspects adds the entity Sam of agent a with two aspects, asp1 (home)
// and asp2 (work).
func addAspects(t *testing.T, db *pgtest.DB) {
	t.Helper()
	exec(t, db, `INSERT INTO entities (id, agent_id, name) VALUES ('e1', 'a', 'Sam')`)
	exec(t, db, `INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES ('asp1', 'e1', 'a', 'home', 'home'), ('asp2', 'e1', 'a', 'work', 'work')`)
}

// planWith returns a plan of the configuration with only the given jobs on.
func planWith(jobs ...schema.Job) schema.Plan {
	p := schema.ReferencePlan()
	for _, j := range schema.Jobs {
		p.On[j] = false
	}
	for _, j := range jobs {
		p.On[j] = true
	}
	return p
}

func TestMigrateReferenceTwiceOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	if l := inspect(t, db, schema.ReferencePlan()); l.OK() {
		t.Fatal("an empty database must not pass")
	}
	first := migrate(t, db, schema.ReferencePlan(), schema.Options{Reference: true})
	if len(first.Changes) < 20 || !first.Layout.OK() {
		t.Fatalf("first run: %v", first.Changes)
	}
	second := migrate(t, db, schema.ReferencePlan(), schema.Options{Reference: true})
	if len(second.Changes) != 0 {
		t.Fatalf("second run must change nothing: %v", second.Changes)
	}
}

func TestMigrateWithoutAgentTablesNamesThem(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	_, err := schema.Migrate(context.Background(), db.DB, schema.ReferencePlan(), schema.Options{})
	var se *schema.SchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "table entity_attributes not found") {
		t.Fatalf("want a SchemaError naming the tables, got %v", err)
	}
}

// A missing added column is pending work for migrate, named.
func TestMissingAddedColumnIsPendingMigrate(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	exec(t, db, `ALTER TABLE entity_attributes DROP COLUMN protected`)
	r := inspect(t, db, schema.ReferencePlan()).Reports[schema.Supersession]
	if r.Runnable() || !strings.Contains(r.Line(), "column public.entity_attributes.protected") || !strings.Contains(r.Line(), "supersessiond migrate") {
		t.Fatalf("line: %s", r.Line())
	}
	res := migrate(t, db, schema.ReferencePlan(), schema.Options{})
	if !res.Layout.OK() || len(res.Changes) != 1 {
		t.Fatalf("changes %v, layout ok %v", res.Changes, res.Layout.OK())
	}
}

func TestConcurrentMigrationsSerialise(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = schema.Migrate(context.Background(), db.DB, schema.ReferencePlan(), schema.Options{Reference: true})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migration %d: %v", i, err)
		}
	}
	if !inspect(t, db, schema.ReferencePlan()).OK() {
		t.Fatal("not migrated")
	}
}

// The trigger feeds the inline hook's outbox, in the daemon's own schema,
// when an attribute gets its aspect_id, and only then.
func TestClassificationTriggerFillsOutbox(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	addAspects(t, db)
	exec(t, db, `INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content) VALUES ('x1', 'a', 'attribute', 'Lives in Oslo', 'lives in oslo')`)
	exec(t, db, `INSERT INTO entity_attributes (id, agent_id, aspect_id, kind, content, normalized_content) VALUES ('x2', 'a', 'asp1', 'attribute', 'Lives in Rome', 'lives in rome')`)
	exec(t, db, `UPDATE entity_attributes SET aspect_id = 'asp1' WHERE id = 'x1'`)
	exec(t, db, `UPDATE entity_attributes SET content = 'Lives in Oslo, Norway' WHERE id = 'x1'`) // not a classification
	exec(t, db, `UPDATE entity_attributes SET aspect_id = 'asp2' WHERE id = 'x1'`)                // reclassified
	var got []string
	if err := db.Select(&got, `SELECT attribute_id || ':' || aspect_id FROM supersessiond.classified ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	if want := "x2:asp1,x1:asp1,x1:asp2"; strings.Join(got, ",") != want {
		t.Fatalf("outbox = %v, want %s", got, want)
	}
}

// The trigger records, for the incremental sweep, every change that may
// call for a new decision (SPEC §11), and nothing else.
func TestClassificationTriggerRecordsChanges(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	addAspects(t, db)
	steps := []struct {
		stmt, recorded string
	}{
		{`INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content) VALUES ('x1', 'a', 'attribute', 'Lives in Oslo', 'x')`, ""},
		{`UPDATE entity_attributes SET aspect_id = 'asp1' WHERE id = 'x1'`, "asp1"},                                                                                          // classified
		{`INSERT INTO entity_attributes (id, agent_id, aspect_id, kind, content, normalized_content) VALUES ('x2', 'a', 'asp1', 'attribute', 'Lives in Rome', 'x')`, "asp1"}, // inserted
		{`UPDATE entity_attributes SET content = 'Lives in Oslo, Norway' WHERE id = 'x1'`, "asp1"},                                                                           // edited
		{`UPDATE entity_attributes SET importance = 0.9, updated_at = now() WHERE id = 'x1'`, ""},                                                                            // nothing to decide
		{`UPDATE entity_attributes SET protected = true WHERE id = 'x1'`, ""},                                                                                                // protected: may supersede already
		{`UPDATE entity_attributes SET protected = false WHERE id = 'x1'`, "asp1"},                                                                                           // un-protected
		{`UPDATE entity_attributes SET status = 'superseded', superseded_by = 'x2' WHERE id = 'x1'`, ""},                                                                     // retired
		{`UPDATE entity_attributes SET status = 'active', superseded_by = NULL WHERE id = 'x1'`, "asp1"},                                                                     // undone
		{`UPDATE entity_attributes SET kind = 'constraint' WHERE id = 'x2'`, "asp1"},
		{`UPDATE entity_attributes SET aspect_id = 'asp2' WHERE id = 'x1'`, "asp2"}, // reclassified
		{`UPDATE entity_attributes SET aspect_id = NULL WHERE id = 'x1'`, ""},
	}
	for _, st := range steps {
		exec(t, db, `DELETE FROM supersessiond.changes`)
		exec(t, db, st.stmt)
		var got []string
		if err := db.Select(&got, `SELECT agent_id || ':' || aspect_id || ':' || attribute_id FROM supersessiond.changes`); err != nil {
			t.Fatal(err)
		}
		want := []string{}
		if st.recorded != "" {
			id := "x1"
			if strings.Contains(st.stmt, "'x2'") {
				id = "x2"
			}
			want = []string{"a:" + st.recorded + ":" + id}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: recorded %v, want %v", st.stmt, got, want)
		}
	}
	// The agent's columns do not depend on the trigger: its own migrations
	// can still alter them.
	exec(t, db, `ALTER TABLE entity_attributes ALTER COLUMN content TYPE varchar(100000)`)
}

// An earlier release's change records named no attribute: check says
// migrate has work to do, migrate adds the column and the trigger fills it;
// the records already there stay (they ask for their whole aspect).
func TestChangeRecordsWithoutAttributeAreUpgraded(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	exec(t, db, `INSERT INTO supersessiond.changes (agent_id, aspect_id) VALUES ('a', 'old')`)
	exec(t, db, `ALTER TABLE supersessiond.changes DROP COLUMN attribute_id`)
	exec(t, db, `DROP TABLE supersessiond.aspect_keys`)
	r := inspect(t, db, schema.ReferencePlan()).Reports[schema.Supersession]
	if r.Runnable() || !strings.Contains(r.Line(), "column attribute_id of supersessiond.changes") ||
		!strings.Contains(r.Line(), "table supersessiond.aspect_keys") {
		t.Fatalf("line: %s", r.Line())
	}
	migrateOK(t, db)
	addAspects(t, db)
	exec(t, db, `INSERT INTO entity_attributes (id, agent_id, aspect_id, kind, content, normalized_content) VALUES ('x1', 'a', 'asp1', 'attribute', 'Lives in Oslo', 'x')`)
	var got []string
	if err := db.Select(&got, `SELECT aspect_id || ':' || coalesce(attribute_id, '-') FROM supersessiond.changes ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "old:-,asp1:x1" {
		t.Fatalf("change records after the upgrade: %v", got)
	}
}

// An earlier release's trigger fired on aspect_id only: check says migrate
// has work to do, and migrate replaces it.
func TestAnOutdatedTriggerIsReplaced(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	exec(t, db, `DROP TRIGGER supersessiond_attribute_classified ON entity_attributes`)
	exec(t, db, `CREATE TRIGGER supersessiond_attribute_classified AFTER INSERT OR UPDATE OF aspect_id ON entity_attributes
		FOR EACH ROW EXECUTE FUNCTION supersessiond.attribute_classified()`)
	l := inspect(t, db, schema.ReferencePlan())
	if r := l.Reports[schema.Supersession]; r.OK() || !strings.Contains(r.Line(), "trigger") {
		t.Fatalf("an outdated trigger must be pending: %s", r.Line())
	}
	migrateOK(t, db)
	addAspects(t, db)
	exec(t, db, `INSERT INTO entity_attributes (id, agent_id, aspect_id, kind, content, normalized_content, status) VALUES ('x1', 'a', 'asp1', 'attribute', 'Lives in Oslo', 'x', 'superseded')`)
	exec(t, db, `DELETE FROM supersessiond.changes`)
	exec(t, db, `UPDATE entity_attributes SET status = 'active' WHERE id = 'x1'`)
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM supersessiond.changes`); err != nil || n != 1 {
		t.Fatalf("the replaced trigger recorded %d changes (%v), want 1", n, err)
	}
}

// A stack with only the supersession tables (a Signet-style memory graph)
// runs the supersession job with the other jobs off: migrate adds nothing
// for them, and nothing of theirs is required.
func TestSupersessionOnlyDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	plan := planWith(schema.Supersession)
	res := migrate(t, db, plan, schema.Options{Reference: true})
	for _, table := range []string{"documents", "compaction_events", "messages"} {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_class WHERE relname = $1`, table); err != nil || n != 0 {
			t.Fatalf("%s created for a job that is off (%v)", table, err)
		}
	}
	l := res.Layout
	if !l.OK() || l.Reports[schema.Compaction].Line() != "off (maintenance.schedules.compactionRetry: off)" {
		t.Fatalf("supersession: %s; compaction: %s", l.Reports[schema.Supersession].Line(), l.Reports[schema.Compaction].Line())
	}
}

// An earlier release kept the daemon's tables (and goose's bookkeeping, and
// the trigger's function) in the agent's schema: migrate moves the tables
// into the own schema with their rows, points the trigger at the new
// function and drops the old one.
func TestMigrateMovesAnEarlierReleasesTables(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	exec(t, db, `INSERT INTO supersessiond.state (name, value) VALUES ('sweep_cursor', '{"agent_id":"a"}')`)
	exec(t, db, `ALTER TABLE supersessiond.state SET SCHEMA public`)
	exec(t, db, `ALTER TABLE public.state RENAME TO supersessiond_state`)
	exec(t, db, `CREATE TABLE public.supersessiond_schema_migrations (version_id bigint)`)
	exec(t, db, `CREATE FUNCTION public.supersessiond_attribute_classified() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`)
	exec(t, db, `DROP TRIGGER supersessiond_attribute_classified ON entity_attributes`)
	exec(t, db, `CREATE TRIGGER supersessiond_attribute_classified AFTER INSERT ON entity_attributes FOR EACH ROW EXECUTE FUNCTION public.supersessiond_attribute_classified()`)
	if l := inspect(t, db, schema.ReferencePlan()); l.Reports[schema.Supersession].Runnable() {
		t.Fatal("an earlier release's layout must need migrate")
	}
	res := migrateOK(t, db)
	var value string
	if err := db.Get(&value, `SELECT value->>'agent_id' FROM supersessiond.state WHERE name = 'sweep_cursor'`); err != nil || value != "a" {
		t.Fatalf("the cursor was not kept: %q %v", value, err)
	}
	var leftovers int
	if err := db.Get(&leftovers, `SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE 'supersessiond\_%' AND relkind = 'r')
		+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = 'supersessiond_attribute_classified')`); err != nil || leftovers != 0 {
		t.Fatalf("%d objects of the earlier release left (%v): %v", leftovers, err, res.Changes)
	}
}

// migrate --reference-schema never creates a table that would collide with
// or shadow one the stack has: here a messages table in another schema on
// the search path.
func TestReferenceSchemaRefusesToShadowAStackTable(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	exec(t, db, `CREATE SCHEMA honcho`)
	exec(t, db, `CREATE TABLE honcho.messages (id bigint PRIMARY KEY, content text)`)
	exec(t, db, `ALTER DATABASE `+db.Name+` SET search_path = agent, honcho, public`)
	exec(t, db, `CREATE SCHEMA agent`)
	db.Close()
	db = pgtest.Reopen(t, db)
	plan := planWith(schema.Compaction)
	plan.Schema = "agent"
	_, err := schema.Migrate(context.Background(), db.DB, plan, schema.Options{Reference: true})
	var ce *schema.CollisionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "agent.messages") || !strings.Contains(err.Error(), "honcho.messages") {
		t.Fatalf("want a collision naming both tables, got %v", err)
	}
}

// The stack's own roles: the owner migrates and grants; the runtime role
// has exactly what the jobs need, and check names what it lacks.
func TestGrantAndMissingPrivileges(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	role := "runtime_" + db.Name
	exec(t, db, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() { _, _ = pgtest.Admin(t).Exec(`DROP OWNED BY ` + role + `; DROP ROLE IF EXISTS ` + role) })
	as := pgtest.As(t, db, role)
	l := inspect(t, as, schema.ReferencePlan())
	line := l.Reports[schema.Supersession].Line()
	if l.OK() || !strings.Contains(line, "role "+role+" lacks") || !strings.Contains(line, "supersessiond migrate --grant "+role) {
		t.Fatalf("line: %s", line)
	}
	migrate(t, db, schema.ReferencePlan(), schema.Options{Grant: role})
	if l := inspect(t, as, schema.ReferencePlan()); !l.OK() {
		for _, j := range schema.Jobs {
			t.Logf("%s: %s", j, l.Reports[j].Line())
		}
		t.Fatal("the granted role must pass")
	}
	var canDeleteAttributes bool
	if err := db.Get(&canDeleteAttributes, `SELECT has_table_privilege($1, 'entity_attributes', 'DELETE')`, role); err != nil || canDeleteAttributes {
		t.Fatalf("granted more than the jobs need (DELETE on entity_attributes): %v", err)
	}
}

// What the statements rely on beyond column names: types, the constraints
// of a stack's tables, NOT NULL columns the daemon leaves empty. Where
// adapting is cheap and safe the daemon adapts; otherwise check says what
// is wrong in one line.
func TestCheckTellsTheTruth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  []string
		job    schema.Job
		ok     bool
		expect string
	}{
		{"metadata as text is adapted", []string{
			`DROP INDEX supersessiond_history_one_proposal, supersessiond_history_one_review, supersessiond_history_one_apply,
			   supersessiond_history_one_revert, supersessiond_history_vetoes, supersessiond_history_vetoes_new, supersessiond_history_agent_created,
		supersessiond_history_proposals, supersessiond_history_old_attribute, supersessiond_history_new_attribute`,
			`ALTER TABLE memory_history ALTER COLUMN metadata TYPE text`}, schema.Supersession, true, "metadata is text: read and indexed as jsonb"},
		{"source_ids as text[] is adapted", []string{
			`DROP INDEX supersessiond_documents_source_ids`,
			`ALTER TABLE documents ALTER COLUMN source_ids TYPE text[] USING NULL`}, schema.Tombstones, true, "source_ids text[]"},
		{"source_ids of another type", []string{
			`DROP INDEX supersessiond_documents_source_ids`,
			`ALTER TABLE documents ALTER COLUMN source_ids TYPE text USING NULL`}, schema.Tombstones, false, "source_ids is text, not jsonb or a text array"},
		{"a foreign key on memory_history.memory_id", []string{
			`ALTER TABLE memory_history ADD CONSTRAINT stack_fk FOREIGN KEY (memory_id) REFERENCES memories (id) NOT VALID`},
			schema.Supersession, false, "foreign key stack_fk"},
		{"a partial unique index on idempotency_key is enough", []string{
			`ALTER TABLE memories DROP CONSTRAINT memories_idempotency_key_key`,
			`DROP INDEX IF EXISTS supersessiond_memories_idempotency`,
			`CREATE UNIQUE INDEX stack_idem ON memories (idempotency_key) WHERE idempotency_key IS NOT NULL`}, schema.Compaction, true, ""},
		{"summary_len NOT NULL is fine", []string{
			`UPDATE compaction_events SET summary_len = 0`,
			`ALTER TABLE compaction_events ALTER COLUMN summary_len SET NOT NULL`}, schema.Compaction, true, ""},
		{"a status check without 'failed'", []string{
			`ALTER TABLE compaction_events ADD CONSTRAINT stack_status CHECK (status IN ('pending', 'completed'))`},
			schema.Compaction, false, "refuses status 'failed'"},
		{"a NOT NULL column the daemon does not fill", []string{
			`ALTER TABLE memories ADD COLUMN owner text NOT NULL`}, schema.Compaction, false, "memories.owner is NOT NULL without a default"},
		{"an id that is not text", []string{
			`ALTER TABLE memory_history ALTER COLUMN id TYPE uuid USING gen_random_uuid()`}, schema.Supersession, false, "id is uuid, not text or varchar"},
		{"an embedding that may not be NULL", []string{
			`ALTER TABLE documents ALTER COLUMN embedding SET NOT NULL`}, schema.Tombstones, false, "embedding is NOT NULL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			for _, q := range tc.setup {
				exec(t, db, q)
			}
			if tc.ok {
				migrate(t, db, schema.ReferencePlan(), schema.Options{})
			}
			r := inspect(t, db, schema.ReferencePlan()).Reports[tc.job]
			if r.OK() != tc.ok || !strings.Contains(r.Line(), tc.expect) || strings.Contains(r.Line(), "\n") {
				t.Fatalf("ok=%v, line: %s", r.OK(), r.Line())
			}
		})
	}
}

// clawbolt's compaction tables are recognised in one line: the job there
// only watches, so migrate adds the daemon's own tables and nothing of
// clawbolt's (no column, no index beside its own on triggered_at), and the
// role it grants may only read the events. A configuration with the
// compaction job off passes too.
func TestClawboltIsRecognised(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	pgtest.LoadStack(t, db, "../../testdata/stacks/clawbolt.sql")
	plan := planWith(schema.Compaction)
	plan.Schema = "clawbolt"
	r := inspect(t, db, plan).Reports[schema.Compaction]
	if r.Runnable() || !strings.Contains(r.Line(), "table supersessiond.leases") || len(r.Problems) > 0 {
		t.Fatalf("before migrate: %s", r.Line())
	}
	before := objectsIn(t, db, "clawbolt")
	role := "watcher_" + db.Name
	exec(t, db, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() { _, _ = pgtest.Admin(t).Exec(`DROP OWNED BY ` + role + `; DROP ROLE IF EXISTS ` + role) })
	res := migrate(t, db, plan, schema.Options{Grant: role})
	r = inspect(t, pgtest.As(t, db, role), plan).Reports[schema.Compaction]
	line := r.Line()
	if !r.OK() || !strings.Contains(line, "watching only: this is clawbolt's schema") || !strings.Contains(line, "maintenance.schedules.compactionRetry: off") ||
		!strings.Contains(line, "uses the stack's index ix_compaction_events_triggered_at") || !res.Layout.Names.CompactionWatch {
		t.Fatalf("after migrate, as the granted role: %s", line)
	}
	if after := objectsIn(t, db, "clawbolt"); !maps.Equal(after, before) {
		t.Fatalf("migrate changed clawbolt's schema:\n%v\n%v", keys(after), keys(before))
	}
	var update bool
	if err := db.Get(&update, `SELECT has_any_column_privilege($1, 'clawbolt.compaction_events', 'UPDATE')`, role); err != nil || update {
		t.Fatalf("the watch was granted UPDATE on clawbolt's events (%v)", err)
	}
	plan = planWith()
	plan.Schema = "clawbolt"
	if l := inspect(t, db, plan); !l.OK() {
		t.Fatal("with its jobs off, clawbolt's database passes")
	}
}

// Honcho as it is, in each release shape, in a schema of its own: migrate
// (without --reference-schema) and check pass with the tombstone job alone;
// nothing is created or altered in Honcho's schema but the added column and
// the indexes; the stack's equivalent index is used rather than duplicated;
// Honcho's messages are untouched.
func TestHonchoShapes(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"honcho_pre457", "honcho_superseded", "honcho_edges", "honcho_edges_and_source_ids"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			pgtest.LoadStack(t, db, "../../testdata/stacks/"+shape+".sql")
			plan := planWith(schema.Tombstones)
			plan.Schema = "honcho"
			before := catalog(t, db)
			res := migrate(t, db, plan, schema.Options{})
			if !res.Layout.OK() {
				t.Fatalf("after migrate: %s", res.Layout.Reports[schema.Tombstones].Line())
			}
			after := catalog(t, db)
			for obj := range after {
				own := strings.Contains(obj, " supersessiond.")
				added := strings.HasPrefix(obj, "column honcho.documents.tombstone_preserved_at ") || strings.HasPrefix(obj, "index honcho.supersessiond_")
				if !before[obj] && !own && !added {
					t.Errorf("migrate added %s in Honcho's schema", obj)
				}
				if strings.HasPrefix(obj, "index honcho.supersessiond_documents_source_ids ") && hasIndexOn(before, "gin (source_ids)") ||
					strings.HasPrefix(obj, "index honcho.supersessiond_document_sources") {
					t.Errorf("migrate duplicated an index Honcho has: %s", obj)
				}
			}
			for obj := range before {
				if !after[obj] {
					t.Errorf("migrate removed or changed %s", obj)
				}
			}
			line := res.Layout.Reports[schema.Tombstones].Line()
			if strings.Contains(shape, "edges") && !strings.Contains(line, "edges in honcho.document_sources") {
				t.Errorf("the edge table was not found: %s", line)
			}
			if shape == "honcho_pre457" && !strings.Contains(line, "no superseded_by") {
				t.Errorf("the shape without superseded_by was not recognised: %s", line)
			}
		})
	}
}

func hasIndexOn(objs map[string]bool, def string) bool {
	for obj := range objs {
		if strings.HasPrefix(obj, "index honcho.") && !strings.Contains(obj, ".supersessiond_") && strings.Contains(obj, def) {
			return true
		}
	}
	return false
}

// catalog lists a database's objects in schemas honcho and supersessiond:
// tables, columns with their types, indexes with their definitions,
// constraints and triggers.
func catalog(t *testing.T, db *pgtest.DB) map[string]bool {
	t.Helper()
	var rows []string
	err := db.Select(&rows, `
		SELECT 'table ' || n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('honcho', 'supersessiond') AND c.relkind IN ('r', 'p', 'v')
		UNION ALL
		SELECT 'column ' || n.nspname || '.' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('honcho', 'supersessiond') AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT 'index ' || n.nspname || '.' || c.relname || ' ' || pg_get_indexdef(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'honcho' AND c.relkind = 'i'
		UNION ALL
		SELECT 'constraint ' || con.conname || ' ' || pg_get_constraintdef(con.oid)
		FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace WHERE n.nspname = 'honcho'
		UNION ALL
		SELECT 'trigger ' || tg.tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'honcho' AND NOT tg.tgisinternal`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r] = true
	}
	return out
}

// The LLM judge's tables (SPEC §13): a database migrated before them is
// not runnable, check names both, migrate adds them; the pair cache of an
// earlier release is no longer made, and check does not ask for it.
func TestTheLLMWindowTablesAreMigrated(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	exec(t, db, `DROP TABLE supersessiond.llm_windows, supersessiond.llm_spend`)
	r := inspect(t, db, schema.ReferencePlan()).Reports[schema.Supersession]
	if r.Runnable() || !strings.Contains(r.Line(), "table supersessiond.llm_windows") || !strings.Contains(r.Line(), "table supersessiond.llm_spend") {
		t.Fatalf("line: %s", r.Line())
	}
	migrateOK(t, db)
	if r := inspect(t, db, schema.ReferencePlan()).Reports[schema.Supersession]; !r.Runnable() {
		t.Fatalf("after migrate: %s", r.Line())
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM pg_tables WHERE schemaname = 'supersessiond' AND tablename IN ('llm_windows', 'llm_spend', 'llm_verdicts')`); err != nil || n != 2 {
		t.Fatalf("%d of the LLM's tables, want llm_windows and llm_spend: %v", n, err)
	}
}
