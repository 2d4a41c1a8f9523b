package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Removal says what Remove dropped and what it kept, one line each.
type Removal struct {
	Dropped []string
	Kept    []string
}

// RemoveRefusal is a removal Remove will not start: the configured own
// schema holds the agent's tables, so "the daemon's own tables" there might
// be the agent's. The CLI maps it to exit code 4.
type RemoveRefusal struct{ Reason string }

func (e *RemoveRefusal) Error() string { return "migrate --remove refused: " + e.Reason }

// Remove drops what Migrate created, whichever jobs are on now (a job
// turned off since may have left objects): the classification trigger and
// its function, the indexes the daemon names on the agent's tables (only
// those that are its own: the name, the table, the uniqueness and method
// it creates them with), its own tables, its own schema when nothing else
// is left in it, and an earlier release's tables; and it revokes what
// `migrate --grant` recorded giving (a privilege the role held before, or
// got from someone else, stays). It keeps the columns it added, with their
// data, and every row of the agent's, the history rows the daemon wrote
// included. Idempotent; it takes Migrate's advisory lock.
func Remove(ctx context.Context, db *sqlx.DB, plan Plan) (*Removal, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate --remove: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return nil, fmt.Errorf("migrate --remove: take the migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey)
	}()
	plan.On = map[Job]bool{Supersession: true, Compaction: true, Tombstones: true}
	if plan.Own == "" {
		plan.Own = "supersessiond"
	}
	l, err := Inspect(ctx, conn, plan)
	if err != nil {
		return nil, err
	}
	for logical, t := range l.Tables {
		if t.Schema == plan.Own && !(logical == History && plan.ownHistory()) {
			return nil, &RemoveRefusal{Reason: fmt.Sprintf("maintenance.database.ownSchema is %s, which holds the agent's table %s; "+
				"the daemon's own schema must be a schema of its own", plan.Own, t.Display())}
		}
	}
	r := &remover{conn: conn, l: l, res: &Removal{}}
	// What migrate --grant gave is read before the own schema goes, and
	// taken back after: by then what was dropped took its grants along.
	grants := map[string][]grantRecord{}
	if l.Own["state"] != nil {
		if grants, err = loadGrants(ctx, conn, l.Names); err != nil {
			return nil, err
		}
	}
	for _, step := range []func(context.Context) error{r.trigger, r.indexes, r.own, r.legacy} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.revokeGrants(ctx, grants); err != nil {
		return nil, err
	}
	r.keptColumns()
	return r.res, nil
}

type remover struct {
	conn *sqlx.Conn
	l    *Layout
	res  *Removal
}

func (r *remover) exec(ctx context.Context, what, stmt string) error {
	if _, err := r.conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("migrate --remove: %s: %w", what, err)
	}
	r.res.Dropped = append(r.res.Dropped, what)
	return nil
}

// trigger drops the change triggers, whichever store they were made for
// (the classification trigger on the attributes, the change trigger on
// Honcho's documents or mem0's collection), then their functions (this
// release's in the own schema, an earlier release's elsewhere).
func (r *remover) trigger(ctx context.Context) error {
	for _, tr := range []struct{ table, name string }{
		{Attributes, "supersessiond_attribute_classified"}, {Documents, storeTriggerName}, {Mem0, storeTriggerName},
	} {
		t := r.l.Tables[tr.table]
		if t == nil {
			continue
		}
		var has bool
		err := r.conn.GetContext(ctx, &has, `SELECT EXISTS (SELECT 1 FROM pg_trigger
			WHERE tgrelid = $1 AND tgname = $2 AND NOT tgisinternal)`, t.OID, tr.name)
		if err != nil {
			return fmt.Errorf("migrate --remove: look for the trigger %s: %w", tr.name, err)
		}
		if has {
			if err := r.exec(ctx, "drop trigger "+tr.name+" on "+t.Display(),
				`DROP TRIGGER IF EXISTS `+quoteIdent(tr.name)+` ON `+t.Qualified()); err != nil {
				return err
			}
		}
	}
	var fns []struct {
		Display string `db:"display"`
		Quoted  string `db:"quoted"`
	}
	err := r.conn.SelectContext(ctx, &fns, `
		SELECT n.nspname || '.' || p.proname || '()' AS display, quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '()' AS quoted
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE (n.nspname = $1 AND p.proname IN ('attribute_classified', 'document_changed', 'mem0_changed'))
		   OR p.proname = 'supersessiond_attribute_classified'
		ORDER BY 1`, r.l.Plan.Own)
	if err != nil {
		return fmt.Errorf("migrate --remove: look for the trigger's function: %w", err)
	}
	for _, fn := range fns {
		if err := r.exec(ctx, "drop function "+fn.Display, `DROP FUNCTION IF EXISTS `+fn.Quoted); err != nil {
			return err
		}
	}
	return nil
}

// indexes drops the daemon's indexes on the agent's tables, whichever
// store they were made for, and names the indexes called like the daemon's
// that it keeps because they are not. (Those on its own history go with
// it, or stay with it: own.)
func (r *remover) indexes(ctx context.Context) error {
	specs := map[string]IndexSpec{} // by name: the shape's variant
	for _, spec := range allIndexes() {
		if spec.When == nil || spec.When(r.l.Names) {
			specs[spec.Name] = spec
		}
	}
	seen := map[uint32]bool{}
	for _, logical := range keysOf(defaultTable) {
		t := r.l.Tables[logical]
		if t == nil || seen[t.OID] || t.Schema == r.l.Plan.Own {
			continue
		}
		seen[t.OID] = true
		for _, ix := range t.Indexes {
			if !strings.HasPrefix(ix.Name, "supersessiond_") {
				continue
			}
			spec, known := specs[ix.Name]
			if !known || spec.Table != logical || spec.Unique != ix.Unique || (spec.Method != "" && spec.Method != ix.Method) {
				r.res.Kept = append(r.res.Kept, fmt.Sprintf("index %s on %s: named like the daemon's, but not one migrate creates there; not dropped",
					ix.Name, t.Display()))
				continue
			}
			if err := r.exec(ctx, fmt.Sprintf("drop index %s on %s", ix.Name, t.Display()),
				`DROP INDEX IF EXISTS `+quoteIdent(t.Schema)+"."+quoteIdent(ix.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// own drops the daemon's own tables, then its schema unless something that
// is not the daemon's was put in it. The record of deleted documents is kept
// while it holds anything: it is the trail of the one irreversible thing the
// daemon does, and may hold the only copy of a document. So is the history
// of a store without one: the only audit trail of its supersessions, and
// the snapshots their undo restores from.
func (r *remover) own(ctx context.Context) error {
	own := r.l.Plan.Own
	keptSome := false
	for _, name := range ownTables {
		if r.l.Own[name] == nil {
			continue
		}
		if name == "deleted_documents" || name == "history" {
			kept, err := r.keep(ctx, name)
			if err != nil {
				return err
			}
			if kept {
				keptSome = true
				continue
			}
		}
		if err := r.exec(ctx, "drop table "+own+"."+name, `DROP TABLE IF EXISTS `+ownTable(own, name)); err != nil {
			return err
		}
	}
	if keptSome {
		return nil // the schema stays with it; its line says so
	}
	var exists bool
	if err := r.conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, own); err != nil {
		return fmt.Errorf("migrate --remove: look for schema %s: %w", own, err)
	}
	if !exists {
		return nil
	}
	_, err := r.conn.ExecContext(ctx, `DROP SCHEMA `+quoteIdent(own)+` RESTRICT`)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "2BP01" { // dependent_objects_still_exist
		var left []string
		_ = r.conn.SelectContext(ctx, &left, `
			SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
			UNION ALL SELECT p.proname || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
			ORDER BY 1 LIMIT 10`, own)
		r.res.Kept = append(r.res.Kept, fmt.Sprintf("schema %s: it holds objects that are not the daemon's (%s); not dropped",
			own, strings.Join(left, ", ")))
		return nil
	}
	if err != nil {
		return fmt.Errorf("migrate --remove: drop schema %s: %w", own, err)
	}
	r.res.Dropped = append(r.res.Dropped, "drop schema "+own)
	return nil
}

// keep reports whether an own table that is kept while it holds rows does,
// and if so says that it is kept and how to drop it.
func (r *remover) keep(ctx context.Context, name string) (bool, error) {
	if name == "deleted_documents" {
		return r.keepDeleted(ctx)
	}
	var n int64
	table := ownTable(r.l.Plan.Own, name)
	if err := r.conn.GetContext(ctx, &n, `SELECT count(*) FROM `+table); err != nil {
		return false, fmt.Errorf("migrate --remove: count the rows of %s.%s: %w", r.l.Plan.Own, name, err)
	}
	if n == 0 {
		return false, nil
	}
	r.res.Kept = append(r.res.Kept, fmt.Sprintf("table %s.history and schema %s: the audit trail of a store without memory_history, %d events "+
		"(supersessions, proposals, reviews, and the snapshots undo restores from); not dropped: DROP TABLE %s; DROP SCHEMA %s when you no longer need it",
		r.l.Plan.Own, r.l.Plan.Own, n, table, r.l.Names.Own))
	return true, nil
}

// keepDeleted reports whether the record of deleted documents holds rows,
// and if so says that it is kept and how to drop it.
func (r *remover) keepDeleted(ctx context.Context) (bool, error) {
	var n struct {
		Records int64 `db:"records"`
		Copies  int64 `db:"copies"`
	}
	table := r.l.Names.Deleted
	if err := r.conn.GetContext(ctx, &n, `SELECT count(*) AS records, count(document) AS copies FROM `+table); err != nil {
		return false, fmt.Errorf("migrate --remove: count the record of deleted documents: %w", err)
	}
	if n.Records == 0 {
		return false, nil
	}
	r.res.Kept = append(r.res.Kept, fmt.Sprintf("table %s.deleted_documents and schema %s: the record of %d hard-deleted documents, %d of them still restorable "+
		"(supersessiond reconcile --restore); not dropped: DROP TABLE %s; DROP SCHEMA %s when you no longer need it",
		r.l.Plan.Own, r.l.Plan.Own, n.Records, n.Copies, table, r.l.Names.Own))
	return true, nil
}

// legacy drops an earlier release's tables, kept in the agent's schema.
func (r *remover) legacy(ctx context.Context) error {
	for _, full := range r.l.Legacy {
		schemaName, name, _ := strings.Cut(full, ".")
		if err := r.exec(ctx, "drop table "+full+" (an earlier release's)",
			`DROP TABLE IF EXISTS `+quoteIdent(schemaName)+"."+quoteIdent(name)); err != nil {
			return err
		}
	}
	return nil
}

// keptColumns names the columns SPEC §4 marks as added that the agent's
// tables have: Remove keeps them and their data (the stack may have had
// some of them before migrate, and their values are the agent's record).
func (r *remover) keptColumns() {
	seen := map[string]bool{}
	for _, job := range Jobs {
		for _, c := range r.l.Plan.requiredColumns(job) {
			t := r.l.Tables[c.table]
			if c.added == "" || !t.hasColumn(c.name) || seen[t.Display()+"."+c.name] {
				continue
			}
			seen[t.Display()+"."+c.name] = true
			r.res.Kept = append(r.res.Kept, fmt.Sprintf("column %s.%s, with its data (migrate adds it where missing; if the stack does not use it: "+
				"ALTER TABLE %s DROP COLUMN %s)", t.Display(), c.name, t.Qualified(), quoteIdent(c.name)))
		}
	}
	if h := r.l.Tables[History]; h != nil && !r.l.Plan.ownHistory() {
		r.res.Kept = append(r.res.Kept, "the rows the daemon wrote in "+h.Display()+" (changed_by supersessiond:*): they are the agent's audit trail")
	}
}
