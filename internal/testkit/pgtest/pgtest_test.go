package pgtest

import (
	"context"
	"testing"

	"github.com/supersessiond/supersessiond/internal/schema"
)

func TestMain(m *testing.M) { Main(m) }

func TestEachTestGetsItsOwnMigratedDatabase(t *testing.T) {
	t.Parallel()
	a, b := New(t), New(t)
	if a.Name == b.Name {
		t.Fatal("databases must differ")
	}
	if _, err := a.Exec(`INSERT INTO memories (id, content) VALUES ('m1', 'x')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.Get(&n, `SELECT count(*) FROM memories`); err != nil || n != 0 {
		t.Fatalf("b sees a's rows: n=%d err=%v", n, err)
	}
	layout, err := schema.Inspect(context.Background(), a.DB, schema.ReferencePlan())
	if err != nil || !layout.OK() {
		t.Fatalf("template is not fully migrated: %v %+v", err, layout)
	}
}

func TestEmptyDatabaseHasNothing(t *testing.T) {
	t.Parallel()
	e := NewEmpty(t)
	var n int
	if err := e.Get(&n, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); err != nil || n != 0 {
		t.Fatalf("want no tables, n=%d err=%v", n, err)
	}
}
