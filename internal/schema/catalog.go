package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Table is one table as the catalog has it.
type Table struct {
	Schema, Name string
	OID          uint32
	Columns      map[string]Column
	Indexes      []Index
	ForeignKeys  []ForeignKey
	Checks       []string // CHECK constraint definitions
}

// Qualified is the table's name, quoted and schema-qualified: safe to put in
// a statement whatever the name holds.
func (t *Table) Qualified() string { return quoteIdent(t.Schema) + "." + quoteIdent(t.Name) }

// Display is the name as an operator writes it.
func (t *Table) Display() string { return t.Schema + "." + t.Name }

// Column is one column of a table.
type Column struct {
	Name       string
	Type       string // format_type: text, jsonb, timestamp with time zone, vector(1536), text[]...
	Base       string // the type's name (typname), or the element's for an array
	Array      bool
	NotNull    bool
	HasDefault bool
}

// Index is one index of a table.
type Index struct {
	Name      string
	Unique    bool
	Method    string   // btree, gin, hnsw...
	Keys      []string // each key column or expression, as pg_get_indexdef prints it
	OpClasses []string
	Predicate string // "" for a full index
	Def       string
}

// ForeignKey is one foreign key of a table.
type ForeignKey struct {
	Name    string
	Columns []string
	Refs    string // the referenced table, as regclass prints it
	Def     string
}

// catalog reads what a Layout needs to know about tables.
type catalog struct {
	q sqlx.QueryerContext
}

// resolve finds a table: by schema and name when the schema is given, else
// the way the connection's search path would. It returns nil when there is
// no such table (or view: the daemon writes to its tables). The table is
// not described yet (describe).
func (c catalog) resolve(ctx context.Context, schemaName, name string) (*Table, error) {
	var row struct {
		OID    uint32 `db:"oid"`
		Schema string `db:"nspname"`
		Name   string `db:"relname"`
	}
	var err error
	if schemaName != "" {
		err = sqlx.GetContext(ctx, c.q, &row, `
			SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, schemaName, name)
	} else {
		err = sqlx.GetContext(ctx, c.q, &row, `
			SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.oid = to_regclass(quote_ident($1)) AND c.relkind IN ('r', 'p')`, name)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("schema: look up table %s: %w", name, err)
	}
	return &Table{Schema: row.Schema, Name: row.Name, OID: row.OID}, nil
}

const columnsSQL = `
SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
       coalesce(et.typname, t.typname) AS base, t.typcategory = 'A' AS is_array,
       a.attnotnull, a.atthasdef
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped`

const indexesSQL = `
SELECT i.indrelid, ic.relname AS name, i.indisunique AS unique, am.amname AS method,
       pg_get_indexdef(i.indexrelid) AS def,
       coalesce(pg_get_expr(i.indpred, i.indrelid, true), '') AS predicate,
       ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) AS k ORDER BY k) AS keys,
       ARRAY(SELECT oc.opcname FROM unnest(i.indclass) WITH ORDINALITY AS u(cls, k)
             JOIN pg_opclass oc ON oc.oid = u.cls WHERE u.k <= i.indnkeyatts ORDER BY u.k) AS opclasses
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_am am ON am.oid = ic.relam
WHERE i.indrelid = ANY($1::oid[]) AND i.indisvalid
ORDER BY i.indrelid, ic.relname`

const constraintsSQL = `
SELECT con.conrelid, con.conname, con.contype, pg_get_constraintdef(con.oid) AS def,
       coalesce(con.confrelid::regclass::text, '') AS refs,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord) AS columns
FROM pg_constraint con
WHERE con.conrelid = ANY($1::oid[]) AND con.contype IN ('f', 'c')
ORDER BY con.conrelid, con.conname`

// describe reads the columns, indexes and constraints of tables, all in
// three statements: a command's start is mostly catalog round trips.
func (c catalog) describe(ctx context.Context, tables ...*Table) error {
	byOID := map[uint32][]*Table{} // one table may be found under two names
	oids := make(pq.Int64Array, 0, len(tables))
	for _, t := range tables {
		t.Columns = map[string]Column{}
		byOID[t.OID] = append(byOID[t.OID], t)
		oids = append(oids, int64(t.OID))
	}
	if len(oids) == 0 {
		return nil
	}
	what := "tables"
	if len(tables) == 1 {
		what = tables[0].Display()
	}
	rows, err := c.q.QueryxContext(ctx, columnsSQL, oids)
	if err != nil {
		return fmt.Errorf("schema: read the columns of %s: %w", what, err)
	}
	for rows.Next() {
		var oid uint32
		var col Column
		if err := rows.Scan(&oid, &col.Name, &col.Type, &col.Base, &col.Array, &col.NotNull, &col.HasDefault); err != nil {
			rows.Close()
			return err
		}
		for _, t := range byOID[oid] {
			t.Columns[col.Name] = col
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	rows, err = c.q.QueryxContext(ctx, indexesSQL, oids)
	if err != nil {
		return fmt.Errorf("schema: read the indexes of %s: %w", what, err)
	}
	for rows.Next() {
		var oid uint32
		var ix Index
		var keys, ops pq.StringArray
		if err := rows.Scan(&oid, &ix.Name, &ix.Unique, &ix.Method, &ix.Def, &ix.Predicate, &keys, &ops); err != nil {
			rows.Close()
			return err
		}
		ix.Keys, ix.OpClasses = keys, ops
		for _, t := range byOID[oid] {
			t.Indexes = append(t.Indexes, ix)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	rows, err = c.q.QueryxContext(ctx, constraintsSQL, oids)
	if err != nil {
		return fmt.Errorf("schema: read the constraints of %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var oid uint32
		var name, kind, def, refs string
		var cols pq.StringArray
		if err := rows.Scan(&oid, &name, &kind, &def, &refs, &cols); err != nil {
			return err
		}
		for _, t := range byOID[oid] {
			if kind == "f" {
				t.ForeignKeys = append(t.ForeignKeys, ForeignKey{Name: name, Columns: cols, Refs: refs, Def: def})
			} else {
				t.Checks = append(t.Checks, def)
			}
		}
	}
	return rows.Err()
}

// index returns the table's index of that name.
func (t *Table) index(name string) *Index {
	for i := range t.Indexes {
		if t.Indexes[i].Name == name {
			return &t.Indexes[i]
		}
	}
	return nil
}

// covering returns an existing index that makes a wanted one redundant: the
// same method and operator classes, the wanted keys as a prefix of its own
// (exactly, for a method without order such as GIN), and no predicate or
// the same one. Expression keys compare as PostgreSQL prints them.
func (t *Table) covering(want IndexSpec) *Index {
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		if ix.Method != want.Method || (want.Unique && !ix.Unique) || len(ix.Keys) < len(want.Keys) {
			continue
		}
		if want.Method != "btree" && len(ix.Keys) != len(want.Keys) {
			continue
		}
		match := true
		for k, key := range want.Keys {
			if normalizeExpr(ix.Keys[k]) != normalizeExpr(key) {
				match = false
				break
			}
			if k < len(want.OpClasses) && want.OpClasses[k] != "" && (k >= len(ix.OpClasses) || ix.OpClasses[k] != want.OpClasses[k]) {
				match = false
				break
			}
		}
		if match && (ix.Predicate == "" || normalizeExpr(ix.Predicate) == normalizeExpr(want.Predicate)) {
			return ix
		}
	}
	return nil
}

// normalizeExpr makes two printings of one expression compare equal in the
// cases that occur: parentheses, spacing, case and quoting.
func normalizeExpr(s string) string {
	r := strings.NewReplacer("::text", "", "::character varying", "", "(", "", ")", "", " ", "", "\"", "", "\n", "", "\t", "")
	return strings.ToLower(r.Replace(s))
}

// hasColumn reports whether the table has the column.
func (t *Table) hasColumn(name string) bool {
	if t == nil {
		return false
	}
	_, ok := t.Columns[name]
	return ok
}

// quoteIdent quotes an identifier for SQL: any text is safe inside.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
