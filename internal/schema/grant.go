package schema

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// grant gives a role exactly what the jobs that are on need (privilegesOf):
// USAGE on the schemas, the table privileges (UPDATE only on the columns the
// daemon sets), and read-write use of its own tables and sequences. Run by
// the tables' owner: `supersessiond migrate --grant ROLE`. What the role did
// not hold before is recorded (grantsState), so that `migrate --remove`
// revokes exactly that and never a privilege someone else gave.
func (m *migration) grant(ctx context.Context, role string) error {
	l := m.layout
	var given []grantRecord
	// give grants what gs name in one statement, and notes those of them
	// the role did not hold.
	give := func(what string, gs ...grantRecord) error {
		if len(gs) == 0 {
			return nil
		}
		for _, g := range gs {
			held, err := g.held(ctx, m.conn, role)
			if err != nil {
				return err
			}
			if !held {
				given = append(given, g)
			}
		}
		return m.exec(ctx, fmt.Sprintf("grant %s to %s", what, role), "GRANT "+clause(gs)+" TO "+quoteIdent(role))
	}
	schemas := map[string]bool{}
	for _, job := range Jobs {
		if !m.plan.On[job] {
			continue
		}
		for _, p := range m.layout.Plan.privilegesOf(job) {
			t := l.Tables[p.table]
			if t == nil {
				continue
			}
			schemas[t.Schema] = true
			var gs []grantRecord
			if p.kind != "UPDATE" {
				gs = append(gs, grantRecord{Privilege: p.kind, Table: t.Qualified(), OID: t.OID})
			}
			for _, c := range p.columns {
				if t.hasColumn(c) {
					gs = append(gs, grantRecord{Privilege: "UPDATE", Table: t.Qualified(), OID: t.OID, Column: c})
				}
			}
			what := p.kind + " on " + t.Display()
			if p.kind == "UPDATE" {
				what = "UPDATE (" + strings.Join(p.columns, ", ") + ") on " + t.Display()
			}
			if err := give(what, gs...); err != nil {
				return err
			}
		}
	}
	for _, s := range keysOf(schemas) {
		if err := give("USAGE on schema "+s, grantRecord{Privilege: "USAGE", Schema: s}); err != nil {
			return err
		}
	}
	if len(l.Own) > 0 {
		if err := m.grantOwn(ctx, role, &given); err != nil {
			return err
		}
	}
	return m.recordGrants(ctx, role, given)
}

// grantOwn gives the role the use of the daemon's own schema and everything
// in it.
func (m *migration) grantOwn(ctx context.Context, role string, given *[]grantRecord) error {
	own, r := m.layout.Names.Own, quoteIdent(role)
	usage := grantRecord{Privilege: "USAGE", Schema: m.plan.Own}
	held, err := usage.held(ctx, m.conn, role)
	if err != nil {
		return err
	}
	for _, stmt := range []string{
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s", own, r),
		fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s", own, r),
		fmt.Sprintf("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %s TO %s", own, r),
	} {
		if _, err := m.conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: %s: %w", stmt, err)
		}
	}
	if !held {
		*given = append(*given, usage, grantRecord{Privilege: "ALL", Own: m.plan.Own})
	}
	m.res.Changes = append(m.res.Changes, fmt.Sprintf("grant use of schema %s and its tables to %s", m.plan.Own, role))
	return nil
}

// grantRecord is one privilege `migrate --grant` gave a role that it did
// not hold: on a table (or one column of it), on a schema, or (Own) on
// everything in the daemon's own schema.
type grantRecord struct {
	Privilege string `json:"privilege"`
	Table     string `json:"table,omitempty"` // quoted, qualified
	OID       uint32 `json:"-"`
	Column    string `json:"column,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Own       string `json:"own,omitempty"`
}

// clause is what follows GRANT for grants of one privilege on one object:
// the column grants of one table are one clause.
func clause(gs []grantRecord) string {
	if gs[0].Column == "" {
		return gs[0].clause()
	}
	cols := make([]string, len(gs))
	for i, g := range gs {
		cols[i] = quoteIdent(g.Column)
	}
	return "UPDATE (" + strings.Join(cols, ", ") + ") ON " + gs[0].Table
}

// clause is what follows GRANT or REVOKE, up to TO or FROM.
func (g grantRecord) clause() string {
	switch {
	case g.Own != "":
		return "ALL ON ALL TABLES IN SCHEMA " + quoteIdent(g.Own)
	case g.Schema != "":
		return g.Privilege + " ON SCHEMA " + quoteIdent(g.Schema)
	case g.Column != "":
		return g.Privilege + " (" + quoteIdent(g.Column) + ") ON " + g.Table
	}
	return g.Privilege + " ON " + g.Table
}

// heldSQL asks whether a role holds a privilege itself, granted to it by
// name (not through PUBLIC or a role it belongs to): what it held before a
// grant is not the daemon's to revoke.
const heldSQL = `
SELECT EXISTS (
  SELECT 1 FROM aclexplode(CASE $1
      WHEN 'schema' THEN (SELECT nspacl FROM pg_namespace WHERE nspname = $2)
      WHEN 'column' THEN (SELECT attacl FROM pg_attribute WHERE attrelid = $3::oid AND attname = $2)
      ELSE (SELECT relacl FROM pg_class WHERE oid = $3::oid) END) a
  WHERE a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $4) AND a.privilege_type = $5)`

func (g grantRecord) held(ctx context.Context, q sqlx.QueryerContext, role string) (bool, error) {
	kind, name := "table", ""
	switch {
	case g.Schema != "":
		kind, name = "schema", g.Schema
	case g.Column != "":
		kind, name = "column", g.Column
	}
	var held bool
	if err := sqlx.GetContext(ctx, q, &held, heldSQL, kind, name, g.OID, role, g.Privilege); err != nil {
		return false, fmt.Errorf("migrate: does %s hold %s already: %w", role, g.clause(), err)
	}
	return held, nil
}

// grantsState is the name, in the own state table, of the record of what
// `migrate --grant` gave each role: {"role": [grant...]}.
const grantsState = "grants"

// recordGrants adds what was given to role to the record. Migrate holds
// its advisory lock, so nobody else writes the record meanwhile.
func (m *migration) recordGrants(ctx context.Context, role string, given []grantRecord) error {
	if m.layout.Own["state"] == nil || len(given) == 0 {
		return nil
	}
	record, err := loadGrants(ctx, m.conn, m.layout.Names)
	if err != nil {
		return err
	}
	for _, g := range given {
		g.OID = 0
		if !slices.Contains(record[role], g) {
			record[role] = append(record[role], g)
		}
	}
	raw, err := json.Marshal(record)
	if err != nil {
		return err
	}
	if _, err := m.conn.ExecContext(ctx, m.layout.Names.SQL(`
INSERT INTO {{.State}} (name, value, updated_at) VALUES ($1, $2::jsonb, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`), grantsState, string(raw)); err != nil {
		return fmt.Errorf("migrate: record the grants to %s: %w", role, err)
	}
	return nil
}

// loadGrants reads the record of grants; none is an empty record.
func loadGrants(ctx context.Context, q sqlx.QueryerContext, n *Names) (map[string][]grantRecord, error) {
	record := map[string][]grantRecord{}
	var raw []byte
	err := sqlx.GetContext(ctx, q, &raw, n.SQL(`SELECT value FROM {{.State}} WHERE name = $1`), grantsState)
	if errors.Is(err, sql.ErrNoRows) {
		return record, nil
	}
	if err != nil {
		return nil, fmt.Errorf("schema: read the record of grants: %w", err)
	}
	if err := json.Unmarshal(raw, &record); err != nil {
		return nil, fmt.Errorf("schema: the record of grants does not parse: %w", err)
	}
	return record, nil
}

// revokeGrants takes back what `migrate --grant` recorded giving, for
// migrate --remove: each role's privileges on the agent's tables and
// schemas, and on the own schema when it is still there (something kept it).
// A role or table gone since is skipped with a line saying so.
func (r *remover) revokeGrants(ctx context.Context, record map[string][]grantRecord) error {
	for _, role := range keysOf(record) {
		var exists bool
		if err := r.conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role); err != nil {
			return fmt.Errorf("migrate --remove: look for role %s: %w", role, err)
		}
		if !exists {
			r.res.Kept = append(r.res.Kept, "grants to role "+role+": the role no longer exists")
			continue
		}
		for _, g := range record[role] {
			if err := r.revoke(ctx, role, g); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *remover) revoke(ctx context.Context, role string, g grantRecord) error {
	var target string
	switch {
	case g.Own != "":
		target = g.Own
	case g.Schema != "":
		target = g.Schema
	}
	var present bool
	var err error
	if target != "" {
		err = r.conn.GetContext(ctx, &present, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, target)
	} else {
		err = r.conn.GetContext(ctx, &present, `SELECT to_regclass($1) IS NOT NULL`, g.Table)
	}
	if err != nil || !present {
		return err // gone with what was dropped: nothing to revoke
	}
	what := strings.ReplaceAll(g.clause(), `"`, "")
	if g.Own != "" {
		what = "use of the tables and sequences in schema " + g.Own
		stmt := "REVOKE ALL ON ALL SEQUENCES IN SCHEMA " + quoteIdent(g.Own) + " FROM " + quoteIdent(role)
		if _, err := r.conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate --remove: %s: %w", stmt, err)
		}
	}
	return r.exec(ctx, "revoke "+what+" from "+role, "REVOKE "+g.clause()+" FROM "+quoteIdent(role))
}
