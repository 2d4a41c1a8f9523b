package storetest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// column is one column as the catalog has it.
type column struct {
	Name    string `db:"name"`
	Type    string `db:"type"`
	NotNull bool   `db:"notnull"`
	Default string `db:"def"`
}

func columnsOf(t *testing.T, db *sqlx.DB, table string) []column {
	t.Helper()
	var cols []column
	err := db.Select(&cols, `
		SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
		       coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS def
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, table)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

func names(t *testing.T, db *sqlx.DB, q string, args ...any) []string {
	t.Helper()
	var out []string
	if err := db.Select(&out, q, args...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// The facts of Honcho's documents at its newest migration (main's head
// e4eba9cfaa6f, and a7c3e9f1b2d4 beside it), written down from its models
// and migrations apart from the fixture's DDL: every column with its type,
// nullability and default, in the order the migrations left them.
func honchoDocumentFacts(vector bool) []column {
	embedding := "real[]"
	if vector {
		embedding = "vector(1536)"
	}
	return []column{
		{"id", "text", true, ""},
		{"internal_metadata", "jsonb", true, "'{}'::jsonb"},
		{"content", "text", true, ""},
		{"level", "text", true, "'explicit'::text"},
		{"times_derived", "integer", true, "1"},
		{"embedding", embedding, false, ""},
		{"source_ids", "jsonb", false, ""},
		{"created_at", "timestamp with time zone", true, "now()"},
		{"observer", "text", true, ""},
		{"observed", "text", true, ""},
		{"workspace_name", "text", true, ""},
		{"session_name", "text", false, ""},
		{"deleted_at", "timestamp with time zone", false, ""},
		{"sync_state", "text", true, "'pending'::text"},
		{"last_sync_at", "timestamp with time zone", false, ""},
		{"sync_attempts", "integer", true, "0"},
	}
}

func TestHonchoShape(t *testing.T) {
	t.Parallel()
	for _, shape := range []HonchoShape{{}, {Schema: "honcho", Sources: true}} {
		t.Run(shape.Schema+map[bool]string{true: "+document_sources", false: "+source_ids"}[shape.Sources], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			h, err := CreateHoncho(context.Background(), db.DB, shape)
			if err != nil {
				t.Fatal(err)
			}
			docs := h.Table("documents")
			if got, want := columnsOf(t, db.DB, docs), honchoDocumentFacts(h.Vector); !slices.Equal(got, want) {
				t.Fatalf("documents:\n got %v\nwant %v", got, want)
			}
			checks := names(t, db.DB, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`, docs)
			if want := []string{"CHECK ((id ~ '^[A-Za-z0-9_-]+$'::text))", "CHECK ((length(content) <= 65535))", "CHECK ((length(id) = 21))"}; !slices.Equal(checks, want) {
				t.Fatalf("documents' CHECKs: %q", checks)
			}
			fks := names(t, db.DB, `SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'`, docs)
			s := h.Shape.Schema + "."
			if s == "public." {
				s = ""
			}
			want := []string{
				"fk_documents_observed_workspace_name_peers FOREIGN KEY (observed, workspace_name) REFERENCES " + s + "peers(name, workspace_name)",
				"fk_documents_observer_observed_workspace_name_collections FOREIGN KEY (observer, observed, workspace_name) REFERENCES " + s + "collections(observer, observed, workspace_name)",
				"fk_documents_observer_workspace_name_peers FOREIGN KEY (observer, workspace_name) REFERENCES " + s + "peers(name, workspace_name)",
				"fk_documents_session_workspace FOREIGN KEY (session_name, workspace_name) REFERENCES " + s + "sessions(name, workspace_name)",
				"fk_documents_workspace_name_workspaces FOREIGN KEY (workspace_name) REFERENCES " + s + "workspaces(name)",
			}
			if !slices.Equal(fks, want) {
				t.Fatalf("documents' foreign keys:\n%s", strings.Join(fks, "\n"))
			}
			indexes := names(t, db.DB, `SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = $1::regclass`, docs)
			gin := slices.ContainsFunc(indexes, func(s string) bool { return strings.HasSuffix(s, "ix_documents_source_ids_gin") })
			hnsw := slices.ContainsFunc(indexes, func(s string) bool { return strings.HasSuffix(s, "ix_documents_embedding_hnsw") })
			if gin == shape.Sources || hnsw != h.Vector || len(indexes) != 9+btoi(gin)+btoi(hnsw) {
				t.Fatalf("documents' indexes: %v", indexes)
			}
			var partial string
			if err := db.Get(&partial, `SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indexrelid = $1::regclass`,
				quoteIdent(h.Shape.Schema)+".ix_documents_deleted_at"); err != nil || partial != "(deleted_at IS NOT NULL)" {
				t.Fatalf("ix_documents_deleted_at is not Honcho's partial index: %q %v", partial, err)
			}
			var edges bool
			if err := db.Get(&edges, `SELECT to_regclass($1) IS NOT NULL`, h.Table("document_sources")); err != nil || edges != shape.Sources {
				t.Fatalf("document_sources present: %t, want %t (%v)", edges, shape.Sources, err)
			}
			if shape.Sources {
				want := []column{{"derived_id", "text", true, ""}, {"source_id", "text", true, ""}, {"position", "integer", true, "0"}, {"workspace_name", "text", true, ""}}
				if got := columnsOf(t, db.DB, h.Table("document_sources")); !slices.Equal(got, want) {
					t.Fatalf("document_sources: %v", got)
				}
			}
			observe(t, h)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// observe inserts what Honcho writes and reads it back: ids of Honcho's
// shape, the rows the foreign keys need created once, citations where the
// shape keeps them, metadata as DocumentMetadata dumps it.
func observe(t *testing.T, h *Honcho) {
	ctx := context.Background()
	at := time.Date(2026, 8, 20, 9, 30, 0, 0, time.UTC)
	ids, err := h.Observe(ctx,
		Observation{Workspace: "acme", Observer: "sam", Content: "sam lives in Toronto", CreatedAt: at, MessageIDs: []int64{4, 5}},
		Observation{Workspace: "acme", Observer: "sam", Content: "sam moved to Vancouver", CreatedAt: at.Add(time.Hour)},
		Observation{Workspace: "acme", Observer: "assistant", Observed: "sam", Content: "sam likes sushi", Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	derived, err := h.Observe(ctx, Observation{Workspace: "acme", Observer: "sam", Level: "deductive", Session: "-",
		Content: "sam relocated west", Sources: []string{ids[1], ids[0]}, Embedding: []float32{0.5, 0.25}})
	if err != nil && !h.Vector { // a two-number embedding does not fit vector(1536)
		t.Fatal(err)
	}
	for _, id := range ids {
		if !regexp.MustCompile(`^[A-Za-z0-9_-]{21}$`).MatchString(id) {
			t.Fatalf("id %q is not a nanoid", id)
		}
	}
	var counts struct {
		Workspaces  int `db:"w"`
		Peers       int `db:"p"`
		Collections int `db:"c"`
		Sessions    int `db:"s"`
	}
	if err := h.DB.Get(&counts, `SELECT (SELECT count(*) FROM `+h.Table("workspaces")+`) AS w, (SELECT count(*) FROM `+h.Table("peers")+`) AS p,
		(SELECT count(*) FROM `+h.Table("collections")+`) AS c, (SELECT count(*) FROM `+h.Table("sessions")+`) AS s`); err != nil {
		t.Fatal(err)
	}
	if counts.Workspaces != 1 || counts.Peers != 2 || counts.Collections != 2 || counts.Sessions != 2 {
		t.Fatalf("parent rows: %+v", counts)
	}
	var meta string
	if err := h.DB.Get(&meta, `SELECT internal_metadata::text FROM `+h.Table("documents")+` WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if meta != `{"message_ids": [4, 5], "message_created_at": "2026-08-20T09:30:00.000Z"}` {
		t.Fatalf("internal_metadata %s", meta)
	}
	if h.Vector {
		return
	}
	var row struct {
		SourceIDs *string `db:"source_ids"`
		Sync      string  `db:"sync_state"`
		Session   *string `db:"session_name"`
	}
	if err := h.DB.Get(&row, `SELECT source_ids::text, sync_state, session_name FROM `+h.Table("documents")+` WHERE id = $1`, derived[0]); err != nil {
		t.Fatal(err)
	}
	if row.Sync != "synced" || row.Session != nil {
		t.Fatalf("the derived document: %+v", row)
	}
	if h.Shape.Sources {
		edges := names(t, h.DB, `SELECT position || ':' || source_id FROM `+h.Table("document_sources")+` WHERE derived_id = $1`, derived[0])
		if row.SourceIDs != nil || !slices.Equal(edges, []string{"0:" + ids[1], "1:" + ids[0]}) {
			t.Fatalf("citations on the newer shape: source_ids %v, edges %v", row.SourceIDs, edges)
		}
	} else if row.SourceIDs == nil || *row.SourceIDs != `["`+ids[1]+`", "`+ids[0]+`"]` {
		t.Fatalf("source_ids %v", row.SourceIDs)
	}
	if n, err := h.SoftDelete(ctx, ids[0], ids[0]); err != nil || n != 1 {
		t.Fatalf("soft delete: %d %v", n, err)
	}
	if _, err := h.DB.Exec(`UPDATE `+h.Table("documents")+` SET deleted_at = now() - interval '6 minutes' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if n, err := h.Reconcile(ctx, 5*time.Minute); err != nil || n != 1 {
		t.Fatalf("Honcho's reconciler deleted %d (%v), want the one soft-deleted six minutes ago", n, err)
	}
}

func TestMem0Shape(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	ctx := context.Background()
	m, err := CreateMem0(ctx, db.DB, Mem0Shape{Dims: 8})
	if err != nil {
		t.Fatal(err)
	}
	vector := "real[]"
	if m.Vector {
		vector = "vector(8)"
	}
	if got, want := columnsOf(t, db.DB, m.Table()), []column{{"id", "uuid", true, ""}, {"vector", vector, false, ""}, {"payload", "jsonb", false, ""}}; !slices.Equal(got, want) {
		t.Fatalf("mem0:\n got %v\nwant %v", got, want)
	}
	defs := names(t, db.DB, `SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = $1::regclass`, m.Table())
	want := []string{
		"CREATE INDEX mem0_text_lemmatized_idx ON public.mem0 USING gin (to_tsvector('simple'::regconfig, (payload ->> 'text_lemmatized'::text)))",
		"CREATE UNIQUE INDEX mem0_pkey ON public.mem0 USING btree (id)",
	}
	if m.Vector {
		want = append(want, "CREATE INDEX mem0_hnsw_idx ON public.mem0 USING hnsw (vector vector_cosine_ops)")
		slices.Sort(want)
	}
	if !slices.Equal(defs, want) {
		t.Fatalf("mem0's indexes:\n%s", strings.Join(defs, "\n"))
	}
	// Again, as mem0 does on every start: nothing changes, nothing fails.
	if _, err := CreateMem0(ctx, db.DB, Mem0Shape{Dims: 8}); err != nil {
		t.Fatal(err)
	}

	pacific, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 8, 22, 13, 34, 56, 123456000, time.UTC)
	ids, err := m.Add(ctx,
		Memory{Data: "Lives in Toronto", UserID: "alice", CreatedAt: at, Metadata: map[string]any{"category": "home"}},
		Memory{Data: "Prefers tea", UserID: "alice", AgentID: "travel-bot", RunID: "r1", CreatedAt: at.Truncate(time.Second), Zone: pacific})
	if err != nil {
		t.Fatal(err)
	}
	payload := func(id string) map[string]any {
		var raw []byte
		if err := db.Get(&raw, `SELECT payload FROM `+m.Table()+` WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		p := map[string]any{}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := payload(ids[0])
	sum := md5.Sum([]byte("Lives in Toronto"))
	if p["data"] != "Lives in Toronto" || p["hash"] != hex.EncodeToString(sum[:]) || p["user_id"] != "alice" || p["category"] != "home" ||
		p["created_at"] != "2026-08-22T13:34:56.123456+00:00" || p["updated_at"] != p["created_at"] || p["text_lemmatized"] == nil {
		t.Fatalf("payload %v", p)
	}
	if _, ok := p["agent_id"]; ok {
		t.Fatalf("a scope id not given is written: %v", p)
	}
	if p := payload(ids[1]); p["created_at"] != "2026-08-22T06:34:56-07:00" || p["agent_id"] != "travel-bot" || p["run_id"] != "r1" {
		t.Fatalf("an older release's Pacific offset, no microseconds: %v", p)
	}
	if err := m.Update(ctx, ids[0], "Lives in Vancouver"); err != nil {
		t.Fatal(err)
	}
	if p := payload(ids[0]); p["data"] != "Lives in Vancouver" || p["created_at"] != "2026-08-22T13:34:56.123456+00:00" || p["updated_at"] == p["created_at"] {
		t.Fatalf("after update: %v", p)
	}
	if n, err := m.Delete(ctx, ids[1]); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
}

// Another collection name, in a schema of its own: the name the indexes get
// follows it.
func TestMem0ElsewhereIsNamedAfterItsCollection(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	m, err := CreateMem0(context.Background(), db.DB, Mem0Shape{Schema: "memory", Table: "memories", Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	idx := names(t, db.DB, `SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = $1::regclass`, m.Table())
	if !slices.Contains(idx, "memory.memories_text_lemmatized_idx") {
		t.Fatalf("indexes %v", idx)
	}
}

func TestNanoidsAndUUIDs(t *testing.T) {
	t.Parallel()
	a, b := NewNanoids(7), NewNanoids(7)
	for range 100 {
		x := a.Next()
		if x != b.Next() || !regexp.MustCompile(`^[A-Za-z0-9_-]{21}$`).MatchString(x) {
			t.Fatalf("%q", x)
		}
	}
	if u := NewUUID(); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(u) {
		t.Fatalf("uuid %q", u)
	}
}
