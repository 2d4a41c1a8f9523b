package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// daemonObjects lists what of the daemon's is in the database: its schema,
// indexes named supersessiond_*, its trigger and trigger functions.
func daemonObjects(t *testing.T, db *sqlx.DB) []string {
	t.Helper()
	var out []string
	err := db.Select(&out, `
		SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname = 'supersessiond'
		UNION ALL SELECT 'index ' || schemaname || '.' || indexname FROM pg_indexes WHERE indexname LIKE 'supersessiond\_%'
		UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE tgname LIKE 'supersessiond\_%'
		UNION ALL SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		  WHERE p.proname IN ('attribute_classified', 'supersessiond_attribute_classified')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// agentSums is tableSums for the agent's schema only (the daemon's own
// schema is what --remove drops).
func agentSums(t *testing.T, db *sqlx.DB, schema string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range tableSums(t, db) {
		if strings.HasPrefix(k, schema+".") {
			out[k] = v
		}
	}
	if len(out) == 0 {
		t.Fatalf("no table in schema %s", schema)
	}
	return out
}

// On the reference schema: --remove drops the daemon's schema, trigger,
// function and indexes, keeps the added columns and every row of the
// agent's, refuses an index that only looks like the daemon's, is
// idempotent; and migrate then restores a daemon that works.
func TestMigrateRemoveOnTheReferenceSchema(t *testing.T) {
	t.Parallel()
	db, s, c := seedCLI(t)
	if code, _, errOut := c.run("", "sweep", "--once"); code != 0 {
		t.Fatalf("sweep: %s", errOut)
	}
	s.Exec(`CREATE INDEX supersessiond_by_hand ON entity_attributes (content)`)
	before := agentSums(t, db.DB, "public")
	if objs := daemonObjects(t, db.DB); len(objs) < 15 {
		t.Fatalf("the migrated database holds only %v", objs)
	}

	code, out, errOut := c.run("", "migrate", "--remove")
	if code != 0 {
		t.Fatalf("migrate --remove: exit %d\n%s%s", code, out, errOut)
	}
	if left := daemonObjects(t, db.DB); !slices.Equal(left, []string{"index public.supersessiond_by_hand"}) {
		t.Fatalf("left after --remove: %v\n%s", left, out)
	}
	for _, want := range []string{"drop trigger supersessiond_attribute_classified on public.entity_attributes",
		"drop function supersessiond.attribute_classified()", "drop index supersessiond_history_one_proposal on public.memory_history",
		"drop table supersessiond.state", "drop schema supersessiond",
		"index supersessiond_by_hand on public.entity_attributes: named like the daemon's, but not one migrate creates there; not dropped",
		"rows the daemon wrote in public.memory_history"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  column ") {
			kept = append(kept, strings.Fields(l)[1][:len(strings.Fields(l)[1])-1])
		}
	}
	slices.Sort(kept)
	want := []string{"public.compaction_events.completed_at", "public.compaction_events.last_error", "public.compaction_events.next_attempt_at",
		"public.documents.tombstone_preserved_at", "public.entity_attributes.protected", "public.entity_attributes.superseded_at"}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept columns %v, want exactly SPEC §4's added ones %v", kept, want)
	}
	if after := agentSums(t, db.DB, "public"); !maps.Equal(before, after) {
		t.Fatalf("the agent's data changed:\n%v\n%v", before, after)
	}

	code, out, errOut = c.run("", "migrate", "--remove")
	if code != 0 || !strings.Contains(out, "nothing to remove") {
		t.Fatalf("a second --remove: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := c.run("", "check"); code != exitUnavailable || !strings.Contains(out, "needs `supersessiond migrate`") {
		t.Fatalf("check after --remove: exit %d\n%s", code, out)
	}

	// migrate restores a working daemon: check passes, the trigger feeds the
	// outbox, a sweep supersedes.
	if code, out, errOut := c.run("", "migrate"); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := c.run("", "check"); code != 0 {
		t.Fatalf("check after migrate: exit %d\n%s%s", code, out, errOut)
	}
	s.Add(memtest.Attr{ID: "a3", Agent: "a", Aspect: s.Aspect("a", "Sam", "home"), Content: "Lives in Lisbon"})
	if n := s.Count(`SELECT count(*) FROM supersessiond.classified WHERE attribute_id = 'a3'`); n != 1 {
		t.Fatalf("the trigger did not record the classification (%d rows)", n)
	}
	if code, _, errOut := c.run("", "sweep", "--once"); code != 0 {
		t.Fatalf("sweep after migrate: %s", errOut)
	}
	if st, by := s.Status("a2"); st != "superseded" || by != "a3" {
		t.Fatalf("a2 is %s by %q after the sweep", st, by)
	}

	// An own schema that holds the agent's tables is refused, untouched.
	pub := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MAINTENANCE__DATABASE__OWNSCHEMA=public")
	code, _, errOut = pub.run("", "migrate", "--remove")
	if code != exitRefused || !strings.Contains(errOut, "ownSchema is public") {
		t.Fatalf("--remove with ownSchema public: exit %d: %s", code, errOut)
	}
	if code, _, _ := c.run("", "migrate", "--remove", "--grant", "x"); code != exitUsage {
		t.Fatal("--remove with --grant is a usage error")
	}
}

// Beside Honcho: --remove drops the daemon's schema and its indexes on
// Honcho's documents, keeps Honcho's own indexes, tombstone_preserved_at
// and every row; migrate then restores a tombstones job that runs.
func TestMigrateRemoveBesideHoncho(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"honcho_superseded", "honcho_edges_and_source_ids"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			pgtest.LoadStack(t, db, "../../testdata/stacks/"+shape+".sql")
			cfg := "../../examples/honcho/agent.yaml"
			c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MAINTENANCE__DATABASE__SCHEMA=honcho")
			if code, out, errOut := c.run("", "migrate", "--config", cfg); code != 0 {
				t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
			}
			var honchoIndexes []string
			if err := db.Select(&honchoIndexes, `SELECT indexname FROM pg_indexes WHERE schemaname = 'honcho' AND indexname NOT LIKE 'supersessiond\_%' ORDER BY 1`); err != nil {
				t.Fatal(err)
			}
			before, messages := agentSums(t, db.DB, "honcho"), messagesDigest(t, db)

			code, out, errOut := c.run("", "migrate", "--remove", "--config", cfg)
			if code != 0 {
				t.Fatalf("migrate --remove: exit %d\n%s%s", code, out, errOut)
			}
			if left := daemonObjects(t, db.DB); len(left) != 0 {
				t.Fatalf("left after --remove: %v\n%s", left, out)
			}
			if !strings.Contains(out, "drop index supersessiond_documents_tombstones on honcho.documents") ||
				!strings.Contains(out, "column honcho.documents.tombstone_preserved_at, with its data") || strings.Count(out, "  column ") != 1 {
				t.Fatalf("output:\n%s", out)
			}
			var after []string
			if err := db.Select(&after, `SELECT indexname FROM pg_indexes WHERE schemaname = 'honcho' ORDER BY 1`); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(after, honchoIndexes) {
				t.Fatalf("Honcho's indexes %v, want %v", after, honchoIndexes)
			}
			if !maps.Equal(before, agentSums(t, db.DB, "honcho")) || messagesDigest(t, db) != messages {
				t.Fatal("Honcho's data changed")
			}
			for _, cmd := range [][]string{{"migrate"}, {"check"}, {"reconcile", "--once"}} {
				if code, out, errOut := c.run("", append(cmd, "--config", cfg)...); code != 0 {
					t.Fatalf("%v after --remove: exit %d\n%s%s", cmd, code, out, errOut)
				}
			}
		})
	}
}
