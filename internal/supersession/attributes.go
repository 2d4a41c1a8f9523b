package supersession

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
)

// attributeStore is the engine's store of attributes: the one owner of the
// statements that read and write the agent's attributes (siblings by
// aspect, changed attributes by id, the scan's chunks, the aspects' names)
// and the supersession rows of its history (the guarded apply, proposals,
// vetoes). The engine, the change feed and the operator's commands ask it
// for rows (groups of attributes, what was applied or proposed, vetoes);
// none assembles its column lists. The stores real stacks keep their facts
// in (Honcho's documents, mem0's collection: SPEC §14) are the same
// questions answered by the store's own statements (stores_sql.go), chosen
// once, when the engine is built, from the names' Store.
type attributeStore struct {
	db  *sqlx.DB
	sql attributeStatements
	// hasAspects: the stack has an aspects table (groups are named, and an
	// aspect missing from it is dangling).
	hasAspects bool
	// levels, for Honcho's documents, are the levels that take part: the
	// last parameter of every read.
	levels []string
	// textTime: created_at comes as text (mem0's payload), parsed here.
	textTime bool
	// store is which store it is; writes its operator writes.
	store  schema.Store
	writes storeWrites
}

// newStore returns the store of the facts names describes (SPEC §14):
// the attribute graph, Honcho's documents or mem0's collection, each with
// its own statements behind the same questions.
func newStore(db *sqlx.DB, names *schema.Names) *attributeStore {
	s := &attributeStore{db: db, sql: schema.Render(names, storeStatements(names.Store)), hasAspects: names.HasAspects,
		store: names.Store, writes: renderWrites(names)}
	switch names.Store {
	case schema.StoreHoncho:
		s.hasAspects = false
		s.levels = names.Levels
		if len(s.levels) == 0 {
			s.levels = []string{"explicit"}
		}
	case schema.StoreMem0:
		s.hasAspects, s.textTime = false, true
	}
	return s
}

// args are a read's arguments, and the levels when the store has them.
func (s *attributeStore) args(args ...any) []any {
	if s.levels != nil {
		args = append(args, pq.Array(s.levels))
	}
	return args
}

// siblings loads the active attributes of the given (agent, aspect) pairs,
// one group each, unnamed (an aspect with no active attribute left is
// absent).
func (s *attributeStore) siblings(ctx context.Context, agents, aspects []string) ([]*Group, error) {
	return s.groups(ctx, "load siblings", s.sql.Aspects, s.args(pq.Array(agents), pq.Array(aspects))...)
}

// aspectSize is how many active attributes siblings would load of an aspect.
type aspectSize struct {
	AgentID  string `db:"agent_id"`
	AspectID string `db:"aspect_id"`
	N        int    `db:"n"`
}

// sizes counts what siblings would load of each given aspect.
func (s *attributeStore) sizes(ctx context.Context, agents, aspects []string) ([]aspectSize, error) {
	var sizes []aspectSize
	if err := s.db.SelectContext(ctx, &sizes, s.sql.AspectSizes, s.args(pq.Array(agents), pq.Array(aspects))...); err != nil {
		return nil, fmt.Errorf("supersession: count siblings: %w", err)
	}
	return sizes, nil
}

// proposed returns which of the given (old, new) pairs have a proposal
// already.
func (s *attributeStore) proposed(ctx context.Context, olds, news []string) (map[[2]string]bool, error) {
	var rows []struct {
		Old string `db:"old_id"`
		New string `db:"new_id"`
	}
	if err := s.db.SelectContext(ctx, &rows, s.sql.Proposed, pq.Array(olds), pq.Array(news)); err != nil {
		return nil, fmt.Errorf("supersession: read existing proposals: %w", err)
	}
	exists := make(map[[2]string]bool, len(rows))
	for _, r := range rows {
		exists[[2]string{r.Old, r.New}] = true
	}
	return exists, nil
}

// groups runs a query of the store's columns (bareColumns) and reads its
// rows into groups (scanGroups), unnamed; what names it in an error.
func (s *attributeStore) groups(ctx context.Context, what, query string, args ...any) ([]*Group, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("supersession: %s: %w", what, err)
	}
	defer rows.Close()
	groups, err := scanGroups(rows, s.textTime)
	if err != nil {
		return nil, fmt.Errorf("supersession: %s: %w", what, err)
	}
	return groups, nil
}

// chunk reads up to n rows of the scan into groups, in order; full is true
// when it read n rows (the last group may then be incomplete).
func (s *attributeStore) chunk(ctx context.Context, from Cursor, inclusive bool, agent string, n int) (groups []*Group, full bool, err error) {
	st := s.sql.ChunkAfter
	if inclusive {
		st = s.sql.ChunkFrom
	}
	q, args, err := st.Bind(map[string]any{"agent": from.AgentID, "aspect": from.AspectID, "only": agent, "rows": n,
		"levels": pq.Array(s.levels)})
	var rows *sql.Rows
	if err == nil {
		rows, err = s.db.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, false, fmt.Errorf("supersession: read attributes after (%q, %q): %w", from.AgentID, from.AspectID, err)
	}
	defer rows.Close()
	var g *Group
	var slab attributeSlab
	read := 0
	for rows.Next() {
		a := slab.next()
		if err := scanRow(rows, a, s.textTime); err != nil {
			return nil, false, fmt.Errorf("supersession: read attributes after (%q, %q): %w", from.AgentID, from.AspectID, err)
		}
		read++
		if g == nil || g.AgentID != a.AgentID || g.AspectID != a.AspectID {
			g = &Group{AgentID: a.AgentID, AspectID: a.AspectID}
			groups = append(groups, g)
		}
		g.Attrs = append(g.Attrs, a)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("supersession: read attributes after (%q, %q): %w", from.AgentID, from.AspectID, err)
	}
	return groups, read == n, nil
}

// name sets the aspect name of each group, or marks it dangling when its
// aspect is not among its agent's; without an aspects table every group is
// unnamed and none is dangling.
func (s *attributeStore) name(ctx context.Context, groups []*Group) error {
	if !s.hasAspects || len(groups) == 0 {
		return nil
	}
	type key struct{ agent, aspect string }
	agents := make([]string, len(groups))
	aspects := make([]string, len(groups))
	for i, g := range groups {
		agents[i], aspects[i] = g.AgentID, g.AspectID
	}
	rows, err := s.db.QueryContext(ctx, s.sql.Names, pq.Array(agents), pq.Array(aspects))
	if err != nil {
		return fmt.Errorf("supersession: name aspects: %w", err)
	}
	defer rows.Close()
	names := make(map[key]string, len(groups))
	for rows.Next() {
		var k key
		var name string
		if err := rows.Scan(&k.agent, &k.aspect, &name); err != nil {
			return fmt.Errorf("supersession: name aspects: %w", err)
		}
		names[k] = name
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("supersession: name aspects: %w", err)
	}
	for _, g := range groups {
		name, ok := names[key{g.AgentID, g.AspectID}]
		g.Name(name)
		g.Dangling = !ok
	}
	return nil
}

// apply writes supersessions inside tx and returns those whose guards held;
// the others were no-ops (already superseded, changed, gone, vetoed). The
// caller commits.
func (s *attributeStore) apply(ctx context.Context, tx *sqlx.Tx, actor Actor, items []Supersession) ([]Applied, error) {
	if len(items) == 0 {
		return nil, nil
	}
	type reqRow struct {
		Ord           int      `json:"ord"`
		OldID         string   `json:"old_id"`
		NewID         string   `json:"new_id"`
		AgentID       string   `json:"agent_id"`
		OldContent    string   `json:"old_content"`
		NewContent    string   `json:"new_content"`
		Meta          Metadata `json:"meta"` // encoded once, with the batch (a RawMessage is compacted again)
		Reason        string   `json:"reason"`
		ForceChain    bool     `json:"force_chain"`
		AnyAspect     bool     `json:"any_aspect"`
		RespectVetoes bool     `json:"respect_vetoes"`
	}
	reqs := make([]reqRow, len(items))
	olds := make([]string, len(items))
	for i, it := range items {
		meta := it.Meta
		if actor.Operator != "" {
			meta.Operator, meta.OperatorSource = actor.Operator, actor.OperatorSource
		}
		reqs[i] = reqRow{i, it.Meta.OldAttributeID, it.Meta.NewAttributeID, it.Meta.AgentID, it.OldContent, it.NewContent,
			meta, it.Reason, it.ForceChain, it.AnyAspect, it.RespectVetoes}
		olds[i] = it.Meta.OldAttributeID
	}
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("supersession: encode batch: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.sql.Lock, pq.Array(olds)); err != nil {
		return nil, fmt.Errorf("supersession: lock %d attributes: %w", len(items), err)
	}
	q, args, err := s.sql.Apply.Bind(map[string]any{"batch": string(body), "changed_by": actor.ChangedBy,
		"actor_type": actor.Type, "request_id": store.Nullable(actor.RequestID), "session_id": store.Nullable(actor.SessionID)})
	var rows *sqlx.Rows
	if err == nil {
		rows, err = tx.QueryxContext(ctx, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("supersession: apply %d supersessions: %w", len(items), err)
	}
	defer rows.Close()
	var out []Applied
	for rows.Next() {
		var a Applied
		if err := rows.Scan(&a.HistoryID, &a.OldAttributeID); err != nil {
			return nil, fmt.Errorf("supersession: apply: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: apply %d supersessions: %w", len(items), err)
	}
	rows.Close()
	return out, s.flag(ctx, tx, out)
}

// propose writes proposals and returns those that were new.
func (s *attributeStore) propose(ctx context.Context, q sqlx.ExtContext, actor Actor, items []Proposal) ([]Proposed, error) {
	if len(items) == 0 {
		return nil, nil
	}
	type reqRow struct {
		OldID      string   `json:"old_id"`
		AgentID    string   `json:"agent_id"`
		NewContent string   `json:"new_content"`
		Meta       Metadata `json:"meta"`
		Reason     string   `json:"reason"`
	}
	seen := map[[2]string]bool{}
	reqs := make([]reqRow, 0, len(items))
	for _, it := range items {
		k := [2]string{it.Meta.OldAttributeID, it.Meta.NewAttributeID}
		if seen[k] {
			continue
		}
		seen[k] = true
		reqs = append(reqs, reqRow{it.Meta.OldAttributeID, it.Meta.AgentID, it.NewContent, it.Meta, it.Reason})
	}
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("supersession: encode batch: %w", err)
	}
	query, args, err := s.sql.Propose.Bind(map[string]any{"batch": string(body), "changed_by": actor.ChangedBy,
		"actor_type": actor.Type, "request_id": store.Nullable(actor.RequestID)})
	var rows *sqlx.Rows
	if err == nil {
		rows, err = q.QueryxContext(ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("supersession: propose %d pairs: %w", len(reqs), err)
	}
	defer rows.Close()
	var out []Proposed
	for rows.Next() {
		var p Proposed
		if err := rows.Scan(&p.HistoryID, &p.Mode, &p.OldAttributeID, &p.NewAttributeID); err != nil {
			return nil, fmt.Errorf("supersession: propose: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: propose %d pairs: %w", len(reqs), err)
	}
	return out, nil
}

// vetoes returns the vetoes about the given old attributes.
func (s *attributeStore) vetoes(ctx context.Context, oldIDs []string, agents []string) (*Vetoes, error) {
	out := &Vetoes{pairs: map[[2]string]bool{}, undone: map[string]time.Time{}}
	if len(oldIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryxContext(ctx, s.sql.Vetoes, pq.Array(oldIDs), pq.Array(agents))
	if err != nil {
		return nil, fmt.Errorf("supersession: load vetoes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o, n *string
		var undoneAt *time.Time
		if err := rows.Scan(&o, &n, &undoneAt); err != nil {
			return nil, fmt.Errorf("supersession: load vetoes: %w", err)
		}
		if o == nil {
			continue
		}
		if n != nil {
			out.pairs[[2]string{*o, *n}] = true
		}
		if undoneAt != nil && undoneAt.After(out.undone[*o]) {
			out.undone[*o] = *undoneAt
		}
	}
	return out, rows.Err()
}

// byID loads the active attributes with the given ids, grouped
// by aspect, unnamed (loadChanged names what it returns).
func (s *attributeStore) byID(ctx context.Context, ids []string) ([]*Group, error) {
	return s.groups(ctx, "load changed attributes", s.sql.Attributes, s.args(pq.Array(ids))...)
}

// storeWrites are the writes of a store other than the attribute graph that
// only an operator makes: undo's restore and protect (the attribute graph's
// are the operator commands' own statements, on its columns).
type storeWrites struct {
	Revive, Reinsert, Protect, Edges schema.Named
	// Flag and Unflag mark and clear a retired document's dependents
	// (Honcho): $1 the retired ids; Unflag's $2 the one restored.
	Flag, Unflag string
	// edges: Edges puts back a re-inserted document's document_sources.
	edges bool
}

// storeWrites renders a store's operator writes; a statement the store
// does not have stays empty.
func renderWrites(names *schema.Names) storeWrites {
	var w storeWrites
	var texts [4]string
	switch names.Store {
	case schema.StoreHoncho:
		texts = [4]string{honchoReviveSQL, honchoReinsertSQL, honchoProtectSQL, ""}
		if names.HasSources {
			texts[3], w.edges = honchoEdgesSQL, true
		}
		w.Flag, w.Unflag = names.SQL(honchoFlagSQL), names.SQL(honchoUnflagSQL)
	case schema.StoreMem0:
		texts = [4]string{"", mem0ReinsertSQL, "", ""}
	}
	for i, dst := range []*schema.Named{&w.Revive, &w.Reinsert, &w.Protect, &w.Edges} {
		if texts[i] != "" {
			*dst = schema.Render(names, schema.NamedSQL(texts[i]))
		}
	}
	return w
}

// restore puts back, inside tx, a row a supersession retired (undo): a row
// still there is revived, one gone is re-inserted from its snapshot. It
// reports whether it restored anything.
func (s *attributeStore) restore(ctx context.Context, tx *sqlx.Tx, id string, row json.RawMessage, gone bool) (bool, error) {
	st, args := s.writes.Revive, map[string]any{"id": id, "row": string(row)}
	if gone {
		st = s.writes.Reinsert
		if len(row) == 0 {
			return false, nil
		}
	}
	q, a, err := st.Bind(args)
	if err != nil {
		return false, fmt.Errorf("supersession: restore %s: %w", id, err)
	}
	res, err := tx.ExecContext(ctx, q, a...)
	if err != nil {
		return false, fmt.Errorf("supersession: restore %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	if gone && s.writes.edges {
		if q, a, err = s.writes.Edges.Bind(args); err == nil {
			_, err = tx.ExecContext(ctx, q, a...)
		}
		if err != nil {
			return false, fmt.Errorf("supersession: restore the citations of %s: %w", id, err)
		}
	}
	if s.writes.Unflag != "" {
		if _, err := tx.ExecContext(ctx, s.writes.Unflag, pq.Array([]string{id}), id); err != nil {
			return false, fmt.Errorf("supersession: clear the dependents of %s: %w", id, err)
		}
	}
	return true, nil
}

// flag marks the dependents of the rows just retired, inside tx.
func (s *attributeStore) flag(ctx context.Context, tx *sqlx.Tx, done []Applied) error {
	if s.writes.Flag == "" || len(done) == 0 {
		return nil
	}
	ids := make([]string, len(done))
	for i, a := range done {
		ids[i] = a.OldAttributeID
	}
	if _, err := tx.ExecContext(ctx, s.writes.Flag, pq.Array(ids)); err != nil {
		return fmt.Errorf("supersession: flag the dependents of %d retired documents: %w", len(ids), err)
	}
	return nil
}

// protect marks a row protected (or not), inside tx.
func (s *attributeStore) protect(ctx context.Context, tx *sqlx.Tx, id string, on bool) error {
	q, a, err := s.writes.Protect.Bind(map[string]any{"id": id, "on": on})
	if err == nil {
		_, err = tx.ExecContext(ctx, q, a...)
	}
	if err != nil {
		return fmt.Errorf("supersession: protect %s: %w", id, err)
	}
	return nil
}
