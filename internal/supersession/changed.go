package supersession

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/heuristics"
)

// AspectChanges are the claimed change records of one aspect: the
// attributes they name, and Whole when a record named none (the aspect as a
// whole must be decided again).
type AspectChanges struct {
	AgentID, AspectID string
	IDs               []string
	Whole             bool
}

// Narrowed is what loadChanged found: groups holding only the changed
// attributes and the siblings their keys can meet, with the changed ones
// as the focus, and the aspects that must be read whole, with why.
type Narrowed struct {
	Groups []*Group
	Focus  map[string]bool
	Whole  []AspectChanges
	// Why counts the aspects read whole by reason: whole (a record named
	// no attribute), no_digest (none stored for this heuristics version:
	// a small aspect, or new since the last full pass), fragments (more
	// than maxFragments), old_digest (another encoding's), malformed, many
	// (a changed attribute meets a key many siblings hold).
	Why map[string]int
}

// maxFragments is how many digest fragments an aspect may gather from
// incremental passes before it is read whole once (which replaces them by
// one).
const maxFragments = 16

type aspectRef struct{ agent, aspect string }

// narrowing is one aspect while loadChanged works on it.
type narrowing struct {
	ch      AspectChanges
	digests []*digest
	attrs   map[string]*Attribute
	whole   string // why it is read whole; "" while it is not
}

// loadChanged narrows each aspect of changes to its changed attributes and
// the siblings that may pair with them (SPEC §11): the siblings whose keys
// meet a changed attribute's, per the aspect's stored key digest, and the
// siblings whose keys meet those (a partner older than a change is decided
// by the full rule: its newest contradictor wins, changed or not). Process
// with the focus then decides exactly what a pass over the whole aspect
// would decide about the changes. An aspect without a usable digest, or
// where a change meets a key held by many siblings, is returned in Whole.
// A reader that asks the LLM itself (the sweep with the semantic fallback)
// does not narrow: the LLM's candidates are not in a digest. The
// groups are unnamed (the feed names them with what it reads whole).
func (e *Engine) loadChanged(ctx context.Context, changes []AspectChanges) (*Narrowed, error) {
	n := &Narrowed{Focus: map[string]bool{}, Why: map[string]int{}}
	byRef := map[aspectRef]*narrowing{}
	var order []*narrowing
	var agents, aspects []string
	for _, c := range changes {
		w := &narrowing{ch: c, attrs: map[string]*Attribute{}}
		if c.Whole || len(c.IDs) == 0 {
			w.whole = "whole"
		} else {
			byRef[aspectRef{c.AgentID, c.AspectID}] = w
			agents, aspects = append(agents, c.AgentID), append(aspects, c.AspectID)
		}
		order = append(order, w)
	}
	if len(byRef) > 0 {
		if err := e.readDigests(ctx, agents, aspects, byRef); err != nil {
			return nil, err
		}
	}
	// Named first: the analysis the rounds make to meet the digests reads
	// the aspect's name.
	named := make([]*Group, 0, len(byRef))
	for ref := range byRef {
		named = append(named, &Group{AgentID: ref.agent, AspectID: ref.aspect})
	}
	if len(named) > 0 {
		if err := e.attrs.name(ctx, named); err != nil {
			return nil, err
		}
	}
	nameOf := make(map[aspectRef]*Group, len(named))
	for _, g := range named {
		nameOf[aspectRef{g.AgentID, g.AspectID}] = g
	}
	load := func(ctx context.Context, ids []string) ([]*Group, error) {
		groups, err := e.attrs.byID(ctx, ids)
		for _, g := range groups {
			if ng := nameOf[aspectRef{g.AgentID, g.AspectID}]; ng != nil {
				g.Name(ng.AspectName)
			}
		}
		return groups, err
	}
	if err := narrow(ctx, n, byRef, order, load); err != nil {
		return nil, err
	}
	for _, g := range n.Groups {
		if ng := nameOf[aspectRef{g.AgentID, g.AspectID}]; ng != nil {
			g.Name(ng.AspectName)
			g.Dangling = ng.Dangling
		}
	}
	return n, nil
}

// narrow loads, through load, the changed attributes of each aspect of
// byRef and the siblings their keys meet, and fills n. It is loadChanged
// without the database.
func narrow(ctx context.Context, n *Narrowed, byRef map[aspectRef]*narrowing, order []*narrowing,
	load func(context.Context, []string) ([]*Group, error)) error {
	var ids []string
	for _, w := range byRef {
		switch {
		case w.whole != "":
		case len(w.digests) == 0:
			w.whole = "no_digest"
		case len(w.digests) > maxFragments:
			w.whole = "fragments"
		default:
			ids = append(ids, w.ch.IDs...)
		}
	}
	// Three rounds: the changed attributes, the siblings their keys meet,
	// and the siblings those partners' keys meet.
	for round := 0; round < 3 && len(ids) > 0; round++ {
		groups, err := load(ctx, ids)
		if err != nil {
			return err
		}
		loaded := take(groups, byRef)
		if round == 0 {
			for _, a := range loaded {
				n.Focus[a.ID] = true
			}
		}
		if round == 2 {
			break
		}
		ids = ids[:0]
		for _, a := range loaded {
			w := byRef[aspectRef{a.AgentID, a.AspectID}]
			if w.whole != "" {
				continue
			}
			if old, nw, _ := eligibility(a); !old && !nw {
				continue
			}
			anchors, probes := a.blockKeys()
			met := map[string]bool{}
			for _, d := range w.digests {
				many, err := d.meet(anchors, probes, met)
				if err != nil {
					w.whole = "malformed"
					break
				}
				if many {
					w.whole = "many"
					break
				}
			}
			for id := range met {
				if w.attrs[id] == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	for _, w := range order {
		if w.whole != "" {
			n.Whole = append(n.Whole, w.ch)
			n.Why[w.whole]++
			continue
		}
		g := &Group{AgentID: w.ch.AgentID, AspectID: w.ch.AspectID}
		for _, a := range w.attrs {
			g.Attrs = append(g.Attrs, a)
		}
		if len(g.Attrs) == 0 {
			continue // every changed attribute left the aspect, or was retired
		}
		sortGroup(g)
		n.Groups = append(n.Groups, g)
	}
	return nil
}

// readDigests reads the digest fragments of the aspects in byRef.
func (e *Engine) readDigests(ctx context.Context, agents, aspects []string, byRef map[aspectRef]*narrowing) error {
	rows, err := e.db.QueryContext(ctx, e.sql.Keys, pq.Array(agents), pq.Array(aspects), heuristics.Version)
	if err != nil {
		return fmt.Errorf("supersession: read key digests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ref aspectRef
		var buf []byte
		if err := rows.Scan(&ref.agent, &ref.aspect, &buf); err != nil {
			return fmt.Errorf("supersession: read key digests: %w", err)
		}
		w := byRef[ref]
		if w == nil || w.whole != "" {
			continue
		}
		d, err := parseDigest(buf)
		if errors.Is(err, errDigestVersion) {
			w.whole = "old_digest" // an earlier release's: the whole read replaces it
			continue
		}
		if err != nil {
			e.log.Warn("supersession: a stored key digest is malformed; reading its aspect whole",
				"agent_id", ref.agent, "aspect_id", ref.aspect, "bytes", len(buf))
			w.whole = "malformed"
			continue
		}
		w.digests = append(w.digests, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("supersession: read key digests: %w", err)
	}
	return nil
}

// take adds the attributes of groups to the aspects of byRef still being
// narrowed and returns those they did not hold yet.
func take(groups []*Group, byRef map[aspectRef]*narrowing) []*Attribute {
	var out []*Attribute
	for _, g := range groups {
		w := byRef[aspectRef{g.AgentID, g.AspectID}]
		if w == nil || w.whole != "" {
			continue // moved to an aspect this batch does not examine: its own record names it
		}
		for _, a := range g.Attrs {
			if w.attrs[a.ID] == nil {
				w.attrs[a.ID] = a
				out = append(out, a)
			}
		}
	}
	return out
}

// Fragment is a key digest fragment to store for an aspect.
type Fragment struct {
	AgentID, AspectID string
	Keys              []byte
}

// DeltaFragment is the digest of the focus attributes of a narrowed group:
// what an incremental pass adds for the attributes it examined, so that
// their new keys are found by later passes. Nil when none has keys.
func DeltaFragment(g *Group, focus map[string]bool) *Fragment {
	return fragmentOf(g, func(a *Attribute) bool { return focus[a.ID] })
}

// WholeFragment is the complete digest of a group read whole (every
// attribute that may take part in a pair, keyed), as a full pass stores it:
// stored with the snapshot its read began after, it replaces the aspect's
// fragments. Nil for a group too small to be given a digest.
func WholeFragment(g *Group) *Fragment {
	if len(g.Attrs) < digestMinAttributes || g.Dangling {
		return nil
	}
	return fragmentOf(g, func(*Attribute) bool { return true })
}

// fragmentOf is the digest of the attributes of g that pick chooses and
// that may take part in a pair; nil when there are none.
func fragmentOf(g *Group, pick func(*Attribute) bool) *Fragment {
	include := make([]bool, len(g.Attrs))
	some := false
	for i, a := range g.Attrs {
		if old, nw, _ := eligibility(a); (old || nw) && pick(a) {
			include[i], some = true, true
		}
	}
	if !some {
		return nil
	}
	return &Fragment{AgentID: g.AgentID, AspectID: g.AspectID, Keys: digestOf(g.Attrs, include)}
}

// StoreKeys stores digest fragments. With a snapshot, each aspect's
// fragments that snapshot saw committed are deleted first: the new ones
// come from a read that began after and replace them.
func (e *Engine) StoreKeys(ctx context.Context, db sqlx.ExecerContext, frags []Fragment, replace string) error {
	if len(frags) == 0 {
		return nil
	}
	agents, aspects := make([]string, len(frags)), make([]string, len(frags))
	ends := make([]int64, len(frags))
	size := 0
	for _, f := range frags {
		size += len(f.Keys)
	}
	all := make([]byte, 0, size)
	for i, f := range frags {
		agents[i], aspects[i] = f.AgentID, f.AspectID
		all = append(all, f.Keys...)
		ends[i] = int64(len(all))
	}
	var snap any
	if replace != "" {
		snap = replace
	}
	q, args, err := e.sql.StoreKeys.Bind(map[string]any{"agents": pq.Array(agents), "aspects": pq.Array(aspects),
		"heuristics": heuristics.Version, "keys": all, "ends": pq.Array(ends), "replace": snap})
	if err == nil {
		_, err = db.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return fmt.Errorf("supersession: store key digests: %w", err)
	}
	return nil
}

// DropKeys deletes every digest fragment the snapshot saw committed: a
// complete full pass has replaced those of the aspects it read.
func (e *Engine) DropKeys(ctx context.Context, db sqlx.ExecerContext, snapshot string) error {
	if _, err := db.ExecContext(ctx, e.sql.DropKeys, snapshot); err != nil {
		return fmt.Errorf("supersession: drop replaced key digests: %w", err)
	}
	return nil
}

// Fragments are the digests of the groups a pass with Pass.Digests made.
func Fragments(groups []*Group) []Fragment {
	var out []Fragment
	for _, g := range groups {
		if g.Keys != nil {
			out = append(out, Fragment{AgentID: g.AgentID, AspectID: g.AspectID, Keys: g.Keys})
		}
	}
	return out
}
