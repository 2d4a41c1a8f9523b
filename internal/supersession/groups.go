package supersession

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/lib/pq"

	"github.com/jmoiron/sqlx"
)

type groupRow struct {
	Attribute
	CreatedAt  sql.NullTime `db:"created_at"`
	AspectName string       `db:"aspect_name"`
	Dangling   bool         `db:"dangling"`
}

// scanGroups reads the rows of a sibling query (columns) into groups,
// one per (agent, aspect) in the order each first appears, each holding its
// attributes oldest first whatever order the rows came in. A query therefore
// need not sort: PostgreSQL sorting tens of thousands of rows on text keys
// (under the database's collation) costs more than loading them.
func scanGroups(rows *sqlx.Rows) ([]*Group, error) {
	type key struct{ agent, aspect string }
	var groups []*Group
	var g *Group // the last row's: rows of one group mostly come together
	index := map[key]*Group{}
	for rows.Next() {
		var r groupRow
		if err := rows.StructScan(&r); err != nil {
			return nil, err
		}
		if g == nil || g.AgentID != r.AgentID || g.AspectID != r.AspectID {
			k := key{r.AgentID, r.AspectID}
			if g = index[k]; g == nil {
				g = &Group{AgentID: r.AgentID, AspectID: r.AspectID, AspectName: r.AspectName, Dangling: r.Dangling}
				index[k] = g
				groups = append(groups, g)
			}
		}
		a := r.Attribute
		a.CreatedAt, a.BadTime = r.CreatedAt.Time, !r.CreatedAt.Valid
		g.Attrs = append(g.Attrs, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if !slices.IsSortedFunc(g.Attrs, olderFirst) {
			slices.SortFunc(g.Attrs, olderFirst)
		}
	}
	return groups, nil
}

// olderFirst orders attributes by creation, ties broken by id: the order of
// Group.Attrs.
func olderFirst(a, b *Attribute) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// Cursor is a position in the sweep's keyset order of aspects: the last
// (agent, aspect) fully handled.
type Cursor struct {
	AgentID  string `json:"agent_id"`
	AspectID string `json:"aspect_id"`
}

// LoadBatch loads the next aspects after the cursor that have two or more
// active attributes (of agent, when given): at most maxAspects of them,
// cut to about maxAttributes attributes (an aspect larger than that still
// comes whole, alone). Empty when the pass is over.
func (e *Engine) LoadBatch(ctx context.Context, after Cursor, agent string, maxAspects, maxAttributes int) ([]*Group, error) {
	rows, err := e.db.QueryxContext(ctx, e.sql.batch, after.AgentID, after.AspectID, agent, maxAspects, maxAttributes)
	if err != nil {
		return nil, fmt.Errorf("supersession: load aspects after (%q, %q): %w", after.AgentID, after.AspectID, err)
	}
	defer rows.Close()
	groups, err := scanGroups(rows)
	if err != nil {
		return nil, fmt.Errorf("supersession: load aspects after (%q, %q): %w", after.AgentID, after.AspectID, err)
	}
	return groups, nil
}

// LoadAspects loads the active attributes of the given (agent, aspect)
// pairs, one group each (an aspect with no active attribute left is absent).
func (e *Engine) LoadAspects(ctx context.Context, agents, aspects []string) ([]*Group, error) {
	rows, err := e.db.QueryxContext(ctx, e.sql.aspects, pq.Array(agents), pq.Array(aspects))
	if err != nil {
		return nil, fmt.Errorf("supersession: load siblings: %w", err)
	}
	defer rows.Close()
	groups, err := scanGroups(rows)
	if err != nil {
		return nil, fmt.Errorf("supersession: load siblings: %w", err)
	}
	return groups, nil
}
