package inline

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// A batch loads, of each aspect it touches, only what its classifications
// can pair with (SPEC §11's key digests, as the incremental sweep reads
// them): the classified attributes, every attribute the aspect's change
// records name (changed since its digest was made, so possibly not in it),
// and the siblings the digest says their keys meet. The batch decides all
// of those changes, then keeps the digest whole for the next batch: in one
// transaction it adds the keys of what it decided and consumes those
// change records, as an incremental pass would; an aspect it had to read
// whole gets a complete digest that replaces its fragments. Loading whole
// aspects was most of the hook's cost, growing with the aspect, not with
// the change.

// maxPending is how many change records of one aspect a batch takes in: an
// aspect with more (a long time since the last sweep, or an agent
// rewriting it) is read whole, which consumes them.
const maxPending = 64

// pendingSQL reads the aspects' change records, at most $3 each.
const pendingSQL = `
SELECT k.agent_id, k.aspect_id, c.attribute_id
FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
CROSS JOIN LATERAL (
  SELECT c.attribute_id FROM {{.Changes}} c
  WHERE c.agent_id = k.agent_id AND c.aspect_id = k.aspect_id
  LIMIT $3) c`

// consumeSQL deletes the change records of the attributes a batch decided,
// those its snapshot saw and no sweep has claimed (a claimed one is that
// sweep's to consume).
const consumeSQL = `
DELETE FROM {{.Changes}} c
USING unnest($1::text[], $2::text[], $3::text[]) AS d(agent_id, aspect_id, attribute_id)
WHERE c.agent_id = d.agent_id AND c.aspect_id = d.aspect_id AND c.attribute_id = d.attribute_id
  AND pg_visible_in_snapshot(c.xid, $4::pg_snapshot)
  AND (c.claimed_until IS NULL OR c.claimed_until < now())`

// load is what one batch loaded, and what it must keep once decided.
type load struct {
	groups []*supersession.Group
	focus  map[string]bool // what the batch decides
	// snapshot, when the digests were used ("" otherwise), was taken before
	// the batch read anything; once the batch is decided, keep stores the
	// fragments and consumes the records it saw.
	snapshot string
	deltas   []*supersession.Group // narrowed: their focus's keys are added
	whole    []*supersession.Group // read whole: their digest is replaced
}

// loadBatch loads the claimed aspects for deciding the classified
// attributes (focus, by aspect in agents/aspects order).
func (h *Hook) loadBatch(ctx context.Context, cfg *config.Config, agents, aspects []string, focus map[string]bool, focusOf map[[2]string][]string) (*load, error) {
	if cfg.SemanticFallback() {
		// The LLM's candidates are not in the digests: whole aspects.
		groups, err := h.loadGroups(ctx, agents, aspects)
		return &load{groups: groups, focus: focus}, err
	}
	l := &load{focus: map[string]bool{}}
	for id := range focus {
		l.focus[id] = true
	}
	// Taken before anything is read: the records and digests this snapshot
	// saw committed are covered by what the batch reads after.
	var err error
	if l.snapshot, err = store.Snapshot(ctx, h.db); err != nil {
		return nil, fmt.Errorf("inline: take a snapshot: %w", err)
	}
	changes := make([]supersession.AspectChanges, len(agents))
	at := map[[2]string]int{}
	for i := range agents {
		k := [2]string{agents[i], aspects[i]}
		at[k] = i
		changes[i] = supersession.AspectChanges{AgentID: agents[i], AspectID: aspects[i], IDs: append([]string(nil), focusOf[k]...)}
	}
	var pending []struct {
		AgentID     string         `db:"agent_id"`
		AspectID    string         `db:"aspect_id"`
		AttributeID sql.NullString `db:"attribute_id"`
	}
	if err := h.db.SelectContext(ctx, &pending, h.sql.pending, pq.Array(agents), pq.Array(aspects), maxPending+1); err != nil {
		return nil, fmt.Errorf("inline: read change records: %w", err)
	}
	count := make([]int, len(agents))
	for _, p := range pending {
		i, ok := at[[2]string{p.AgentID, p.AspectID}]
		if !ok {
			continue
		}
		count[i]++
		if !p.AttributeID.Valid || p.AttributeID.String == "" || count[i] > maxPending {
			changes[i].Whole = true // a record of the whole aspect, or too many
			continue
		}
		changes[i].IDs = append(changes[i].IDs, p.AttributeID.String)
	}
	nar, err := h.engine.LoadChanged(ctx, changes)
	if err != nil {
		return nil, fmt.Errorf("inline: %w", err)
	}
	l.deltas = nar.Groups
	for id := range nar.Focus {
		l.focus[id] = true
	}
	var wholeAgents, wholeAspects []string
	for _, c := range nar.Whole {
		wholeAgents, wholeAspects = append(wholeAgents, c.AgentID), append(wholeAspects, c.AspectID)
		for _, id := range c.IDs {
			l.focus[id] = true // its changes are decided, and their records consumed
		}
	}
	if len(wholeAgents) > 0 {
		if l.whole, err = h.loadGroups(ctx, wholeAgents, wholeAspects); err != nil {
			return nil, err
		}
	}
	l.groups = append(append(l.groups, nar.Groups...), l.whole...)
	return l, nil
}

// keep stores what a decided batch learnt of its aspects' keys and
// consumes the change records of what it decided, in one transaction: a
// record goes only with the keys that let the next batch find its
// attribute.
func (h *Hook) keep(ctx context.Context, l *load) error {
	if l.snapshot == "" {
		return nil
	}
	var deltas, wholes []supersession.Fragment
	var agents, aspects, ids []string
	decided := func(g *supersession.Group) {
		for _, a := range g.Attrs {
			if l.focus[a.ID] {
				agents, aspects, ids = append(agents, g.AgentID), append(aspects, g.AspectID), append(ids, a.ID)
			}
		}
	}
	for _, g := range l.deltas {
		if f := supersession.DeltaFragment(g, l.focus); f != nil {
			deltas = append(deltas, *f)
		}
		decided(g)
	}
	for _, g := range l.whole {
		if f := supersession.WholeFragment(g); f != nil {
			wholes = append(wholes, *f)
		}
		decided(g)
	}
	if len(ids) == 0 && len(deltas) == 0 && len(wholes) == 0 {
		return nil
	}
	err := store.InTx(ctx, h.db, func(tx *sqlx.Tx) error {
		if err := h.engine.StoreKeys(ctx, tx, deltas, ""); err != nil {
			return err
		}
		if err := h.engine.StoreKeys(ctx, tx, wholes, l.snapshot); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, h.sql.consume, pq.Array(agents), pq.Array(aspects), pq.Array(ids), l.snapshot)
		return err
	})
	if err != nil {
		return fmt.Errorf("inline: keep the aspects' keys: %w", err)
	}
	return nil
}
