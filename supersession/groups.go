package supersession

import (
	"database/sql"
	"slices"

	"github.com/jmoiron/sqlx"
)

// GroupColumns is the select list of a query that loads siblings for
// ScanGroups: AttributeColumns and the aspect's name and existence (alias
// the aspect as asp, outer-joined on the attribute's aspect_id and agent_id:
// an aspect of another agent is no aspect at all, and its name must never
// reach a prompt).
const GroupColumns = AttributeColumns + `,
       coalesce(asp.name, '') AS aspect_name, asp.id IS NULL AS dangling`

type groupRow struct {
	Attribute
	CreatedAt  sql.NullTime `db:"created_at"`
	AspectName string       `db:"aspect_name"`
	Dangling   bool         `db:"dangling"`
}

// ScanGroups reads the rows of a sibling query (GroupColumns) into groups,
// one per (agent, aspect) in the order each first appears, each holding its
// attributes oldest first whatever order the rows came in. A query therefore
// need not sort: PostgreSQL sorting tens of thousands of rows on text keys
// (under the database's collation) costs more than loading them.
func ScanGroups(rows *sqlx.Rows) ([]*Group, error) {
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
