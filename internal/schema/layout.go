package schema

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Layout is the database as the daemon sees it, for one configuration:
// where each of the agent's tables is and what shape it has, the daemon's
// own objects, and for each job whether it can run and why not.
type Layout struct {
	Plan    Plan
	Tables  map[string]*Table // logical name → the table found (absent: no key)
	Own     map[string]*Table // the daemon's tables, by their name in the own schema
	Legacy  []string          // the daemon's tables of an earlier release, outside the own schema
	Trigger bool              // the store's change trigger is installed and calls the own schema's function
	Names   *Names
	Reports map[Job]*Report
	User    string // the connecting role
}

// Report says whether a job can run against the database.
type Report struct {
	Job Job
	On  bool
	// Problems stop the job: something its statements need is missing or
	// incompatible, and migrate cannot add it.
	Problems []string
	// Pending is what `supersessiond migrate` adds (own objects, added
	// columns, indexes, the trigger): the job cannot run until it has.
	Pending []string
	// Refusals are rows the database would refuse at run time (a stack's
	// constraint): the job runs, skipping those rows with their reason,
	// but check does not call the database fine.
	Refusals []string
	// Later is what this release cannot do on a database it recognises
	// (a store the engine does not run on yet): the job does not run, but
	// migrate still adds what it will need.
	Later []string
	// Notes describe the shape found and how the daemon adapts to it.
	Notes []string
}

// Runnable reports whether the job may run: on, nothing missing.
func (r *Report) Runnable() bool {
	return r.On && len(r.Problems) == 0 && len(r.Pending) == 0 && len(r.Later) == 0
}

// OK reports whether check calls the job fine: off, or runnable with no row
// the database would refuse.
func (r *Report) OK() bool { return !r.On || (r.Runnable() && len(r.Refusals) == 0) }

// Line is the job's one line of `check`.
func (r *Report) Line() string {
	switch {
	case !r.On:
		return "off (" + strings.Replace(offSetting[r.Job], ": false", " is false", 1) + ")"
	case len(r.Problems) > 0:
		return "cannot run: " + strings.Join(r.Problems, "; ") + "; or turn it off with " + offSetting[r.Job]
	case len(r.Pending) > 0:
		return "needs `supersessiond migrate`: " + strings.Join(r.Pending, "; ")
	case len(r.Later) > 0:
		return "recognised, not run by this release: " + strings.Join(append(slices.Clone(r.Notes), r.Later...), "; ") +
			"; meanwhile turn it off with " + offSetting[r.Job]
	case len(r.Refusals) > 0:
		return "runs, but the database would refuse some of its rows: " + strings.Join(r.Refusals, "; ") +
			"; or turn it off with " + offSetting[r.Job]
	}
	if len(r.Notes) > 0 {
		return "ok (" + strings.Join(r.Notes, "; ") + ")"
	}
	return "ok"
}

// ownTables are the daemon's own tables, in the own schema. llm_verdicts
// is an earlier release's cache of pair verdicts, no longer made (the LLM
// is asked a window at a time): migrate --remove still takes it away.
var ownTables = []string{"state", "leases", "classified", "changes", "llm_verdicts", "llm_windows", "llm_spend", "aspect_keys", "deleted_documents", "history"}

// legacyNames are the daemon's tables of releases that kept them in the
// agent's schema, and what they are called in the own schema.
var legacyNames = map[string]string{
	"supersessiond_state":             "state",
	"supersessiond_leases":            "leases",
	"supersessiond_classified":        "classified",
	"supersessiond_llm_verdicts":      "llm_verdicts",
	"supersessiond_schema_migrations": "",
}

// Inspect reads the catalog and evaluates every job of the plan against it.
func Inspect(ctx context.Context, db sqlx.QueryerContext, plan Plan) (*Layout, error) {
	if plan.Own == "" {
		plan.Own = "supersessiond"
	}
	c := catalog{q: db}
	l := &Layout{Plan: plan, Tables: map[string]*Table{}, Own: map[string]*Table{}, Reports: map[Job]*Report{}}
	if err := sqlx.GetContext(ctx, db, &l.User, `SELECT current_user`); err != nil {
		return nil, fmt.Errorf("schema: who am I: %w", err)
	}
	// Found one by one (each the way its name resolves), described at once.
	var found []*Table
	for logical := range defaultTable {
		s, n := plan.physical(logical)
		t, err := c.resolve(ctx, s, n)
		if err != nil {
			return nil, err
		}
		if t != nil {
			l.Tables[logical] = t
			found = append(found, t)
		}
	}
	for _, name := range ownTables {
		t, err := c.resolve(ctx, plan.Own, name)
		if err != nil {
			return nil, err
		}
		if t != nil {
			l.Own[name] = t
			found = append(found, t)
		}
	}
	if err := c.describe(ctx, found...); err != nil {
		return nil, err
	}
	if err := l.findLegacy(ctx, db); err != nil {
		return nil, err
	}
	if err := l.findTrigger(ctx, db); err != nil {
		return nil, err
	}
	l.Plan.watchCompaction = l.clawbolt()
	l.Names = l.names()
	for _, job := range Jobs {
		r := &Report{Job: job, On: plan.On[job]}
		l.Reports[job] = r
		if r.On {
			l.evaluate(r)
		}
	}
	if err := l.checkPrivileges(ctx, db); err != nil {
		return nil, err
	}
	return l, nil
}

// physical is where a logical table should be: (schema, name), schema ""
// meaning the search path.
func (p Plan) physical(logical string) (string, string) {
	if logical == History && p.ownHistory() {
		return p.ownSchema(), "history"
	}
	name := p.Tables[logical]
	if name == "" {
		name = defaultTable[logical]
	}
	if s, n, ok := strings.Cut(name, "."); ok {
		return s, n
	}
	return p.Schema, name
}

func (l *Layout) findLegacy(ctx context.Context, db sqlx.QueryerContext) error {
	var rows []struct {
		Schema string `db:"nspname"`
		Name   string `db:"relname"`
	}
	err := sqlx.SelectContext(ctx, db, &rows, `
		SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND c.relname = ANY($1) AND n.nspname <> $2 ORDER BY 1, 2`,
		stringArray(keysOf(legacyNames)), l.Plan.Own)
	if err != nil {
		return fmt.Errorf("schema: look for an earlier release's tables: %w", err)
	}
	for _, r := range rows {
		l.Legacy = append(l.Legacy, r.Schema+"."+r.Name)
	}
	return nil
}

func (l *Layout) findTrigger(ctx context.Context, db sqlx.QueryerContext) error {
	name, table := l.Plan.triggerName()
	t := l.Tables[table]
	if t == nil {
		return nil
	}
	// Current: calls the store's function in the own schema and fires on
	// every column update (an earlier release's fired on aspect_id only).
	err := sqlx.GetContext(ctx, db, &l.Trigger, `
		SELECT EXISTS (SELECT 1 FROM pg_trigger tg JOIN pg_proc p ON p.oid = tg.tgfoid JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE tg.tgrelid = $1 AND tg.tgname = $4 AND p.proname = $5 AND n.nspname = $2 AND NOT tg.tgisinternal
			  AND pg_get_triggerdef(tg.oid) LIKE '%' || $3 || '%')`,
		t.OID, l.Plan.Own, triggerEvents, name, l.Plan.triggerFunction())
	if err != nil {
		return fmt.Errorf("schema: look for the change trigger %s: %w", name, err)
	}
	return nil
}

// names derives the statements' names and shape flags from what was found.
// A table that is absent keeps the name it was expected under, so that a
// statement mentioning it still renders (and fails, if ever run, by name).
func (l *Layout) names() *Names {
	q := func(logical string) string {
		if t := l.Tables[logical]; t != nil {
			return t.Qualified()
		}
		s, n := l.Plan.physical(logical)
		if s == "" {
			return quoteIdent(n)
		}
		return quoteIdent(s) + "." + quoteIdent(n)
	}
	own := l.Plan.Own
	n := &Names{
		Attributes: q(Attributes), Aspects: q(Aspects), History: q(History), Memories: q(Memories),
		Messages: q(Messages), Events: q(CompactionEvents), Documents: q(Documents), Sources: q(DocumentSources),
		Mem0: q(Mem0), Store: l.Plan.storeOf(), Levels: l.Plan.HonchoLevels, CompactionWatch: l.Plan.watchCompaction, Own: quoteIdent(own), State: ownTable(own, "state"), Leases: ownTable(own, "leases"),
		Outbox: ownTable(own, "classified"), Changes: ownTable(own, "changes"),
		Keys: ownTable(own, "aspect_keys"), Deleted: ownTable(own, "deleted_documents"),
		Windows: ownTable(own, "llm_windows"), Spend: ownTable(own, "llm_spend"),
	}
	if a := l.Tables[Aspects]; a.hasColumn("id") && a.hasColumn("agent_id") && a.hasColumn("name") {
		n.HasAspects = true
	}
	if h := l.Tables[History]; h != nil {
		if col, ok := h.Columns["metadata"]; ok && col.Base != "jsonb" {
			n.MetaCast = col.Base
		}
	}
	n.ToolCalls = l.Tables[Messages].hasColumn("tool_calls")
	if d := l.Tables[Documents]; d != nil {
		n.SupersededBy = d.hasColumn("superseded_by")
		n.Embedding = d.hasColumn("embedding")
		n.SyncState = d.hasColumn("sync_state")
		if col, ok := d.Columns["source_ids"]; ok {
			switch {
			case col.Base == "jsonb" && !col.Array:
				n.SourceIDs = "jsonb"
			case col.Array && slices.Contains(textTypes, col.Base):
				n.SourceIDs, n.SourceArray = "array", col.Base+"[]"
			}
		}
	}
	if s := l.Tables[DocumentSources]; s.hasColumn("derived_id") && s.hasColumn("source_id") && s.hasColumn("workspace_name") {
		n.HasSources = true
	}
	return n
}

// evaluate fills a job's report.
func (l *Layout) evaluate(r *Report) {
	job := r.Job
	for _, t := range l.Plan.tablesOf(job) {
		if l.Tables[t.name] == nil && !t.optional && !(t.name == History && l.Plan.ownHistory()) {
			r.Problems = append(r.Problems, l.missingTable(job, t.name))
		}
	}
	if len(r.Problems) > 0 {
		if other := l.otherStores(); job == Supersession && other != "" {
			r.Problems = append(r.Problems, other)
		} else {
			r.Problems = append(r.Problems, "point maintenance.tables at the stack's tables, or create the reference tables "+
				"(a new install) with `supersessiond migrate --reference-schema`")
		}
		return
	}
	l.checkColumns(r)
	l.checkNotNull(r)
	switch job {
	case Supersession:
		l.supersessionShape(r)
	case Compaction:
		if l.Plan.watching(job) {
			l.watchShape(r)
		} else {
			l.compactionShape(r)
		}
	case Tombstones:
		l.tombstoneShape(r)
	}
	l.checkIndexes(r)
	l.checkOwn(r)
	if name, table := l.Plan.triggerName(); job == Supersession && !l.Trigger {
		r.Pending = append(r.Pending, "the change trigger "+name+" on "+l.Tables[table].Display())
	}
}

// missingTable explains a table that is not there, naming where it looked
// and, for stacks whose shape tells what they are, what that means.
func (l *Layout) missingTable(job Job, logical string) string {
	s, n := l.Plan.physical(logical)
	where := "on the search path"
	if s != "" {
		where = "in schema " + s
	}
	msg := fmt.Sprintf("table %s not found %s (maintenance.tables.%s)", n, where, logical)
	if job == Supersession && logical == storeTable[l.Plan.storeOf()] && l.Plan.storeOf() != StoreAttributes {
		msg = fmt.Sprintf("%s: %s", storeSetting(l.Plan.storeOf()), msg)
	}
	return msg
}

// clawbolt recognises clawbolt's compaction tables.
func (l *Layout) clawbolt() bool {
	ev, msgs := l.Tables[CompactionEvents], l.Tables[Messages]
	return ev.hasColumn("user_id") && !ev.hasColumn("agent_id") && msgs.hasColumn("session_id") && !msgs.hasColumn("agent_id")
}

func (l *Layout) checkColumns(r *Report) {
	for _, c := range l.Plan.requiredColumns(r.Job) {
		t := l.Tables[c.table]
		if t == nil {
			continue // an optional table
		}
		col, ok := t.Columns[c.name]
		switch {
		case !ok && c.added != "":
			r.Pending = append(r.Pending, fmt.Sprintf("column %s.%s", t.Display(), c.name))
		case !ok && !c.optional:
			r.Problems = append(r.Problems, fmt.Sprintf("column %s.%s not found", t.Display(), c.name))
		case !ok:
		case c.types != nil && (col.Array || !slices.Contains(c.types, col.Base)):
			r.Problems = append(r.Problems, fmt.Sprintf("column %s.%s is %s, not %s", t.Display(), c.name, col.Type, strings.Join(c.types, " or ")))
		case c.nullWritten && col.NotNull:
			r.Problems = append(r.Problems, fmt.Sprintf("column %s.%s is NOT NULL, but the daemon sets it to NULL", t.Display(), c.name))
		}
	}
}

// checkNotNull finds NOT NULL columns without a default in the tables the
// job inserts into that its inserts leave empty: every such insert would be
// refused.
func (l *Layout) checkNotNull(r *Report) {
	for _, logical := range []string{History, Memories} {
		if r.Job == Supersession && logical == Memories {
			continue
		}
		t := l.Tables[logical]
		if t == nil || (r.Job == Tombstones) {
			continue
		}
		var empty []string
		for _, col := range t.Columns {
			if col.NotNull && !col.HasDefault && !slices.Contains(written[logical], col.Name) {
				empty = append(empty, col.Name)
			}
		}
		sort.Strings(empty)
		for _, name := range empty {
			r.Problems = append(r.Problems, fmt.Sprintf("column %s.%s is NOT NULL without a default, and the daemon's inserts do not fill it", t.Display(), name))
		}
	}
}

func (l *Layout) supersessionShape(r *Report) {
	if len(r.Problems) == 0 {
		l.storeShape(r)
	}
	if l.Plan.ownHistory() {
		return
	}
	h := l.Tables[History]
	if l.Names.MetaCast != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("%s.metadata is %s: read and indexed as jsonb", h.Display(), l.Names.MetaCast))
	}
	if !l.Names.HasAspects {
		r.Notes = append(r.Notes, "no aspects table: aspect names are not given to the LLM")
	}
	l.historyForeignKeys(r)
}

// historyForeignKeys: a foreign key from memory_history.memory_id to the
// memories table refuses the history rows of attributes that have no memory
// (their memory_id is the attribute's id, SPEC §5): those supersessions are
// skipped at run time.
func (l *Layout) historyForeignKeys(r *Report) {
	h := l.Tables[History]
	for _, fk := range h.ForeignKeys {
		if slices.Contains(fk.Columns, "memory_id") {
			r.Refusals = append(r.Refusals, fmt.Sprintf("foreign key %s on %s (%s) refuses the history rows of attributes without a memory_id, "+
				"whose memory_id is the attribute's id (SPEC §5); drop it with ALTER TABLE %s DROP CONSTRAINT %s",
				fk.Name, h.Display(), fk.Def, h.Qualified(), quoteIdent(fk.Name)))
		}
	}
}

func (l *Layout) compactionShape(r *Report) {
	ev := l.Tables[CompactionEvents]
	for _, def := range ev.Checks {
		if strings.Contains(def, "status") && !strings.Contains(def, "'failed'") {
			r.Problems = append(r.Problems, fmt.Sprintf("%s has %s, which refuses status 'failed' (an event given up after maxAttempts)", ev.Display(), def))
		}
	}
	if r.Job == Compaction && l.Tables[History] != nil {
		l.historyForeignKeys(r)
	}
}

func (l *Layout) tombstoneShape(r *Report) {
	d := l.Tables[Documents]
	n := l.Names
	var shape []string
	if n.SupersededBy {
		shape = append(shape, "superseded_by")
	} else {
		shape = append(shape, "no superseded_by: every cited tombstone is kept")
	}
	if col, ok := d.Columns["source_ids"]; ok {
		if n.SourceIDs == "" {
			r.Problems = append(r.Problems, fmt.Sprintf("column %s.source_ids is %s, not jsonb or a text array", d.Display(), col.Type))
		} else {
			shape = append(shape, "source_ids "+col.Type)
		}
	}
	if n.HasSources {
		shape = append(shape, "edges in "+l.Tables[DocumentSources].Display())
	}
	if n.SourceIDs == "" && !n.HasSources && len(r.Problems) == 0 {
		shape = append(shape, "no citations recorded (neither source_ids nor document_sources): every tombstone is deleted")
	}
	r.Notes = append(r.Notes, d.Display()+": "+strings.Join(shape, ", "))
}

func (l *Layout) checkIndexes(r *Report) {
	for _, spec := range l.Plan.indexesOf(r.Job) {
		if spec.When != nil && !spec.When(l.Names) {
			continue
		}
		t := l.Tables[spec.Table]
		if t == nil {
			continue
		}
		if t.index(spec.Name) != nil {
			continue
		}
		if !spec.ByName {
			if ix := t.covering(spec); ix != nil {
				r.Notes = append(r.Notes, fmt.Sprintf("uses the stack's index %s", ix.Name))
				continue
			}
		}
		r.Pending = append(r.Pending, fmt.Sprintf("index %s on %s", spec.Name, t.Display()))
	}
}

func (l *Layout) checkOwn(r *Report) {
	for _, name := range l.Plan.ownTablesOf(r.Job) {
		if l.Own[name] == nil {
			r.Pending = append(r.Pending, fmt.Sprintf("table %s.%s", l.Plan.Own, name))
		}
	}
	if c := l.Own["changes"]; c != nil && slices.Contains(l.Plan.ownTablesOf(r.Job), "changes") && !c.hasColumn("attribute_id") {
		r.Pending = append(r.Pending, fmt.Sprintf("column attribute_id of %s.changes", l.Plan.Own))
	}
	if len(l.Legacy) > 0 {
		r.Pending = append(r.Pending, "an earlier release's tables to move into schema "+l.Plan.Own+": "+strings.Join(l.Legacy, ", "))
	}
}

// ownTablesOf are the daemon's tables a job uses: cursors and leases for
// all, the outbox, change records, key digests and the LLM's windows and spend for
// supersession (and its history, for a store without one; a store's
// trigger puts every new row in the outbox, as a classification), the
// record of deleted documents for tombstones.
func (p Plan) ownTablesOf(job Job) []string {
	switch {
	case job == Supersession && p.ownHistory():
		return []string{"state", "leases", "classified", "changes", "llm_windows", "llm_spend", "aspect_keys", "history"}
	case job == Supersession:
		return []string{"state", "leases", "classified", "changes", "llm_windows", "llm_spend", "aspect_keys"}
	case job == Tombstones:
		return []string{"state", "leases", "deleted_documents"}
	}
	return []string{"state", "leases"}
}

// OK reports whether every job that is on is fine (check's exit 0).
func (l *Layout) OK() bool {
	for _, r := range l.Reports {
		if !r.OK() {
			return false
		}
	}
	return true
}

// Require returns a *SchemaError when one of the given jobs, on, cannot
// run: what the daemon and the one-shot commands check before starting.
func (l *Layout) Require(jobs ...Job) error {
	var missing []string
	for _, job := range jobs {
		r := l.Reports[job]
		if r == nil || !r.On || r.Runnable() {
			continue
		}
		missing = append(missing, string(job)+": "+r.Line())
	}
	if len(missing) > 0 {
		return &SchemaError{Missing: missing}
	}
	return nil
}

// SchemaError says which jobs cannot run and why. The CLI maps it to exit
// code 3.
type SchemaError struct {
	Missing []string
}

func (e *SchemaError) Error() string {
	return "database schema is incompatible: " + strings.Join(e.Missing, "\n  ")
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// placeholder is a statement's $n.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// privilegeNeed is one privilege a job that is on needs, and the question
// that asks whether the connecting role has it.
type privilegeNeed struct {
	job         Job
	what, table string // for the message
	query       string
	args        []any
}

// checkPrivileges records, per job that is on, each privilege the
// connecting role lacks on the tables it found: a statement that would
// fail for want of one is a problem now, not at three in the morning.
func (l *Layout) checkPrivileges(ctx context.Context, db sqlx.QueryerContext) error {
	var needs []privilegeNeed
	for _, job := range Jobs {
		if r := l.Reports[job]; r.On && len(r.Problems) == 0 {
			needs = l.privilegesNeeded(job, needs)
		}
	}
	if len(needs) == 0 {
		return nil
	}
	granted, err := askPrivileges(ctx, db, needs)
	if err != nil {
		return err
	}
	lacking := map[Job]map[string][]string{} // job → table → privileges lacking
	for i, n := range needs {
		if granted[i] {
			continue
		}
		if lacking[n.job] == nil {
			lacking[n.job] = map[string][]string{}
		}
		if !slices.Contains(lacking[n.job][n.table], n.what) {
			lacking[n.job][n.table] = append(lacking[n.job][n.table], n.what)
		}
	}
	for job, tables := range lacking {
		var parts []string
		for _, table := range keysOf(tables) {
			parts = append(parts, strings.Join(tables[table], ", ")+" on "+table)
		}
		l.Reports[job].Problems = append(l.Reports[job].Problems, fmt.Sprintf("role %s lacks %s (as the tables' owner: supersessiond migrate --grant %s)",
			l.User, strings.Join(parts, "; "), l.User))
	}
	return nil
}

// privilegesNeeded appends to needs the privileges job needs on the tables
// found: on the agent's tables and their schemas, and every privilege on
// the daemon's own tables and schema.
func (l *Layout) privilegesNeeded(job Job, needs []privilegeNeed) []privilegeNeed {
	schemas := map[string]bool{}
	for _, p := range l.Plan.privilegesOf(job) {
		t := l.Tables[p.table]
		if t == nil {
			continue
		}
		schemas[t.Schema] = true
		if p.kind != "UPDATE" {
			needs = append(needs, privilegeNeed{job, p.kind, t.Display(), `SELECT has_table_privilege($1::oid, $2)`, []any{t.OID, p.kind}})
			continue
		}
		for _, col := range p.columns {
			if t.hasColumn(col) {
				needs = append(needs, privilegeNeed{job, "UPDATE (" + col + ")", t.Display(),
					`SELECT has_column_privilege($1::oid, $2, 'UPDATE')`, []any{t.OID, col}})
			}
		}
	}
	for s := range schemas {
		needs = append(needs, privilegeNeed{job, "USAGE", "schema " + s, `SELECT has_schema_privilege($1, 'USAGE')`, []any{s}})
	}
	for _, name := range l.Plan.ownTablesOf(job) {
		if t := l.Own[name]; t != nil {
			for _, kind := range []string{"SELECT", "INSERT", "UPDATE", "DELETE"} {
				needs = append(needs, privilegeNeed{job, kind, t.Display(), `SELECT has_table_privilege($1::oid, $2)`, []any{t.OID, kind}})
			}
		}
	}
	if len(l.Own) > 0 {
		needs = append(needs, privilegeNeed{job, "USAGE", "schema " + l.Plan.Own, `SELECT has_schema_privilege($1, 'USAGE')`, []any{l.Plan.Own}})
	}
	return needs
}

// askPrivileges asks every question of needs in one statement:
// SELECT ARRAY[has_..._privilege($1, ...), ...].
func askPrivileges(ctx context.Context, db sqlx.QueryerContext, needs []privilegeNeed) ([]bool, error) {
	exprs := make([]string, len(needs))
	var args []any
	for i, n := range needs {
		offset := len(args)
		exprs[i] = placeholder.ReplaceAllStringFunc(strings.TrimPrefix(n.query, "SELECT "), func(p string) string {
			k, _ := strconv.Atoi(p[1:])
			return "$" + strconv.Itoa(k+offset)
		})
		args = append(args, n.args...)
	}
	var granted pq.BoolArray
	if err := sqlx.GetContext(ctx, db, &granted, "SELECT ARRAY["+strings.Join(exprs, ", ")+"]", args...); err != nil {
		return nil, fmt.Errorf("schema: check the role's privileges: %w", err)
	}
	if len(granted) != len(needs) {
		return nil, fmt.Errorf("schema: check the role's privileges: %d answers to %d questions", len(granted), len(needs))
	}
	return granted, nil
}

// stringArray passes a []string as a text[] parameter.
func stringArray(s []string) any { return pq.StringArray(s) }
