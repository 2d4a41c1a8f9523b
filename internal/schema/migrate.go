package schema

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// migrateLockKey is the advisory lock that serialises concurrent `migrate`
// runs (two daemons starting at once, a deploy script racing an operator).
const migrateLockKey = 7203495121

// Options for Migrate.
type Options struct {
	// Reference also creates the absent reference tables of the jobs that
	// are on.
	Reference bool
	// Grant, when set, grants this role what the jobs that are on need.
	Grant  string
	Logger *slog.Logger
}

// Result says what Migrate did, one line per change.
type Result struct {
	Changes []string
	Layout  *Layout // the database after the run
}

// CollisionError is a reference table that would collide with or shadow a
// table of the same name the stack already has in another schema on the
// search path. The CLI maps it to exit code 3.
type CollisionError struct {
	Table, Target, Existing string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("not creating %s: the stack already has %s, on the search path; creating the reference table would collide with "+
		"or shadow it. Point maintenance.tables or maintenance.database.schema at the stack's table, or turn off the job that needs it",
		e.Target, e.Existing)
}

// Migrate idempotently brings the daemon's objects up to date for the jobs
// that are on: its own schema and tables (moving an earlier release's
// there), the added columns, the indexes the jobs' statements are planned
// around (never one the stack already has an equivalent of), the
// classification trigger, and on request the reference tables and a role's
// grants. It only adds. An advisory lock serialises concurrent runs.
func Migrate(ctx context.Context, db *sqlx.DB, plan Plan, opts Options) (*Result, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return nil, fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey)
	}()
	m := &migration{conn: conn, plan: plan, res: &Result{}}
	if m.plan.Own == "" {
		m.plan.Own = "supersessiond"
	}
	if opts.Reference {
		if err := m.reference(ctx); err != nil {
			return nil, err
		}
	}
	if err := m.inspect(ctx); err != nil {
		return nil, err
	}
	for _, job := range Jobs {
		if r := m.layout.Reports[job]; r.On && len(r.Problems) > 0 && !onlyPrivileges(r) {
			return nil, &SchemaError{Missing: []string{string(job) + ": " + r.Line()}}
		}
	}
	steps := []func(context.Context) error{m.own, m.legacy, m.columns, m.indexes, m.trigger}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if opts.Grant != "" {
		if err := m.inspect(ctx); err != nil { // the objects just created
			return nil, err
		}
		if err := m.grant(ctx, opts.Grant); err != nil {
			return nil, err
		}
	}
	if err := m.inspect(ctx); err != nil {
		return nil, err
	}
	m.res.Layout = m.layout
	return m.res, nil
}

// onlyPrivileges: the connecting role's own missing privileges do not stop
// migrate (it may be about to grant them, or run as another role).
func onlyPrivileges(r *Report) bool {
	for _, p := range r.Problems {
		if !strings.HasPrefix(p, "role ") {
			return false
		}
	}
	return true
}

type migration struct {
	conn   *sqlx.Conn
	plan   Plan
	layout *Layout
	res    *Result
}

func (m *migration) inspect(ctx context.Context) error {
	l, err := Inspect(ctx, m.conn, m.plan)
	if err != nil {
		return err
	}
	m.layout = l
	return nil
}

func (m *migration) exec(ctx context.Context, change, stmt string) error {
	if _, err := m.conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("migrate: %s: %w", change, err)
	}
	m.res.Changes = append(m.res.Changes, change)
	return nil
}

// reference creates the absent reference tables of the jobs that are on, in
// the configured schema (or the first of the search path), refusing to
// create one whose name the search path would resolve to another table.
func (m *migration) reference(ctx context.Context) error {
	if err := m.inspect(ctx); err != nil {
		return err
	}
	var target string
	if err := m.conn.GetContext(ctx, &target, `SELECT coalesce(nullif($1, ''), current_schema())`, m.plan.Schema); err != nil {
		return fmt.Errorf("migrate: find the schema to create reference tables in: %w", err)
	}
	if target == "" {
		return fmt.Errorf("migrate: no schema to create the reference tables in: set maintenance.database.schema, or a search_path")
	}
	data := referenceData{Names: m.layout.Names}
	aspectSchema, _ := m.plan.physical(Aspects)
	if t := m.layout.Tables[Aspects]; t != nil {
		aspectSchema = t.Schema
	}
	data.Entities = quoteIdent(coalesce(aspectSchema, target)) + "." + quoteIdent("entities")
	created := map[string]bool{}
	for _, job := range Jobs {
		if !m.plan.On[job] {
			continue
		}
		for _, logical := range m.plan.referenceTables(job) {
			if created[logical] || (logical != "entities" && m.layout.Tables[logical] != nil) {
				continue
			}
			schemaName, name := coalesce(aspectSchema, target), "entities"
			if logical != "entities" {
				schemaName, name = m.plan.physical(logical)
				schemaName = coalesce(schemaName, target)
			} else if t, err := (catalog{q: m.conn}).resolve(ctx, schemaName, name); err != nil || t != nil {
				created[logical] = true
				if err != nil {
					return err
				}
				continue
			}
			if err := m.collision(ctx, schemaName, name); err != nil {
				return err
			}
			data.Names = m.referenceNames(target)
			if err := m.exec(ctx, "create reference table "+schemaName+"."+name, render(referenceDDL[logical], data, data.Names)); err != nil {
				return err
			}
			created[logical] = true
		}
	}
	return nil
}

type referenceData struct {
	*Names
	Entities string
}

// referenceNames are the names the reference tables get: each one's
// configured name in its configured schema, else in target.
func (m *migration) referenceNames(target string) *Names {
	n := *m.layout.Names
	q := func(logical string) string {
		if t := m.layout.Tables[logical]; t != nil {
			return t.Qualified()
		}
		s, name := m.plan.physical(logical)
		return quoteIdent(coalesce(s, target)) + "." + quoteIdent(name)
	}
	n.Attributes, n.Aspects, n.History, n.Memories = q(Attributes), q(Aspects), q(History), q(Memories)
	n.Messages, n.Events, n.Documents, n.Sources = q(Messages), q(CompactionEvents), q(Documents), q(DocumentSources)
	return &n
}

// collision refuses a table whose name already exists in another schema on
// the search path (or whose name exists there as something else).
func (m *migration) collision(ctx context.Context, schemaName, name string) error {
	var existing []string
	err := m.conn.SelectContext(ctx, &existing, `
		SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relname = $1 AND (n.nspname = ANY(current_schemas(false)) OR n.nspname = $2)
		  AND NOT (n.nspname = $2 AND c.relkind IN ('r', 'p'))
		ORDER BY array_position(current_schemas(false), n.nspname)`, name, schemaName)
	if err != nil {
		return fmt.Errorf("migrate: look for tables named %s: %w", name, err)
	}
	if len(existing) > 0 {
		return &CollisionError{Table: name, Target: schemaName + "." + name, Existing: existing[0]}
	}
	return nil
}

// own creates the own schema and the tables the jobs that are on use.
func (m *migration) own(ctx context.Context) error {
	l := m.layout
	need := map[string]bool{}
	for _, job := range Jobs {
		if m.plan.On[job] {
			for _, name := range m.plan.ownTablesOf(job) {
				need[name] = true
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	var exists bool
	if err := m.conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, m.plan.Own); err != nil {
		return fmt.Errorf("migrate: look for schema %s: %w", m.plan.Own, err)
	}
	if !exists {
		if err := m.exec(ctx, "create schema "+m.plan.Own, `CREATE SCHEMA IF NOT EXISTS `+l.Names.Own); err != nil {
			return err
		}
	}
	if err := m.moveLegacy(ctx); err != nil {
		return err
	}
	for _, name := range ownTables {
		if !need[name] || l.Own[name] != nil {
			continue
		}
		if err := m.exec(ctx, "create table "+m.plan.Own+"."+name, l.Names.SQL(ownDDL[name])); err != nil {
			return err
		}
	}
	// An earlier release's change records name no attribute.
	if c := l.Own["changes"]; c != nil && need["changes"] && !c.hasColumn("attribute_id") {
		if err := m.exec(ctx, "add column attribute_id to "+m.plan.Own+".changes",
			l.Names.SQL(`ALTER TABLE {{.Changes}} ADD COLUMN IF NOT EXISTS attribute_id text`)); err != nil {
			return err
		}
	}
	if need["history"] && l.Own["history"] == nil {
		return m.inspect(ctx) // a store's history, just made: its indexes come next
	}
	return nil
}

// moveLegacy moves an earlier release's tables (in the agent's schema) into
// the own schema under their new names, keeping their rows (cursors, leases,
// pending classifications, cached verdicts); goose's bookkeeping table goes.
func (m *migration) moveLegacy(ctx context.Context) error {
	for _, full := range m.layout.Legacy {
		schemaName, name, _ := strings.Cut(full, ".")
		src := quoteIdent(schemaName) + "." + quoteIdent(name)
		target := legacyNames[name]
		if target == "" {
			if err := m.exec(ctx, "drop "+full+" (an earlier release's migration bookkeeping)", `DROP TABLE IF EXISTS `+src); err != nil {
				return err
			}
			continue
		}
		if m.layout.Own[target] != nil {
			m.res.Changes = append(m.res.Changes, fmt.Sprintf("left %s in place: %s.%s exists already", full, m.plan.Own, target))
			continue
		}
		if err := m.exec(ctx, fmt.Sprintf("move %s to %s.%s", full, m.plan.Own, target),
			`ALTER TABLE `+src+` SET SCHEMA `+m.layout.Names.Own); err != nil {
			return err
		}
		if err := m.exec(ctx, "rename "+m.plan.Own+"."+name+" to "+target,
			`ALTER TABLE `+m.layout.Names.Own+"."+quoteIdent(name)+` RENAME TO `+quoteIdent(target)); err != nil {
			return err
		}
	}
	if len(m.layout.Legacy) > 0 {
		return m.inspect(ctx)
	}
	return nil
}

// legacy drops an earlier release's trigger function (in the agent's
// schema) once the trigger calls the own schema's.
func (m *migration) legacy(ctx context.Context) error {
	var fns []string
	err := m.conn.SelectContext(ctx, &fns, `
		SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = 'supersessiond_attribute_classified' AND n.nspname <> $1`, m.plan.Own)
	if err != nil {
		return fmt.Errorf("migrate: look for an earlier release's trigger function: %w", err)
	}
	if len(fns) == 0 {
		return nil
	}
	if err := m.trigger(ctx); err != nil {
		return err
	}
	for _, fn := range fns {
		if err := m.exec(ctx, "drop "+fn+" (an earlier release's trigger function)", `DROP FUNCTION IF EXISTS `+fn); err != nil {
			return err
		}
	}
	return nil
}

// columns adds the columns SPEC §4 marks as added, for the jobs that are on.
func (m *migration) columns(ctx context.Context) error {
	for _, job := range Jobs {
		if !m.plan.On[job] {
			continue
		}
		for _, c := range m.layout.Plan.requiredColumns(job) {
			t := m.layout.Tables[c.table]
			if c.added == "" || t == nil || t.hasColumn(c.name) {
				continue
			}
			stmt := fmt.Sprintf(`ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s`, t.Qualified(), quoteIdent(c.name), c.added)
			if err := m.exec(ctx, fmt.Sprintf("add column %s.%s", t.Display(), c.name), stmt); err != nil {
				return err
			}
			t.Columns[c.name] = Column{Name: c.name}
		}
	}
	return nil
}

// indexes creates the indexes the jobs that are on are planned around,
// unless the stack has an equivalent one.
func (m *migration) indexes(ctx context.Context) error {
	for _, job := range Jobs {
		if !m.plan.On[job] {
			continue
		}
		for _, spec := range m.layout.Plan.indexesOf(job) {
			t := m.layout.Tables[spec.Table]
			if t == nil || (spec.When != nil && !spec.When(m.layout.Names)) || t.index(spec.Name) != nil {
				continue
			}
			if !spec.ByName && t.covering(spec) != nil {
				continue
			}
			if err := m.exec(ctx, fmt.Sprintf("create index %s on %s", spec.Name, t.Display()), m.layout.Names.SQL(spec.DDL)); err != nil {
				return err
			}
			t.Indexes = append(t.Indexes, Index{Name: spec.Name})
		}
	}
	return nil
}

// trigger installs the store's change trigger (supersession only): the
// classification trigger on the attributes, or the change trigger on a
// store's table.
func (m *migration) trigger(ctx context.Context) error {
	name, table := m.plan.triggerName()
	t := m.layout.Tables[table]
	if !m.plan.On[Supersession] || t == nil {
		return nil
	}
	n := m.layout.Names
	fn, stmts := triggerFunctionDDL, []string{n.SQL(triggerDDL[0]), n.SQL(triggerDDL[1])}
	if s := m.plan.storeOf(); s != StoreAttributes {
		fn = storeTriggerFunctions[s].ddl
		data := struct {
			*Names
			Table, Function string
		}{n, t.Qualified(), m.plan.triggerFunction()}
		stmts = []string{render(storeTriggerDDL[0], data, n), render(storeTriggerDDL[1], data, n)}
	}
	if err := m.exec(ctx, "create function "+m.plan.Own+"."+m.plan.triggerFunction()+"()", n.SQL(fn)); err != nil {
		return err
	}
	if m.layout.Trigger {
		m.res.Changes = m.res.Changes[:len(m.res.Changes)-1] // replaced, not new: not worth a line
		return nil
	}
	for _, stmt := range stmts {
		if _, err := m.conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: install the change trigger %s: %w", name, err)
		}
	}
	m.res.Changes = append(m.res.Changes, "create trigger "+name+" on "+t.Display())
	m.layout.Trigger = true
	return nil
}

func coalesce(s ...string) string {
	if i := slices.IndexFunc(s, func(v string) bool { return v != "" }); i >= 0 {
		return s[i]
	}
	return ""
}
