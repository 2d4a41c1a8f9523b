package supersession

import (
	"context"
	"database/sql"
	"slices"
	"time"
)

// scanRow reads one row of a sibling query (bareColumns) without
// reflection: at a million rows a pass, sqlx's StructScan cost as much as
// the driver's own decoding. With textTime, created_at is text (mem0's payload): ISO 8601 with an
// offset is a time, anything else a row with no place in time (BadTime).
func scanRow(rows *sql.Rows, a *Attribute, textTime bool) error {
	var (
		created sql.NullTime
		text    sql.NullString
		kind    string // not Kind: database/sql converts to a named type by reflection
		err     error
	)
	if textTime {
		err = rows.Scan(&a.ID, &a.AgentID, &a.AspectID, &kind, &a.Content, &text, &a.Protected)
		created = parseTime(text)
	} else {
		err = rows.Scan(&a.ID, &a.AgentID, &a.AspectID, &kind, &a.Content, &created, &a.Protected)
	}
	a.Kind, a.CreatedAt, a.BadTime = Kind(kind), created.Time, !created.Valid
	return err
}

// parseTime reads a time written as ISO 8601 with its offset (Python's
// isoformat() of an aware datetime); one more than a day ahead is no time.
func parseTime(s sql.NullString) sql.NullTime {
	if !s.Valid {
		return sql.NullTime{}
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil || t.After(time.Now().Add(24*time.Hour)) {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: t, Valid: true}
}

// attributeSlab hands out the attributes a read fills, a block at a time:
// one allocation per row was a twentieth of reading a chunk. The
// attributes of a block are read together and dropped together (a batch
// is decided, then let go), so a block does not outlive its batch by much.
type attributeSlab []Attribute

const attributeSlabSize = 256

func (s *attributeSlab) next() *Attribute {
	if len(*s) == 0 {
		*s = make([]Attribute, attributeSlabSize)
	}
	a := &(*s)[0]
	*s = (*s)[1:]
	return a
}

// scanGroups reads the rows of a sibling query (bareColumns) into groups,
// one per (agent, aspect) in the order each first appears, each holding its
// attributes oldest first whatever order the rows came in. A query therefore
// need not sort: PostgreSQL sorting tens of thousands of rows on text keys
// (under the database's collation) costs more than loading them.
func scanGroups(rows *sql.Rows, textTime bool) ([]*Group, error) {
	type key struct{ agent, aspect string }
	var groups []*Group
	var g *Group // the last row's: rows of one group mostly come together
	index := map[key]*Group{}
	var slab attributeSlab
	for rows.Next() {
		a := slab.next()
		if err := scanRow(rows, a, textTime); err != nil {
			return nil, err
		}
		if g == nil || g.AgentID != a.AgentID || g.AspectID != a.AspectID {
			k := key{a.AgentID, a.AspectID}
			if g = index[k]; g == nil {
				g = &Group{AgentID: a.AgentID, AspectID: a.AspectID}
				index[k] = g
				groups = append(groups, g)
			}
		}
		g.Attrs = append(g.Attrs, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, g := range groups {
		sortGroup(g)
	}
	return groups, nil
}

// sortGroup puts a group's attributes oldest first (Group.Attrs' order).
func sortGroup(g *Group) {
	if !slices.IsSortedFunc(g.Attrs, olderFirst) {
		slices.SortFunc(g.Attrs, olderFirst)
	}
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

// LoadAspects loads the active attributes of the given (agent, aspect)
// pairs, one group each (an aspect with no active attribute left is absent).
func (e *Engine) LoadAspects(ctx context.Context, agents, aspects []string) ([]*Group, error) {
	groups, err := e.attrs.siblings(ctx, agents, aspects)
	if err != nil {
		return nil, err
	}
	if err := e.attrs.name(ctx, groups); err != nil {
		return nil, err
	}
	return groups, nil
}

// LoadAspectsBounded loads the given (agent, aspect) pairs as LoadAspects
// does, but at most maxAttributes active attributes at a time (an aspect
// larger than that comes whole, alone), and hands each batch to fn before
// loading the next: the memory a caller holds follows the bound, not how
// many aspects it names. The sizes are counted first, in one query. Each
// batch is analysed on up to workers goroutines before fn sees it (Analyze).
func (e *Engine) LoadAspectsBounded(ctx context.Context, agents, aspects []string, maxAttributes, workers int, fn func([]*Group) error) error {
	sizes, err := e.attrs.sizes(ctx, agents, aspects)
	if err != nil {
		return err
	}
	var batchAgents, batchAspects []string
	held := 0
	flush := func() error {
		if len(batchAgents) == 0 {
			return nil
		}
		groups, err := e.LoadAspects(ctx, batchAgents, batchAspects)
		if err != nil {
			return err
		}
		batchAgents, batchAspects, held = batchAgents[:0], batchAspects[:0], 0
		Analyze(groups, workers)
		return fn(groups)
	}
	for _, s := range sizes {
		if s.N == 0 {
			continue
		}
		if held > 0 && held+s.N > maxAttributes {
			if err := flush(); err != nil {
				return err
			}
		}
		batchAgents, batchAspects = append(batchAgents, s.AgentID), append(batchAspects, s.AspectID)
		held += s.N
	}
	return flush()
}
