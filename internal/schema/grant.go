package schema

import (
	"context"
	"fmt"
	"strings"
)

// grant gives a role exactly what the jobs that are on need (privilegesOf):
// USAGE on the schemas, the table privileges (UPDATE only on the columns the
// daemon sets), and read-write use of its own tables and sequences. Run by
// the tables' owner: `supersessiond migrate --grant ROLE`.
func (m *migration) grant(ctx context.Context, role string) error {
	r := quoteIdent(role)
	l := m.layout
	schemas := map[string]bool{}
	for _, job := range Jobs {
		if !m.plan.On[job] {
			continue
		}
		for _, p := range privilegesOf[job] {
			t := l.Tables[p.table]
			if t == nil {
				continue
			}
			schemas[t.Schema] = true
			stmt := fmt.Sprintf("GRANT %s ON %s TO %s", p.kind, t.Qualified(), r)
			what := p.kind
			if p.kind == "UPDATE" {
				var cols []string
				for _, c := range p.columns {
					if t.hasColumn(c) {
						cols = append(cols, quoteIdent(c))
					}
				}
				if len(cols) == 0 {
					continue
				}
				stmt = fmt.Sprintf("GRANT UPDATE (%s) ON %s TO %s", strings.Join(cols, ", "), t.Qualified(), r)
				what = "UPDATE (" + strings.Join(p.columns, ", ") + ")"
			}
			if err := m.exec(ctx, fmt.Sprintf("grant %s on %s to %s", what, t.Display(), role), stmt); err != nil {
				return err
			}
		}
	}
	for _, s := range keysOf(schemas) {
		if err := m.exec(ctx, fmt.Sprintf("grant USAGE on schema %s to %s", s, role), fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s", quoteIdent(s), r)); err != nil {
			return err
		}
	}
	if len(l.Own) == 0 {
		return nil
	}
	own := l.Names.Own
	for _, stmt := range []string{
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s", own, r),
		fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s", own, r),
		fmt.Sprintf("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %s TO %s", own, r),
	} {
		if _, err := m.conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: %s: %w", stmt, err)
		}
	}
	m.res.Changes = append(m.res.Changes, fmt.Sprintf("grant use of schema %s and its tables to %s", m.plan.Own, role))
	return nil
}
