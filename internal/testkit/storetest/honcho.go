package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// HonchoShape is which Honcho a database is shaped like.
type HonchoShape struct {
	// Schema holds Honcho's tables (its DB_SCHEMA setting); "" is public.
	Schema string
	// Sources: the document_sources edge table of migration a7c3e9f1b2d4
	// (PR #952, the newer release): citations are edges, source_ids is kept
	// but no longer written, and its GIN index is dropped. Otherwise the
	// shape of main's head e4eba9cfaa6f: citations in documents.source_ids.
	Sources bool
	// Dims are the embedding's dimensions (EMBEDDING_VECTOR_DIMENSIONS,
	// default 1536).
	Dims int
}

// Honcho is a database shaped like Honcho's, with what a document hangs
// from: workspaces, peers, collections and sessions, created as the
// documents inserted need them.
type Honcho struct {
	DB    *sqlx.DB
	Shape HonchoShape
	// Vector: the server has pgvector, and documents.embedding is
	// vector(Dims) with Honcho's HNSW index; otherwise real[].
	Vector bool

	mu  sync.Mutex
	ids *Nanoids
}

// honchoDDL creates Honcho's tables as its migrations leave them (the
// research notes: testdata/stacks/NOTES.md and /work/research/stores.md).
// {{S}} is the quoted schema, {{VECTOR}} the embedding's type.
const honchoDDL = `
CREATE SCHEMA IF NOT EXISTS {{S}};
CREATE TABLE {{S}}.workspaces (
  id text CONSTRAINT pk_workspaces PRIMARY KEY,
  name text NOT NULL CONSTRAINT uq_workspaces_name UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  internal_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  configuration jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT ck_workspaces_id_length CHECK (length(id) = 21),
  CONSTRAINT ck_workspaces_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'),
  CONSTRAINT ck_workspaces_name_length CHECK (length(name) <= 512));
CREATE TABLE {{S}}.peers (
  id text CONSTRAINT pk_peers PRIMARY KEY,
  name text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  internal_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  workspace_name text NOT NULL CONSTRAINT fk_peers_workspace_name_workspaces REFERENCES {{S}}.workspaces (name),
  configuration jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT uq_peers_name_workspace_name UNIQUE (name, workspace_name),
  CONSTRAINT ck_peers_id_length CHECK (length(id) = 21),
  CONSTRAINT ck_peers_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'),
  CONSTRAINT ck_peers_name_length CHECK (length(name) <= 512));
CREATE TABLE {{S}}.sessions (
  id text CONSTRAINT pk_sessions PRIMARY KEY,
  name text NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  internal_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  workspace_name text NOT NULL CONSTRAINT fk_sessions_workspace_name_workspaces REFERENCES {{S}}.workspaces (name),
  configuration jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT uq_sessions_name_workspace_name UNIQUE (name, workspace_name),
  CONSTRAINT ck_sessions_id_length CHECK (length(id) = 21),
  CONSTRAINT ck_sessions_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'),
  CONSTRAINT ck_sessions_name_length CHECK (length(name) <= 512));
CREATE TABLE {{S}}.collections (
  id text CONSTRAINT pk_collections PRIMARY KEY,
  observer text NOT NULL,
  observed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  internal_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  workspace_name text NOT NULL CONSTRAINT fk_collections_workspace_name_workspaces REFERENCES {{S}}.workspaces (name),
  CONSTRAINT uq_collections_observer_observed_workspace_name UNIQUE (observer, observed, workspace_name),
  CONSTRAINT fk_collections_observer_workspace_name_peers FOREIGN KEY (observer, workspace_name) REFERENCES {{S}}.peers (name, workspace_name),
  CONSTRAINT fk_collections_observed_workspace_name_peers FOREIGN KEY (observed, workspace_name) REFERENCES {{S}}.peers (name, workspace_name),
  CONSTRAINT ck_collections_id_length CHECK (length(id) = 21),
  CONSTRAINT ck_collections_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'));
CREATE TABLE {{S}}.documents (
  id text CONSTRAINT pk_documents PRIMARY KEY,
  internal_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  content text NOT NULL,
  level text NOT NULL DEFAULT 'explicit',
  times_derived integer NOT NULL DEFAULT 1,
  embedding {{VECTOR}},
  source_ids jsonb DEFAULT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  observer text NOT NULL,
  observed text NOT NULL,
  workspace_name text NOT NULL CONSTRAINT fk_documents_workspace_name_workspaces REFERENCES {{S}}.workspaces (name),
  session_name text,
  deleted_at timestamptz,
  sync_state text NOT NULL DEFAULT 'pending',
  last_sync_at timestamptz,
  sync_attempts integer NOT NULL DEFAULT 0,
  CONSTRAINT ck_documents_id_length CHECK (length(id) = 21),
  CONSTRAINT ck_documents_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'),
  CONSTRAINT ck_documents_content_length CHECK (length(content) <= 65535),
  CONSTRAINT fk_documents_observer_observed_workspace_name_collections FOREIGN KEY (observer, observed, workspace_name)
    REFERENCES {{S}}.collections (observer, observed, workspace_name),
  CONSTRAINT fk_documents_observer_workspace_name_peers FOREIGN KEY (observer, workspace_name) REFERENCES {{S}}.peers (name, workspace_name),
  CONSTRAINT fk_documents_observed_workspace_name_peers FOREIGN KEY (observed, workspace_name) REFERENCES {{S}}.peers (name, workspace_name),
  CONSTRAINT fk_documents_session_workspace FOREIGN KEY (session_name, workspace_name) REFERENCES {{S}}.sessions (name, workspace_name));
CREATE INDEX ix_documents_created_at ON {{S}}.documents (created_at);
CREATE INDEX ix_documents_observer ON {{S}}.documents (observer);
CREATE INDEX ix_documents_observed ON {{S}}.documents (observed);
CREATE INDEX ix_documents_workspace_name ON {{S}}.documents (workspace_name);
CREATE INDEX ix_documents_session_name ON {{S}}.documents (session_name);
CREATE INDEX ix_documents_sync_state ON {{S}}.documents (sync_state);
CREATE INDEX ix_documents_sync_state_last_sync_at ON {{S}}.documents (sync_state, last_sync_at);
CREATE INDEX ix_documents_deleted_at ON {{S}}.documents (deleted_at) WHERE deleted_at IS NOT NULL`

// honchoVectorDDL is what only pgvector can build.
const honchoVectorDDL = `
CREATE INDEX ix_documents_embedding_hnsw ON {{S}}.documents USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)`

// honchoSourceIDsDDL: main's GIN index on source_ids, which a7c3e9f1b2d4
// drops.
const honchoSourceIDsDDL = `
CREATE INDEX ix_documents_source_ids_gin ON {{S}}.documents USING gin (source_ids)`

// honchoSourcesDDL: the reasoning tree's edges (a7c3e9f1b2d4). source_id is
// deliberately no foreign key: sources are deleted independently of the
// documents concluded from them. The constraint names are Alembic's and not
// authoritative.
const honchoSourcesDDL = `
CREATE TABLE {{S}}.document_sources (
  derived_id text NOT NULL REFERENCES {{S}}.documents (id) ON DELETE CASCADE,
  source_id text NOT NULL,
  position integer NOT NULL DEFAULT 0,
  workspace_name text NOT NULL REFERENCES {{S}}.workspaces (name),
  PRIMARY KEY (derived_id, source_id),
  CONSTRAINT source_id_length CHECK (length(source_id) = 21),
  CONSTRAINT source_id_format CHECK (source_id ~ '^[A-Za-z0-9_-]+$'));
CREATE INDEX ix_document_sources_source_id ON {{S}}.document_sources (source_id, workspace_name)`

// CreateHoncho creates Honcho's tables in db (pgvector's extension first,
// when the server has it) and returns the database to insert into.
func CreateHoncho(ctx context.Context, db *sqlx.DB, shape HonchoShape) (*Honcho, error) {
	if shape.Schema == "" {
		shape.Schema = "public"
	}
	if shape.Dims <= 0 {
		shape.Dims = 1536
	}
	vector, err := enableVector(ctx, db)
	if err != nil {
		return nil, err
	}
	typ := "real[]"
	if vector {
		typ = "vector(" + strconv.Itoa(shape.Dims) + ")"
	}
	ddl := honchoDDL
	if vector {
		ddl += ";" + honchoVectorDDL
	}
	if shape.Sources {
		ddl += ";" + honchoSourcesDDL
	} else {
		ddl += ";" + honchoSourceIDsDDL
	}
	ddl = strings.NewReplacer("{{S}}", quoteIdent(shape.Schema), "{{VECTOR}}", typ).Replace(ddl)
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return nil, fmt.Errorf("storetest: create Honcho's tables: %w", err)
	}
	return &Honcho{DB: db, Shape: shape, Vector: vector, ids: NewNanoids(0)}, nil
}

// enableVector creates pgvector's extension when the server has it, and
// says whether it is there.
func enableVector(ctx context.Context, db *sqlx.DB) (bool, error) {
	var available bool
	if err := db.GetContext(ctx, &available, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`); err != nil {
		return false, fmt.Errorf("storetest: is pgvector available: %w", err)
	}
	if available {
		if _, err := db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			return false, fmt.Errorf("storetest: create extension vector: %w", err)
		}
	}
	return available, nil
}

// Table is one of Honcho's tables by name, quoted and qualified.
func (h *Honcho) Table(name string) string {
	return quoteIdent(h.Shape.Schema) + "." + quoteIdent(name)
}

// Observation is one document as Honcho writes it.
type Observation struct {
	ID        string // default: a new nanoid
	Workspace string // default "workspace"
	Observer  string // default "user"
	Observed  string // default: the observer (a peer's own representation)
	// Session: explicit observations always have one (Honcho refuses an
	// explicit document without); default "session". Other levels may be
	// sessionless (dreams): "-" for none.
	Session string
	Content string
	Level   string // default explicit
	// Sources are the ids of the documents this one was concluded from:
	// source_ids on main, document_sources edges (in order) on the newer
	// shape.
	Sources   []string
	CreatedAt time.Time // default now
	DeletedAt time.Time // zero: live
	// Embedding, when set, is stored and the row is synced (Honcho embeds
	// inline when it writes to pgvector); none leaves it pending.
	Embedding []float32
	// MessageIDs name the messages an explicit observation came from
	// (internal_metadata.message_ids).
	MessageIDs []int64
}

// Observe inserts observations as Honcho's create_documents writes them,
// creating the workspace, peers, collection and session each needs, and
// returns their ids in order.
func (h *Honcho) Observe(ctx context.Context, obs ...Observation) ([]string, error) {
	rows := make([]Observation, len(obs))
	for i, o := range obs {
		rows[i] = h.complete(o)
	}
	tx, err := h.DB.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	if err := h.parents(ctx, tx, rows); err != nil {
		return nil, err
	}
	if err := h.insert(ctx, tx, rows); err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, tx.Commit()
}

// complete fills in an observation's defaults.
func (h *Honcho) complete(o Observation) Observation {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o.ID == "" {
		o.ID = h.ids.Next()
	}
	o.Workspace = cmpOr(o.Workspace, "workspace")
	o.Observer = cmpOr(o.Observer, "user")
	o.Observed = cmpOr(o.Observed, o.Observer)
	o.Level = cmpOr(o.Level, "explicit")
	switch {
	case o.Session == "-":
		o.Session = ""
	case o.Session == "":
		o.Session = "session"
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	return o
}

// parents creates the rows a document's foreign keys need, each once.
func (h *Honcho) parents(ctx context.Context, tx *sqlx.Tx, rows []Observation) error {
	var ws, peerWS, peers, colWS, observers, observeds, sessWS, sessions []string
	for _, r := range rows {
		ws = append(ws, r.Workspace)
		peerWS = append(peerWS, r.Workspace, r.Workspace)
		peers = append(peers, r.Observer, r.Observed)
		colWS, observers, observeds = append(colWS, r.Workspace), append(observers, r.Observer), append(observeds, r.Observed)
		if r.Session != "" {
			sessWS, sessions = append(sessWS, r.Workspace), append(sessions, r.Session)
		}
	}
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ` + h.Table("workspaces") + ` (id, name) SELECT DISTINCT ON (w) $2 || left(md5(w), 11), w FROM unnest($1::text[]) w
		  ON CONFLICT (name) DO NOTHING`, []any{pq.Array(ws)}},
		{`INSERT INTO ` + h.Table("peers") + ` (id, name, workspace_name)
		  SELECT DISTINCT ON (p, w) $3 || left(md5(p || '/' || w), 11), p, w FROM unnest($1::text[], $2::text[]) AS u(p, w)
		  ON CONFLICT (name, workspace_name) DO NOTHING`, []any{pq.Array(peers), pq.Array(peerWS)}},
		{`INSERT INTO ` + h.Table("collections") + ` (id, observer, observed, workspace_name)
		  SELECT DISTINCT ON (a, b, w) $4 || left(md5(a || '/' || b || '/' || w), 11), a, b, w FROM unnest($1::text[], $2::text[], $3::text[]) AS u(a, b, w)
		  ON CONFLICT (observer, observed, workspace_name) DO NOTHING`, []any{pq.Array(observers), pq.Array(observeds), pq.Array(colWS)}},
		{`INSERT INTO ` + h.Table("sessions") + ` (id, name, workspace_name)
		  SELECT DISTINCT ON (s, w) $3 || left(md5(s || '/' || w), 11), s, w FROM unnest($1::text[], $2::text[]) AS u(s, w)
		  ON CONFLICT (name, workspace_name) DO NOTHING`, []any{pq.Array(sessions), pq.Array(sessWS)}},
	}
	for i, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.sql, append(s.args, idPrefix[i])...); err != nil {
			return fmt.Errorf("storetest: create the rows Honcho's documents hang from: %w", err)
		}
	}
	return nil
}

// idPrefix starts each parent table's ids. A parent's id is this prefix
// (ten characters) and eleven hex digits of a digest of its name: nanoid's
// 21 characters of its alphabet, stable, so that a conflict is always on the
// name and never on the id.
var idPrefix = []string{"workspace_", "peer______", "collection", "session___"}

// insert writes the documents, and their edges on the newer shape.
func (h *Honcho) insert(ctx context.Context, tx *sqlx.Tx, rows []Observation) error {
	var ids, ws, observers, observeds, sessions, contents, levels, metas, sources, embeddings, syncs []string
	var created, deleted []*time.Time
	var edgeDerived, edgeSource, edgeWS []string
	var edgePos []int64
	for _, r := range rows {
		ids, ws, observers, observeds = append(ids, r.ID), append(ws, r.Workspace), append(observers, r.Observer), append(observeds, r.Observed)
		sessions, contents, levels = append(sessions, r.Session), append(contents, r.Content), append(levels, r.Level)
		metas = append(metas, honchoMetadata(r))
		src := ""
		if len(r.Sources) > 0 && !h.Shape.Sources {
			b, _ := json.Marshal(r.Sources)
			src = string(b)
		}
		for p, s := range r.Sources {
			if h.Shape.Sources {
				edgeDerived, edgeSource, edgeWS, edgePos = append(edgeDerived, r.ID), append(edgeSource, s), append(edgeWS, r.Workspace), append(edgePos, int64(p))
			}
		}
		sources = append(sources, src)
		emb, sync := "", "pending"
		if r.Embedding != nil {
			emb, sync = vectorText(r.Embedding, h.Vector), "synced"
		}
		embeddings, syncs = append(embeddings, emb), append(syncs, sync)
		c := r.CreatedAt
		created = append(created, &c)
		var d *time.Time
		if !r.DeletedAt.IsZero() {
			dt := r.DeletedAt
			d = &dt
		}
		deleted = append(deleted, d)
	}
	embType := "real[]"
	if h.Vector {
		embType = "vector"
	}
	q := `INSERT INTO ` + h.Table("documents") + ` (id, workspace_name, observer, observed, session_name, content, level,
	  internal_metadata, source_ids, embedding, sync_state, last_sync_at, created_at, deleted_at)
	SELECT id, w, a, b, nullif(s, ''), c, l, m::jsonb, nullif(src, '')::jsonb, nullif(e, '')::` + embType + `, sync,
	  CASE WHEN sync = 'synced' THEN now() END, t, d
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
	            $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[]) AS u(id, w, a, b, s, c, l, m, src, e, sync, t, d)`
	if _, err := tx.ExecContext(ctx, q, pq.Array(ids), pq.Array(ws), pq.Array(observers), pq.Array(observeds), pq.Array(sessions),
		pq.Array(contents), pq.Array(levels), pq.Array(metas), pq.Array(sources), pq.Array(embeddings), pq.Array(syncs),
		pq.Array(created), pq.Array(deleted)); err != nil {
		return fmt.Errorf("storetest: insert Honcho documents: %w", err)
	}
	if len(edgeDerived) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+h.Table("document_sources")+` (derived_id, source_id, position, workspace_name)
		SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[]) ON CONFLICT DO NOTHING`,
		pq.Array(edgeDerived), pq.Array(edgeSource), pq.Array(edgePos), pq.Array(edgeWS)); err != nil {
		return fmt.Errorf("storetest: insert Honcho document_sources: %w", err)
	}
	return nil
}

// honchoMetadata is internal_metadata as DocumentMetadata dumps it (no
// nulls): an explicit observation names its messages and when the newest
// was written (UTC, with Z).
func honchoMetadata(o Observation) string {
	m := map[string]any{}
	if o.Level == "explicit" {
		ids := o.MessageIDs
		if ids == nil {
			ids = []int64{}
		}
		m["message_ids"] = ids
		m["message_created_at"] = o.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// SoftDelete deletes documents Honcho's way (delete_documents): deleted_at
// set, guarded so a repeat is a no-op. It returns how many it deleted.
func (h *Honcho) SoftDelete(ctx context.Context, ids ...string) (int64, error) {
	res, err := h.DB.ExecContext(ctx, `UPDATE `+h.Table("documents")+` SET deleted_at = now() WHERE id = ANY($1) AND deleted_at IS NULL`, pq.Array(ids))
	if err != nil {
		return 0, fmt.Errorf("storetest: soft-delete documents: %w", err)
	}
	return res.RowsAffected()
}

// Reconcile is Honcho's reconciler in pgvector mode: every document
// soft-deleted longer than olderThan ago is hard-deleted, cited or not
// (its own document_sources edges go with it, ON DELETE CASCADE). It
// returns how many it deleted.
func (h *Honcho) Reconcile(ctx context.Context, olderThan time.Duration) (int64, error) {
	res, err := h.DB.ExecContext(ctx, `DELETE FROM `+h.Table("documents")+`
		WHERE deleted_at IS NOT NULL AND deleted_at < now() - make_interval(secs => $1)`, olderThan.Seconds())
	if err != nil {
		return 0, fmt.Errorf("storetest: Honcho's reconciler: %w", err)
	}
	return res.RowsAffected()
}

// vectorText is an embedding as the column's input form: pgvector's
// [a,b,c], or real[]'s {a,b,c}.
func vectorText(v []float32, pgvector bool) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	if pgvector {
		return "[" + strings.Join(parts, ",") + "]"
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
