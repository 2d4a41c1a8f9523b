package storetest

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Mem0Shape is which mem0 collection a database holds.
type Mem0Shape struct {
	// Schema holds the collection; "" is public (mem0 looks for its table
	// there only, and creates it unqualified).
	Schema string
	// Table is the collection_name; "" is mem0.
	Table string
	// Dims are embedding_model_dims (default 1536).
	Dims int
}

// Mem0 is a database holding mem0's pgvector collection.
type Mem0 struct {
	DB    *sqlx.DB
	Shape Mem0Shape
	// Vector: the server has pgvector, the vector column is vector(Dims)
	// with mem0's HNSW index; otherwise real[].
	Vector bool
}

// mem0DDL is create_col with its defaults (hnsw on, diskann off): the
// table, the HNSW index (pgvector only) and the GIN index BM25 search uses.
// {{T}} is the quoted, qualified table, {{N}} its bare name.
const mem0DDL = `
CREATE SCHEMA IF NOT EXISTS {{S}};
CREATE TABLE IF NOT EXISTS {{T}} (id UUID PRIMARY KEY, vector {{VECTOR}}, payload JSONB);
CREATE INDEX IF NOT EXISTS {{IX_TEXT}} ON {{T}} USING gin(to_tsvector('simple', payload->>'text_lemmatized'))`

const mem0VectorDDL = `
CREATE INDEX IF NOT EXISTS {{IX_HNSW}} ON {{T}} USING hnsw (vector vector_cosine_ops)`

// CreateMem0 creates mem0's collection in db (pgvector's extension first,
// when the server has it).
func CreateMem0(ctx context.Context, db *sqlx.DB, shape Mem0Shape) (*Mem0, error) {
	shape.Schema = cmpOr(shape.Schema, "public")
	shape.Table = cmpOr(shape.Table, "mem0")
	if shape.Dims <= 0 {
		shape.Dims = 1536
	}
	vector, err := enableVector(ctx, db)
	if err != nil {
		return nil, err
	}
	m := &Mem0{DB: db, Shape: shape, Vector: vector}
	typ, ddl := "real[]", mem0DDL
	if vector {
		typ, ddl = "vector("+strconv.Itoa(shape.Dims)+")", ddl+";"+mem0VectorDDL
	}
	ddl = strings.NewReplacer("{{S}}", quoteIdent(shape.Schema), "{{T}}", m.Table(), "{{VECTOR}}", typ,
		"{{IX_TEXT}}", quoteIdent(shape.Table+"_text_lemmatized_idx"), "{{IX_HNSW}}", quoteIdent(shape.Table+"_hnsw_idx")).Replace(ddl)
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return nil, fmt.Errorf("storetest: create mem0's collection: %w", err)
	}
	return m, nil
}

// Table is the collection, quoted and qualified.
func (m *Mem0) Table() string { return quoteIdent(m.Shape.Schema) + "." + quoteIdent(m.Shape.Table) }

// Memory is one memory as mem0's Memory.add writes it.
type Memory struct {
	ID   string // default: a new uuid4
	Data string
	// UserID, AgentID, RunID: whichever scope the caller passed (mem0
	// needs at least one; an empty one is not written).
	UserID, AgentID, RunID string
	// CreatedAt is written as Python's isoformat() with its offset: UTC
	// since mem0 #4404, US/Pacific before (Zone). Default now.
	CreatedAt time.Time
	UpdatedAt time.Time      // default CreatedAt (an add writes both alike)
	Zone      *time.Location // default UTC
	// Metadata is the caller's metadata, merged at the top level of the
	// payload (mem0 #6655).
	Metadata map[string]any
	// Vector, when nil, is a pseudo-embedding of Dims numbers drawn from
	// the text's digest (mem0 always stores one).
	Vector []float32
}

// Add inserts memories as mem0 writes them (one plain INSERT of id, vector
// and payload each; no upsert), and returns their ids in order.
func (m *Mem0) Add(ctx context.Context, mems ...Memory) ([]string, error) {
	var ids, vectors, payloads []string
	for _, mem := range mems {
		if mem.ID == "" {
			mem.ID = NewUUID()
		}
		if mem.Vector == nil {
			mem.Vector = PseudoEmbedding(mem.Data, m.Shape.Dims)
		}
		p, err := json.Marshal(Payload(mem))
		if err != nil {
			return nil, err
		}
		ids, vectors, payloads = append(ids, mem.ID), append(vectors, vectorText(mem.Vector, m.Vector)), append(payloads, string(p))
	}
	typ := "real[]"
	if m.Vector {
		typ = "vector"
	}
	if _, err := m.DB.ExecContext(ctx, `INSERT INTO `+m.Table()+` (id, vector, payload)
		SELECT i::uuid, v::`+typ+`, p::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) AS u(i, v, p)`,
		pq.Array(ids), pq.Array(vectors), pq.Array(payloads)); err != nil {
		return nil, fmt.Errorf("storetest: insert mem0 memories: %w", err)
	}
	return ids, nil
}

// Payload is the payload mem0 writes for a memory: the caller's metadata at
// the top level, the scope ids given, data, its MD5 hash, the lemmatized
// text BM25 reads, and the times in isoformat with their offset.
func Payload(mem Memory) map[string]any {
	p := map[string]any{}
	for k, v := range mem.Metadata {
		p[k] = v
	}
	for k, v := range map[string]string{"user_id": mem.UserID, "agent_id": mem.AgentID, "run_id": mem.RunID} {
		if v != "" {
			p[k] = v
		}
	}
	sum := md5.Sum([]byte(mem.Data))
	p["data"], p["hash"], p["text_lemmatized"] = mem.Data, hex.EncodeToString(sum[:]), strings.ToLower(mem.Data)
	zone := mem.Zone
	if zone == nil {
		zone = time.UTC
	}
	created := mem.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	updated := mem.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	p["created_at"], p["updated_at"] = Isoformat(created.In(zone)), Isoformat(updated.In(zone))
	return p
}

// Isoformat is Python's datetime.isoformat() of an aware time:
// microseconds only when there are any, and the offset as +HH:MM.
func Isoformat(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// Update is mem0's update(memory_id, text): the payload rewritten whole
// with the new text, its hash and updated_at, created_at kept, and a new
// vector.
func (m *Mem0) Update(ctx context.Context, id, data string) error {
	sum := md5.Sum([]byte(data))
	patch, _ := json.Marshal(map[string]any{"data": data, "hash": hex.EncodeToString(sum[:]),
		"text_lemmatized": strings.ToLower(data), "updated_at": Isoformat(time.Now().UTC())})
	typ := "real[]"
	if m.Vector {
		typ = "vector"
	}
	res, err := m.DB.ExecContext(ctx, `UPDATE `+m.Table()+` SET payload = payload || $2::jsonb, vector = $3::`+typ+` WHERE id = $1::uuid`,
		id, string(patch), vectorText(PseudoEmbedding(data, m.Shape.Dims), m.Vector))
	if err != nil {
		return fmt.Errorf("storetest: update mem0 memory %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storetest: update mem0 memory %s: no such memory", id)
	}
	return nil
}

// Delete is mem0's delete: the row goes, nothing is kept in PostgreSQL.
func (m *Mem0) Delete(ctx context.Context, ids ...string) (int64, error) {
	res, err := m.DB.ExecContext(ctx, `DELETE FROM `+m.Table()+` WHERE id = ANY($1::uuid[])`, pq.Array(ids))
	if err != nil {
		return 0, fmt.Errorf("storetest: delete mem0 memories: %w", err)
	}
	return res.RowsAffected()
}

// PseudoEmbedding is a stand-in for an embedding: dims numbers of unit
// length drawn from the text's digest, so equal texts get equal vectors.
func PseudoEmbedding(text string, dims int) []float32 {
	sum := md5.Sum([]byte(text))
	r := mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:])))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := r.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// NewUUID is a random (version 4) UUID, as mem0's uuid.uuid4().
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
