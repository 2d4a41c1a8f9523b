package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
)

// documentState is each document's fate so far: live, tombstone (soft-
// deleted, not preserved), preserved (with whether its embedding is gone),
// or absent.
func documentState(t *testing.T, db *pgtest.DB, schema string) map[string]string {
	t.Helper()
	var rows []struct {
		ID        string `db:"id"`
		State     string `db:"state"`
		Embedding bool   `db:"has_embedding"`
	}
	err := db.Select(&rows, `SELECT id, CASE WHEN deleted_at IS NULL THEN 'live'
		WHEN tombstone_preserved_at IS NULL THEN 'tombstone' ELSE 'preserved' END AS state,
		embedding IS NOT NULL AS has_embedding FROM `+schema+`.documents`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = r.State
		if r.State == "preserved" && r.Embedding {
			out[r.ID] = "preserved with its embedding"
		}
	}
	return out
}

func messagesDigest(t *testing.T, db *pgtest.DB) string {
	t.Helper()
	var d string
	if err := db.Get(&d, `SELECT md5(string_agg(m::text, ',' ORDER BY m.id)) FROM honcho.messages m`); err != nil {
		t.Fatal(err)
	}
	return d
}

// Beside Honcho, every release shape, with examples/honcho/agent.yaml as
// shipped (Honcho's tables in a schema of their own here): migrate and
// check pass; a shadow pass changes nothing; a live pass preserves exactly
// the cited tombstones (embedding NULL, marked once) and deletes the rest;
// a second pass changes nothing; Honcho's messages are untouched.
func TestBesideHoncho(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"honcho_pre457", "honcho_superseded", "honcho_edges", "honcho_edges_and_source_ids"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			st := pgtest.LoadStack(t, db, "../../testdata/stacks/"+shape+".sql")
			env := []string{"SUPERSESSIOND_DATABASE_URL=" + db.URL, "SUPERSESSIOND_MAINTENANCE__DATABASE__SCHEMA=honcho",
				// The fixture's expectations assume minAge 5m (two tombstones are younger).
				"SUPERSESSIOND_MAINTENANCE__TOMBSTONES__MINAGE=5m"}
			cfg := "../../examples/honcho/agent.yaml"
			c := newCLI(t, env...)
			for _, cmd := range [][]string{{"migrate"}, {"check"}} {
				if code, out, errOut := c.run("", append(cmd, "--config", cfg)...); code != 0 {
					t.Fatalf("%v: exit %d\n%s%s", cmd, code, out, errOut)
				}
			}
			messages := messagesDigest(t, db)
			before := documentState(t, db, "honcho")
			code, out, errOut := c.run("", "reconcile", "--once", "--json", "--config", cfg)
			var shadow struct {
				WouldPreserve int `json:"would_preserve"`
				WouldDelete   int `json:"would_delete"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &shadow) != nil {
				t.Fatalf("shadow reconcile: exit %d\n%s%s", code, out, errOut)
			}
			if after := documentState(t, db, "honcho"); !maps.Equal(before, after) {
				t.Fatal("the shadow pass changed documents")
			}
			if shadow.WouldPreserve != len(st.Expect["preserved"]) || shadow.WouldDelete != len(st.Expect["deleted"]) {
				t.Fatalf("shadow: would preserve %d and delete %d, want %d and %d", shadow.WouldPreserve, shadow.WouldDelete,
					len(st.Expect["preserved"]), len(st.Expect["deleted"]))
			}

			live := newCLI(t, append(env, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=false")...)
			if code, out, errOut := live.run("", "reconcile", "--once", "--config", cfg); code != 0 {
				t.Fatalf("live reconcile: exit %d\n%s%s", code, out, errOut)
			}
			after := documentState(t, db, "honcho")
			for _, id := range st.Expect["preserved"] {
				if after[id] != "preserved" {
					t.Errorf("%s: %q, want preserved (embedding NULL)", id, after[id])
				}
			}
			for _, id := range st.Expect["deleted"] {
				if s, ok := after[id]; ok {
					t.Errorf("%s: %q, want deleted", id, s)
				}
			}
			for _, id := range st.Expect["untouched"] {
				if after[id] != "tombstone" {
					t.Errorf("%s: %q, want untouched (younger than minAge)", id, after[id])
				}
			}
			var marks []string
			if err := db.Select(&marks, `SELECT id || tombstone_preserved_at::text FROM honcho.documents WHERE tombstone_preserved_at IS NOT NULL ORDER BY 1`); err != nil {
				t.Fatal(err)
			}
			if code, out, errOut := live.run("", "reconcile", "--once", "--config", cfg); code != 0 {
				t.Fatalf("second live reconcile: exit %d\n%s%s", code, out, errOut)
			}
			var again []string
			if err := db.Select(&again, `SELECT id || tombstone_preserved_at::text FROM honcho.documents WHERE tombstone_preserved_at IS NOT NULL ORDER BY 1`); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(marks, again) || !maps.Equal(after, documentState(t, db, "honcho")) {
				t.Fatal("a second pass changed what the first decided")
			}
			if messagesDigest(t, db) != messages {
				t.Fatal("Honcho's messages changed")
			}
		})
	}
}

// clawbolt: with examples/clawbolt/agent.yaml as shipped, check says in one
// line what it found (clawbolt's schema, which the daemon cannot
// re-compact), that the job only watches and which setting stops it;
// migrate adds the daemon's own tables and nothing of clawbolt's; compact
// --once --json lists the events pending past staleAfter and at clawbolt's
// retry cap, and changes nothing.
func TestBesideClawbolt(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	pgtest.LoadStack(t, db, "../../testdata/stacks/clawbolt.sql")
	env := []string{"SUPERSESSIOND_DATABASE_URL=" + db.URL, "SUPERSESSIOND_MAINTENANCE__DATABASE__SCHEMA=clawbolt"}
	cfg := "../../examples/clawbolt/agent.yaml"
	c := newCLI(t, env...)
	if code, out, _ := c.run("", "check", "--config", cfg); code != exitUnavailable || !strings.Contains(out, "needs `supersessiond migrate`") {
		t.Fatalf("check before migrate: exit %d\n%s", code, out)
	}
	if code, out, errOut := c.run("", "migrate", "--config", cfg); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	var events string
	if err := db.Get(&events, `SELECT json_agg(c ORDER BY id)::text FROM clawbolt.compaction_events c`); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("", "check", "--config", cfg)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "compaction ") {
			line = l
		}
	}
	if code != 0 || !strings.Contains(line, "clawbolt's schema") || !strings.Contains(line, "watching only") || !strings.Contains(line, "compactionRetry: off") {
		t.Fatalf("check: exit %d, compaction line %q\n%s%s", code, line, out, errOut)
	}
	code, out, errOut = c.run("", "compact", "--once", "--json", "--config", cfg)
	var rep struct {
		Claimed int `json:"claimed"`
		Watch   struct {
			Stale      int `json:"stale"`
			AtStackCap int `json:"at_stack_cap"`
			Events     []struct {
				EventID    int64 `json:"event_id"`
				AtStackCap bool  `json:"at_stack_cap"`
			} `json:"events"`
		} `json:"watch"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("compact --once --json: exit %d (%v)\n%s%s", code, err, out, errOut)
	}
	if rep.Watch.Stale != 3 || rep.Watch.AtStackCap != 1 || len(rep.Watch.Events) != 3 || !rep.Watch.Events[0].AtStackCap || rep.Claimed != 0 {
		t.Fatalf("the watch: %s", out)
	}
	var after string
	if err := db.Get(&after, `SELECT json_agg(c ORDER BY id)::text FROM clawbolt.compaction_events c`); err != nil || after != events {
		t.Fatalf("the watch changed clawbolt's events (%v)", err)
	}
}

// A stack with only the supersession tables (a Signet-style memory graph in
// PostgreSQL): with the other jobs off, migrate creates and adds nothing for
// them, check passes, and sweep --once runs.
func TestSupersessionOnlyStack(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	cfg := writeConfig(t, "maintenance:\n  schedules:\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n")
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)
	for _, cmd := range [][]string{{"migrate", "--reference-schema"}, {"check"}} {
		if code, out, errOut := c.run("", append(cmd, "--config", cfg)...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
	var others int
	if err := db.Get(&others, `SELECT count(*) FROM pg_class WHERE relname IN ('documents', 'compaction_events', 'messages')`); err != nil || others != 0 {
		t.Fatalf("%d tables of jobs that are off were created (%v)", others, err)
	}
	for _, q := range []string{
		`INSERT INTO entities (id, agent_id, name) VALUES ('e', 'a', 'Sam')`,
		`INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES ('home', 'e', 'a', 'home', 'home')`,
		`INSERT INTO entity_attributes (id, aspect_id, agent_id, kind, content, normalized_content, created_at) VALUES
			('h1', 'home', 'a', 'attribute', 'Lives in Toronto', 'lives in toronto', now() - interval '2 days'),
			('h2', 'home', 'a', 'attribute', 'Lives in Vancouver', 'lives in vancouver', now() - interval '1 day')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := c.run("", "sweep", "--once", "--config", cfg)
	if code != 0 || !strings.Contains(out, "supersessions  1") {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = c.run("", "compact", "--once", "--config", cfg)
	if code != 0 || !strings.Contains(out, "nothing done: maintenance.schedules.compactionRetry is off") {
		t.Fatalf("compact with the job off: exit %d: %s", code, out)
	}
}

// examples/honcho and examples/mem0 as shipped, on fresh databases shaped
// like each stack (storetest's, from the stacks' code): migrate prepares
// the store, check says which store it found and exits 0, a shadow sweep
// proposes the contradiction a stack wrote, and migrate --remove leaves the
// stack's schema as it was.
func TestExamplesOnStoreFixtures(t *testing.T) {
	t.Parallel()
	t0 := time.Now().Add(-time.Hour)
	cases := []struct {
		name, example string
		create        func(*testing.T, *pgtest.DB)
		found         string
	}{
		{"honcho", "../../examples/honcho/agent.yaml", func(t *testing.T, db *pgtest.DB) {
			h, err := storetest.CreateHoncho(context.Background(), db.DB, storetest.HonchoShape{Sources: true})
			if err == nil {
				_, err = h.Observe(context.Background(), storetest.Observation{Content: "Lives in Toronto", CreatedAt: t0},
					storetest.Observation{Content: "Lives in Halifax", CreatedAt: t0.Add(time.Minute)})
			}
			if err != nil {
				t.Fatal(err)
			}
		}, "store honcho: Honcho's documents (public.documents)"},
		{"mem0", "../../examples/mem0/agent.yaml", func(t *testing.T, db *pgtest.DB) {
			m, err := storetest.CreateMem0(context.Background(), db.DB, storetest.Mem0Shape{})
			if err == nil {
				_, err = m.Add(context.Background(), storetest.Memory{Data: "Lives in Toronto", UserID: "alice", CreatedAt: t0},
					storetest.Memory{Data: "Lives in Halifax", UserID: "alice", CreatedAt: t0.Add(time.Minute)})
			}
			if err != nil {
				t.Fatal(err)
			}
		}, "store mem0: mem0's collection (public.mem0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			tc.create(t, db)
			var before string
			if err := db.Get(&before, catalogDigest); err != nil {
				t.Fatal(err)
			}
			c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)
			if code, out, errOut := c.run("", "migrate", "--config", tc.example); code != 0 || !strings.Contains(out, "create trigger supersessiond_store_changed") {
				t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut := c.run("", "check", "--config", tc.example); code != 0 || !strings.Contains(out, "supersession  ok ("+tc.found) {
				t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut := c.run("", "sweep", "--once", "--json", "--config", tc.example); code != 0 || !strings.Contains(out, `"proposals_shadow":1`) {
				t.Fatalf("sweep --once: exit %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut := c.run("", "proposals", "--config", tc.example); code != 0 || !strings.Contains(out, "Lives in Halifax") {
				t.Fatalf("proposals: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut := c.run("", "dependents", "--config", tc.example)
			if tc.name == "honcho" && (code != 0 || !strings.Contains(out, "no live document cites a retired one")) ||
				tc.name == "mem0" && (code != exitRefused || !strings.Contains(errOut, "only Honcho's documents cite others")) {
				t.Fatalf("dependents: exit %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut := c.run("", "migrate", "--remove", "--config", tc.example); code != 0 {
				t.Fatalf("migrate --remove: exit %d\n%s%s", code, out, errOut)
			}
			var after string
			if err := db.Get(&after, catalogDigest); err != nil || after != before {
				t.Fatalf("after migrate --remove the stack's schema differs (%v)", err)
			}
		})
	}
}

// catalogDigest digests schema public's tables, columns, indexes,
// constraints and triggers; but for the column the tombstone job adds
// (which migrate --remove keeps, with its data).
const catalogDigest = `
SELECT md5(string_agg(obj, E'\n' ORDER BY obj)) FROM (
  SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) AS obj
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND a.attname <> 'tombstone_preserved_at'
  UNION ALL SELECT 'index ' || pg_get_indexdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind = 'i'
  UNION ALL SELECT 'constraint ' || pg_get_constraintdef(con.oid) FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
  WHERE n.nspname = 'public'
  UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND NOT tg.tgisinternal) AS objs`
