package schema_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
)

// storePlan is the supersession job alone, on a store.
func storePlan(store schema.Store, schemaName string) schema.Plan {
	p := planWith(schema.Supersession)
	p.Store, p.Schema, p.HonchoLevels = store, schemaName, []string{"explicit"}
	return p
}

// migrated reports whether a store's job has everything it needs in the
// database: nothing missing, nothing for migrate to add, and check says
// which store it runs on.
func migrated(t *testing.T, l *schema.Layout) string {
	t.Helper()
	r := l.Reports[schema.Supersession]
	line := r.Line()
	if !r.OK() || len(r.Later) != 0 || !strings.HasPrefix(line, "ok (store ") {
		t.Fatalf("after migrate: %s", line)
	}
	return line
}

func changes(t *testing.T, db *pgtest.DB) []string {
	t.Helper()
	var got []string
	if err := db.Select(&got, `SELECT agent_id || ' ' || aspect_id || ' ' || attribute_id FROM supersessiond.changes ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	exec(t, db, `DELETE FROM supersessiond.changes`)
	return got
}

// objectsIn lists a schema's objects: tables, columns with their types,
// indexes with their definitions, constraints, triggers and functions.
func objectsIn(t *testing.T, db *pgtest.DB, schemaName string) map[string]bool {
	t.Helper()
	var rows []string
	err := db.Select(&rows, `
		SELECT 'table ' || n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v')
		UNION ALL
		SELECT 'column ' || n.nspname || '.' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT 'index ' || n.nspname || '.' || c.relname || ' ' || pg_get_indexdef(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'i'
		UNION ALL
		SELECT 'constraint ' || con.conname || ' ' || pg_get_constraintdef(con.oid)
		FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace WHERE n.nspname = $1
		UNION ALL
		SELECT 'trigger ' || tg.tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND NOT tg.tgisinternal
		UNION ALL
		SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`, schemaName)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r] = true
	}
	return out
}

// Honcho's documents as the store, on each release's shape: check names
// the store and what migrate must add; migrate adds an index and a change
// trigger on documents, the daemon's own history beside its other tables,
// and never a column; a second run changes nothing; the trigger records
// what may call for a decision; remove leaves Honcho's schema as it was.
func TestHonchoStore(t *testing.T) {
	t.Parallel()
	for _, sources := range []bool{false, true} {
		t.Run(map[bool]string{false: "source_ids", true: "document_sources"}[sources], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			ctx := context.Background()
			h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Sources: sources, Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			plan := storePlan(schema.StoreHoncho, "honcho")
			before := objectsIn(t, db, "honcho")
			r := inspect(t, db, plan).Reports[schema.Supersession]
			if r.Runnable() || !strings.Contains(r.Line(), "index supersessiond_documents_live_scope on honcho.documents") ||
				!strings.Contains(r.Line(), "the change trigger supersessiond_store_changed on honcho.documents") ||
				!strings.Contains(r.Line(), "table supersessiond.history") {
				t.Fatalf("before migrate: %s", r.Line())
			}
			line := migrated(t, migrate(t, db, plan, schema.Options{}).Layout)
			citations := "citations in source_ids"
			if sources {
				citations = "citations in honcho.document_sources"
			}
			if !strings.Contains(line, "store honcho: Honcho's documents (honcho.documents)") ||
				!strings.Contains(line, "levels explicit") || !strings.Contains(line, citations) ||
				!strings.Contains(line, "its history in supersessiond.history") {
				t.Fatalf("after migrate: %s", line)
			}
			if again := migrate(t, db, plan, schema.Options{}); len(again.Changes) != 0 {
				t.Fatalf("a second migrate changed %v", again.Changes)
			}
			for obj := range objectsIn(t, db, "honcho") {
				if !before[obj] && !strings.HasPrefix(obj, "index honcho.supersessiond_") && obj != "trigger supersessiond_store_changed" {
					t.Errorf("migrate added %s to Honcho's schema", obj)
				}
			}
			honchoTrigger(t, db, h)
			maps.DeleteFunc(before, func(obj string, _ bool) bool { return strings.Contains(obj, "source_ids") }) // Honcho dropped it meanwhile

			exec(t, db, `INSERT INTO supersessiond.history (id, memory_id, event, changed_by, metadata)
				VALUES ('h1', 'doc', 'supersession_proposal', 'supersessiond:sweep', '{"agent_id": "acme"}')`)
			removal, err := schema.Remove(ctx, db.DB, plan)
			if err != nil {
				t.Fatal(err)
			}
			if after := objectsIn(t, db, "honcho"); !maps.Equal(after, before) {
				t.Fatalf("after remove, Honcho's schema differs:\n%v\n%v", keys(after), keys(before))
			}
			if kept := strings.Join(removal.Kept, "\n"); !strings.Contains(kept, "table supersessiond.history") || !strings.Contains(kept, "1 events") {
				t.Fatalf("the store's history must be kept while it holds rows: %v", removal.Kept)
			}
			exec(t, db, `DELETE FROM supersessiond.history`)
			if _, err := schema.Remove(ctx, db.DB, plan); err != nil {
				t.Fatal(err)
			}
			var left bool
			if err := db.Get(&left, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'supersessiond')
				OR EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'document_changed')`); err != nil || left {
				t.Fatalf("remove left the own schema or the trigger's function (%v)", err)
			}
		})
	}
}

// honchoTrigger: what Honcho does to its documents, and what the change
// trigger records of it: inserts, edits, a restore; not a soft delete, not
// its reconciler's bookkeeping. Honcho's own next migration (dropping
// source_ids) is not stopped by the trigger.
func honchoTrigger(t *testing.T, db *pgtest.DB, h *storetest.Honcho) {
	ctx := context.Background()
	ids, err := h.Observe(ctx, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "sam lives in Toronto"},
		storetest.Observation{Workspace: "acme", Observer: "assistant", Observed: "sam", Content: "sam likes tea"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`acme ["sam", "sam"] ` + ids[0], `acme ["assistant", "sam"] ` + ids[1]}
	if got := changes(t, db); !slices.Equal(got, want) {
		t.Fatalf("inserts recorded %v, want %v", got, want)
	}
	steps := []struct {
		stmt     string
		recorded bool
	}{
		{`UPDATE honcho.documents SET sync_state = 'synced', last_sync_at = now() WHERE id = $1`, false},
		{`UPDATE honcho.documents SET times_derived = times_derived + 1 WHERE id = $1`, false},
		{`UPDATE honcho.documents SET content = 'sam lives in Toronto, Canada' WHERE id = $1`, true},
		{`UPDATE honcho.documents SET deleted_at = now() WHERE id = $1`, false},
		{`UPDATE honcho.documents SET deleted_at = NULL, sync_state = 'pending' WHERE id = $1`, true},
		{`UPDATE honcho.documents SET level = 'deductive' WHERE id = $1`, true},
	}
	for _, st := range steps {
		if _, err := db.Exec(st.stmt, ids[0]); err != nil {
			t.Fatal(err)
		}
		if got := changes(t, db); len(got) != map[bool]int{true: 1, false: 0}[st.recorded] {
			t.Errorf("%s: recorded %v", st.stmt, got)
		}
	}
	exec(t, db, `ALTER TABLE honcho.documents DROP COLUMN source_ids`)
	exec(t, db, `INSERT INTO honcho.documents (id, content, observer, observed, workspace_name, session_name)
		VALUES ('kayak________________', 'sam owns a kayak', 'sam', 'sam', 'acme', 'session')`)
	if got := changes(t, db); len(got) != 1 {
		t.Fatalf("recorded %v", got)
	}
}

// mem0's collection as the store: the same, on mem0's table in public.
func TestMem0Store(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	ctx := context.Background()
	m, err := storetest.CreateMem0(ctx, db.DB, storetest.Mem0Shape{Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	plan := storePlan(schema.StoreMem0, "")
	before := objectsIn(t, db, "public")
	line := migrated(t, migrate(t, db, plan, schema.Options{}).Layout)
	if !strings.Contains(line, "store mem0: mem0's collection (public.mem0)") || !strings.Contains(line, "supersessiond.history") {
		t.Fatalf("after migrate: %s", line)
	}
	if again := migrate(t, db, plan, schema.Options{}); len(again.Changes) != 0 {
		t.Fatalf("a second migrate changed %v", again.Changes)
	}
	for obj := range objectsIn(t, db, "public") {
		if !before[obj] && obj != "index public.supersessiond_mem0_scope CREATE INDEX supersessiond_mem0_scope ON public.mem0 USING btree "+
			"(COALESCE((payload ->> 'user_id'::text), ''::text), COALESCE((payload ->> 'agent_id'::text), ''::text), "+
			"COALESCE((payload ->> 'run_id'::text), ''::text), id)" &&
			obj != "index public.supersessiond_mem0_id_text CREATE INDEX supersessiond_mem0_id_text ON public.mem0 USING btree (((id)::text))" &&
			obj != "trigger supersessiond_store_changed" {
			t.Errorf("migrate added %s to mem0's schema", obj)
		}
	}
	ids, err := m.Add(ctx, storetest.Memory{Data: "Lives in Toronto", UserID: "alice"},
		storetest.Memory{Data: "Prefers aisle seats", AgentID: "travel-bot", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`alice ["alice", null, null] ` + ids[0], `travel-bot [null, "travel-bot", "r1"] ` + ids[1]}
	if got := changes(t, db); !slices.Equal(got, want) {
		t.Fatalf("inserts recorded %v, want %v", got, want)
	}
	if err := m.Update(ctx, ids[0], "Lives in Vancouver"); err != nil {
		t.Fatal(err)
	}
	exec(t, db, `UPDATE mem0 SET payload = payload || '{"category": "home"}' WHERE payload ->> 'user_id' = 'alice'`)
	if _, err := m.Delete(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if got := changes(t, db); len(got) != 1 || !strings.HasSuffix(got[0], ids[0]) {
		t.Fatalf("an update of the text, a metadata edit and a delete recorded %v, want the update alone", got)
	}
	if _, err := schema.Remove(ctx, db.DB, plan); err != nil {
		t.Fatal(err)
	}
	if after := objectsIn(t, db, "public"); !maps.Equal(after, before) {
		t.Fatalf("after remove, mem0's schema differs:\n%v\n%v", keys(after), keys(before))
	}
}

// When the configured store is not in the database, check says what it
// found there and which setting to change.
func TestCheckNamesTheStoreItFinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	honcho := pgtest.NewEmpty(t)
	if _, err := storetest.CreateHoncho(ctx, honcho.DB, storetest.HonchoShape{Schema: "honcho", Dims: 4}); err != nil {
		t.Fatal(err)
	}
	mem0 := pgtest.NewEmpty(t)
	if _, err := storetest.CreateMem0(ctx, mem0.DB, storetest.Mem0Shape{Dims: 4}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		db     *pgtest.DB
		plan   schema.Plan
		expect []string
	}{
		{"attributes on Honcho", honcho, storePlan(schema.StoreAttributes, "honcho"),
			[]string{"table entity_attributes not found in schema honcho", "it has Honcho's documents (honcho.documents): set maintenance.supersession.store: honcho"}},
		{"honcho on mem0", mem0, storePlan(schema.StoreHoncho, ""),
			[]string{"maintenance.supersession.store: honcho: table documents not found", "it has mem0's collection (public.mem0): set maintenance.supersession.store: mem0"}},
		{"mem0 on Honcho", honcho, storePlan(schema.StoreMem0, "honcho"),
			[]string{"maintenance.supersession.store: mem0: table mem0 not found in schema honcho", "set maintenance.supersession.store: honcho"}},
		{"attributes on the reference schema", pgtest.New(t), schema.ReferencePlan(), []string{"ok (store attributes: the attribute graph (public.entity_attributes)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			line := inspect(t, tc.db, tc.plan).Reports[schema.Supersession].Line()
			for _, e := range tc.expect {
				if !strings.Contains(line, e) {
					t.Fatalf("%q not in: %s", e, line)
				}
			}
		})
	}
}

// The runtime role gets what a store needs and no more: Honcho's documents
// are never deleted by the supersession job.
func TestGrantForAStore(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	if _, err := storetest.CreateHoncho(context.Background(), db.DB, storetest.HonchoShape{Sources: true, Dims: 4}); err != nil {
		t.Fatal(err)
	}
	role := "runtime_" + db.Name
	exec(t, db, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() { _, _ = pgtest.Admin(t).Exec(`DROP OWNED BY ` + role + `; DROP ROLE IF EXISTS ` + role) })
	plan := storePlan(schema.StoreHoncho, "")
	as := pgtest.As(t, db, role)
	if line := inspect(t, as, plan).Reports[schema.Supersession].Line(); !strings.Contains(line, "lacks SELECT, INSERT on public.document_sources") {
		t.Fatalf("before migrate: %s", line)
	}
	migrate(t, db, plan, schema.Options{Grant: role})
	migrated(t, inspect(t, as, plan))
	var del, insertEdges bool
	if err := db.Get(&del, `SELECT has_table_privilege($1, 'documents', 'DELETE')`, role); err != nil || del {
		t.Fatalf("granted DELETE on documents to the supersession job (%v)", err)
	}
	if err := db.Get(&insertEdges, `SELECT has_table_privilege($1, 'document_sources', 'INSERT')`, role); err != nil || !insertEdges {
		t.Fatalf("undo re-inserts a document's edges: INSERT on document_sources not granted (%v)", err)
	}
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
