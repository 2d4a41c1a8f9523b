package schema_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/supersessiond/supersessiond/pgtest"
	"github.com/supersessiond/supersessiond/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrateReferenceTwiceOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	if err := schema.Check(ctx, db.DB); err == nil {
		t.Fatal("check must fail before migrating")
	}
	first, err := schema.Migrate(ctx, db.DB, schema.Options{Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ReferenceCreated) != 8 || len(first.Applied) == 0 || first.Version != schema.LatestVersion() {
		t.Fatalf("first run: %+v", first)
	}
	second, err := schema.Migrate(ctx, db.DB, schema.Options{Reference: true})
	if err != nil {
		t.Fatalf("second run must succeed: %v", err)
	}
	if len(second.ReferenceCreated) != 0 || len(second.Applied) != 0 {
		t.Fatalf("second run must do nothing: %+v", second)
	}
	if err := schema.Check(ctx, db.DB); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateWithoutAgentTablesNamesThem(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	_, err := schema.Migrate(context.Background(), db.DB, schema.Options{})
	var se *schema.SchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "table entity_attributes") || !strings.Contains(err.Error(), "--reference-schema") {
		t.Fatalf("want a SchemaError naming tables and the fix, got %v", err)
	}
}

func TestCheckNamesMissingColumnAndSaysMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := db.Exec(`ALTER TABLE entity_attributes DROP COLUMN protected`); err != nil {
		t.Fatal(err)
	}
	err := schema.Check(ctx, db.DB)
	if err == nil || !strings.Contains(err.Error(), "column entity_attributes.protected") || !strings.Contains(err.Error(), "supersessiond migrate") {
		t.Fatalf("got %v", err)
	}
}

// An agent database that already has some of the added columns (say, from a
// hand-run script) migrates cleanly.
func TestMigrateToleratesPartlyPreparedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	if _, err := db.Exec(`CREATE TABLE entities (id text PRIMARY KEY, agent_id text NOT NULL DEFAULT 'default', name text NOT NULL,
		entity_type text NOT NULL DEFAULT 'person', created_at timestamptz NOT NULL DEFAULT now(),
		updated_at timestamptz NOT NULL DEFAULT now(), UNIQUE(agent_id, name))`); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, db.DB, schema.Options{Reference: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ALTER TABLE documents DROP COLUMN tombstone_preserved_at`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM ` + schema.VersionTable + ` WHERE version_id > 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, db.DB, schema.Options{}); err != nil {
		t.Fatalf("re-applying over existing objects must work: %v", err)
	}
	if err := schema.Check(ctx, db.DB); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentMigrationsSerialise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = schema.Migrate(ctx, db.DB, schema.Options{Reference: true}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migration %d: %v", i, err)
		}
	}
	if err := schema.Check(ctx, db.DB); err != nil {
		t.Fatal(err)
	}
}

// The trigger feeds the inline hook's outbox when an attribute gets its
// aspect_id, and only then.
func TestClassificationTriggerFillsOutbox(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	mustExec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(`INSERT INTO entities (id, agent_id, name) VALUES ('e1', 'a', 'Sam')`)
	mustExec(`INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES ('asp1', 'e1', 'a', 'home', 'home'), ('asp2', 'e1', 'a', 'work', 'work')`)
	mustExec(`INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content) VALUES ('x1', 'a', 'attribute', 'Lives in Oslo', 'lives in oslo')`)
	mustExec(`INSERT INTO entity_attributes (id, agent_id, aspect_id, kind, content, normalized_content) VALUES ('x2', 'a', 'asp1', 'attribute', 'Lives in Rome', 'lives in rome')`)
	mustExec(`UPDATE entity_attributes SET aspect_id = 'asp1' WHERE id = 'x1'`)
	mustExec(`UPDATE entity_attributes SET content = 'Lives in Oslo, Norway' WHERE id = 'x1'`) // not a classification
	mustExec(`UPDATE entity_attributes SET aspect_id = 'asp2' WHERE id = 'x1'`)                // reclassified
	var got []string
	if err := db.Select(&got, `SELECT attribute_id || ':' || aspect_id FROM supersessiond_classified ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	want := "x2:asp1,x1:asp1,x1:asp2"
	if strings.Join(got, ",") != want {
		t.Fatalf("outbox = %v, want %s", got, want)
	}
}
