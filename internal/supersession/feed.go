package supersession

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/store"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// The change feed (SPEC §11). The trigger appends a change record, naming
// the attribute, in the transaction that changes it; the key digests say
// which siblings each attribute's keys can meet. Two readers examine the
// records, and both through a Feed, so that the protocol that keeps the
// digests whole has one owner:
//
//   - the incremental sweep claims records (every unclaimed record of an
//     aspect at once, so two readers never split an aspect's changes) and
//     consumes what it claimed;
//   - the inline hook claims its outbox rows, not records: it examines the
//     records of the aspects it classifies into, and consumes those naming
//     an attribute it decided.
//
// A batch is examined in four steps (Examine): a snapshot is taken, before
// the batch reads anything; the changed attributes and the siblings their
// keys can meet are loaded through the aspects' digests (loadChanged), and
// an aspect without a usable digest is read whole; the reader decides what
// was loaded; then one statement stores the keys of what was decided (a
// fragment with the changed attributes' keys per narrowed aspect, a whole
// digest per aspect read whole, replacing the fragments the snapshot saw)
// and consumes the records.
//
// The invariant: a record goes only with the keys that let the next reader
// find its attribute. The snapshot rule, stated once: a record is consumed
// only if it was committed before the batch's reads began (a claimed one
// was claimed before the snapshot; any other must be visible in it), and a
// whole digest replaces only fragments committed before those reads. A
// change committed during a batch therefore stays recorded for the next
// reader, and concurrent readers or a kill -9 can leave extra fragments,
// never a missing key. A batch that fails consumes nothing and gives its
// claims back; one cancelled leaves them to expire, as a process killed
// does.

// Feed is one reader's access to the change feed.
type Feed struct {
	e      *Engine
	holder string
}

// Feed returns the change feed as the reader holder (unique per process)
// takes it.
func (e *Engine) Feed(holder string) *Feed { return &Feed{e: e, holder: holder} }

// A Batch is what one reader examines of the feed: changes by aspect.
type Batch struct {
	changes  []AspectChanges
	claimed  []int64 // the records claimed (Claim), consumed whole
	claimFor time.Duration
	// told: the reader claims no records (Told): Examine adds the aspects'
	// unconsumed records, and consumes those naming an attribute decided.
	told bool
}

// Empty reports whether the batch holds no change.
func (b *Batch) Empty() bool { return len(b.changes) == 0 }

// Claimed is how many change records the batch claimed.
func (b *Batch) Claimed() int { return len(b.claimed) }

// Last is the newest record's sequence number: a pass that takes only
// records up to it ends however fast the agent writes.
func (f *Feed) Last(ctx context.Context) (int64, error) {
	var upto int64
	if err := f.e.db.GetContext(ctx, &upto, f.e.sql.Feed.Last); err != nil {
		return 0, fmt.Errorf("supersession: read the change records: %w", err)
	}
	return upto, nil
}

// change is a claimed change record.
type change struct {
	Seq         int64          `db:"seq"`
	AgentID     string         `db:"agent_id"`
	AspectID    string         `db:"aspect_id"`
	AttributeID sql.NullString `db:"attribute_id"`
}

// Claim claims the records, up to upto, of at most aspects aspects, oldest
// first, for claimFor unless renewed (Examine renews them while it works).
func (f *Feed) Claim(ctx context.Context, upto int64, aspects int, claimFor time.Duration) (*Batch, error) {
	q, args, err := f.e.sql.Feed.Claim.Bind(map[string]any{
		"holder": f.holder, "upto": upto, "aspects": aspects, "claim_for": claimFor.Seconds()})
	var claimed []change
	if err == nil {
		err = f.e.db.SelectContext(ctx, &claimed, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("supersession: claim change records: %w", err)
	}
	b := &Batch{claimFor: claimFor}
	at := map[aspectRef]int{}
	for _, c := range claimed {
		b.claimed = append(b.claimed, c.Seq)
		k := aspectRef{c.AgentID, c.AspectID}
		i, ok := at[k]
		if !ok {
			i = len(b.changes)
			at[k] = i
			b.changes = append(b.changes, AspectChanges{AgentID: c.AgentID, AspectID: c.AspectID})
		}
		if c.AttributeID.Valid && c.AttributeID.String != "" {
			b.changes[i].IDs = append(b.changes[i].IDs, c.AttributeID.String)
		} else {
			b.changes[i].Whole = true // a record of the whole aspect
		}
	}
	return b, nil
}

// Told is a batch of the changes a reader that claims no records was told
// of (the inline hook: the attributes classified into each aspect).
// Examine adds the aspects' unconsumed records.
func (f *Feed) Told(changes []AspectChanges) *Batch {
	return &Batch{changes: changes, told: true}
}

// Reading says how Examine reads a batch's aspects.
type Reading struct {
	// Whole reads every aspect whole: the semantic fallback's candidates
	// are not in the digests (the sweep, which asks the LLM itself). Their
	// whole digests are stored, as for any aspect read whole: a reader
	// that narrows (the hook) needs them with the fallback on too.
	Whole bool
	// Bound is the most attributes read whole at a time (an aspect larger
	// comes alone); 0: every aspect read whole at once.
	Bound int
	// Analyze is how many goroutines analyse what was read whole before it
	// is decided (0: none; a reader with a key cache analyses nothing).
	Analyze int
	// Ask, for a told batch, hands what it decided to the background
	// asker (Engine.AskLater): the aspects are recorded as owed the LLM's
	// answer with the records' consumption, and asked about once it is
	// committed. Nil: no LLM to ask, or the reader asks itself.
	Ask *Asking
}

// A Part is groups Examine loaded, to decide with their focus: the
// attributes whose changes they hold.
type Part struct {
	Groups []*Group
	Focus  map[string]bool
	// Whole: the groups are their aspects whole, not narrowed; a reader
	// may decide them whole (the sweep does).
	Whole bool
}

// Decider decides the parts of a batch and writes the decisions.
type Decider func(ctx context.Context, parts []Part) error

// Examined is what examining a batch did.
type Examined struct {
	// Narrowed counts the aspects decided through their digests.
	Narrowed int
	// ReadWhole counts the aspects read whole, by reason: whole (a record
	// named no attribute), no_digest, fragments, old_digest, malformed,
	// many (see Narrowed.Why), semantic (Reading.Whole).
	ReadWhole map[string]int
}

// kept is what deciding a batch leaves to store with its records'
// consumption.
type kept struct {
	snapshot       string
	deltas, wholes []Fragment
	again          []string        // aspects to record anew: the LLM owes them an answer
	owed           []AspectChanges // a told batch's, handed to the background asker (Reading.Ask)
	// decided attributes, whose records a told batch consumes.
	agents, aspects, ids []string
}

// Examine examines a batch: loads what its changes can meet, has decide
// decide it, then stores the keys of what was decided and consumes the
// records, in one statement. A batch that fails consumes nothing.
func (f *Feed) Examine(ctx context.Context, b *Batch, r Reading, decide Decider) (Examined, error) {
	stop := func() {}
	if len(b.claimed) > 0 {
		stop = f.holdClaims(ctx, b)
	}
	x, k, err := f.examine(ctx, b, r, decide)
	stop()
	if err == nil {
		if r.Ask != nil && b.told {
			k.owe()
		}
		err = f.keep(ctx, b, k, r.Ask)
	}
	if err != nil {
		r.Ask.drop()
		if ctx.Err() == nil && len(b.claimed) > 0 { // cancelled: its claims expire
			f.release(ctx, b)
		}
		return Examined{}, err
	}
	r.Ask.start(ctx, k.owed)
	return x, nil
}

// examine takes the snapshot, loads and decides the batch.
func (f *Feed) examine(ctx context.Context, b *Batch, r Reading, decide Decider) (Examined, *kept, error) {
	x := Examined{ReadWhole: map[string]int{}}
	k := &kept{}
	changes := b.changes
	var err error
	if b.told && !r.Whole {
		// The statement that reads the aspects' records takes the snapshot:
		// one round trip, and what it read is what the snapshot saw.
		k.snapshot, changes, err = f.pending(ctx, changes)
	} else {
		k.snapshot, err = store.Snapshot(ctx, f.e.db)
	}
	if err != nil {
		return x, nil, fmt.Errorf("supersession: take the change feed's snapshot: %w", err)
	}
	var narrowed []Part
	whole := changes
	if r.Whole {
		x.ReadWhole["semantic"] = len(changes)
	} else {
		nar, err := f.e.loadChanged(ctx, changes)
		if err != nil {
			return x, nil, err
		}
		whole = nar.Whole
		x.Narrowed = len(nar.Groups)
		for why, n := range nar.Why {
			x.ReadWhole[why] += n
		}
		if len(nar.Groups) > 0 {
			narrowed = []Part{{Groups: nar.Groups, Focus: nar.Focus}}
		}
	}
	return x, k, f.readWhole(ctx, whole, narrowed, r, func(parts []Part) error {
		if err := decide(ctx, parts); err != nil {
			return err
		}
		k.add(parts, b.told)
		return nil
	})
}

// readWhole reads the aspects of whole whole, Reading.Bound attributes at a
// time (all at once without a bound), names what was read (with the
// narrowed part, loaded unnamed) and hands decide the parts: the narrowed
// one with the first aspects read whole.
func (f *Feed) readWhole(ctx context.Context, whole []AspectChanges, narrowed []Part, r Reading, decide func([]Part) error) error {
	e := f.e
	focus := map[string]bool{}
	agents, aspects := make([]string, len(whole)), make([]string, len(whole))
	for i, c := range whole {
		agents[i], aspects[i] = c.AgentID, c.AspectID
		for _, id := range c.IDs {
			focus[id] = true
		}
	}
	first := narrowed
	var named []*Group
	if len(narrowed) > 0 {
		named = narrowed[0].Groups
	}
	if r.Bound > 0 && len(whole) > 0 {
		if len(named) > 0 {
			if err := e.attrs.name(ctx, named); err != nil {
				return err
			}
		}
		return e.LoadAspectsBounded(ctx, agents, aspects, r.Bound, r.Analyze, func(groups []*Group) error {
			p := append(first, Part{Groups: groups, Focus: focus, Whole: true})
			first = nil // decided with the first aspects read whole
			return decide(p)
		})
	}
	var groups []*Group
	if len(whole) > 0 {
		var err error
		if groups, err = e.attrs.siblings(ctx, agents, aspects); err != nil {
			return err
		}
	}
	if len(named)+len(groups) == 0 {
		return nil
	}
	if err := e.attrs.name(ctx, append(append([]*Group(nil), named...), groups...)); err != nil {
		return err
	}
	if r.Analyze > 0 {
		Analyze(groups, r.Analyze) // once named: a dangling aspect is not analysed
	}
	if len(groups) > 0 {
		first = append(first, Part{Groups: groups, Focus: focus, Whole: true})
	}
	return decide(first)
}

// add notes what decided parts leave to keep: their keys, the aspects the
// LLM still owes an answer, and for a told batch the attributes decided.
func (k *kept) add(parts []Part, told bool) {
	for _, p := range parts {
		for _, g := range p.Groups {
			if g.Unsettled {
				k.again = append(k.again, g.AgentID, g.AspectID)
			}
			switch {
			case !p.Whole:
				if fr := DeltaFragment(g, p.Focus); fr != nil {
					k.deltas = append(k.deltas, *fr)
				}
			case g.Keys != nil: // the plan made it (Pass.Digests)
				k.wholes = append(k.wholes, Fragment{AgentID: g.AgentID, AspectID: g.AspectID, Keys: g.Keys})
				g.Keys = nil
			default:
				if fr := WholeFragment(g); fr != nil {
					k.wholes = append(k.wholes, *fr)
				}
			}
			if told {
				for _, a := range g.Attrs {
					if p.Focus[a.ID] {
						k.agents, k.aspects, k.ids = append(k.agents, g.AgentID), append(k.aspects, g.AspectID), append(k.ids, a.ID)
					}
				}
			}
		}
	}
}

// owe records anew, as owed the LLM's answer, every aspect in which a told
// batch decided attributes, and notes them (with those attributes) for the
// background asker: their records are consumed with the rest.
func (k *kept) owe() {
	at := map[aspectRef]int{}
	for i, id := range k.ids {
		ref := aspectRef{k.agents[i], k.aspects[i]}
		j, ok := at[ref]
		if !ok {
			j = len(k.owed)
			at[ref] = j
			k.owed = append(k.owed, AspectChanges{AgentID: ref.agent, AspectID: ref.aspect})
			k.again = append(k.again, ref.agent, ref.aspect)
		}
		k.owed[j].IDs = append(k.owed[j].IDs, id)
	}
}

// keep stores the keys of what was decided and consumes the records in one
// statement (keepSQL), so atomically: a record goes only with the keys that
// let the next reader find its attribute, and an aspect owed the LLM's
// answer is recorded anew (claimed by ask's hand-off when it has one).
func (f *Feed) keep(ctx context.Context, b *Batch, k *kept, ask *Asking) error {
	if len(b.claimed) == 0 && len(k.ids) == 0 && len(k.deltas) == 0 && len(k.wholes) == 0 && len(k.again) == 0 {
		return nil
	}
	if len(k.deltas) == 0 && len(k.wholes) == 0 && len(k.again) == 0 {
		return f.consume(ctx, b, k)
	}
	frags := append(k.deltas, k.wholes...)
	agents, aspects := make([]string, len(frags)), make([]string, len(frags))
	ends, replaces := make([]int64, len(frags)), make([]bool, len(frags))
	size := 0
	for _, fr := range frags {
		size += len(fr.Keys)
	}
	keys := make([]byte, 0, size)
	for i, fr := range frags {
		agents[i], aspects[i], replaces[i] = fr.AgentID, fr.AspectID, i >= len(k.deltas)
		keys = append(keys, fr.Keys...)
		ends[i] = int64(len(keys))
	}
	againBy, againFor := ask.owedBy()
	q, args, err := f.e.sql.Feed.Keep.Bind(map[string]any{
		"claimed": pq.Array(b.claimed), "holder": f.holder,
		"agents": pq.Array(k.agents), "aspects": pq.Array(k.aspects), "ids": pq.Array(k.ids), "snapshot": k.snapshot,
		"again": pq.Array(k.again), "again_by": againBy, "again_for": againFor,
		"frag_agents": pq.Array(agents), "frag_aspects": pq.Array(aspects), "ends": pq.Array(ends), "replaces": pq.Array(replaces),
		"keys": keys, "heuristics": heuristics.Version,
	})
	if err == nil {
		_, err = f.e.db.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return fmt.Errorf("supersession: consume change records: %w", err)
	}
	return nil
}

// consume consumes a batch's records when it has no keys to store (an
// aspect read whole too small for a digest, a change no pair can involve)
// and nothing to record anew: one statement as simple as that, where
// keepSQL, planned every time, costs three times as much of the server.
func (f *Feed) consume(ctx context.Context, b *Batch, k *kept) error {
	var err error
	switch {
	case len(b.claimed) > 0:
		_, err = f.e.db.ExecContext(ctx, f.e.sql.Feed.ConsumeClaimed, pq.Array(b.claimed), f.holder)
	case len(k.ids) > 0:
		var q string
		var args []any
		q, args, err = f.e.sql.Feed.ConsumeDecided.Bind(map[string]any{
			"agents": pq.Array(k.agents), "aspects": pq.Array(k.aspects), "ids": pq.Array(k.ids), "snapshot": k.snapshot})
		if err == nil {
			_, err = f.e.db.ExecContext(ctx, q, args...)
		}
	}
	if err != nil {
		return fmt.Errorf("supersession: consume change records: %w", err)
	}
	return nil
}

// maxPending is how many change records of one aspect a told batch takes
// in: an aspect with more (a long time since the last sweep, or an agent
// rewriting it) is read whole, which consumes the records of what it
// decides.
const maxPending = 64

// pending adds to a told batch's changes the attributes its aspects'
// unconsumed records name (changed since their digests were made, so
// possibly not in them), and returns the snapshot of the statement that
// read them. A record naming no attribute, or more than maxPending, makes
// its aspect read whole; one owed the LLM's answer is passed over (the
// sweep, or the background asker, answers it).
func (f *Feed) pending(ctx context.Context, changes []AspectChanges) (string, []AspectChanges, error) {
	agents, aspects := make([]string, len(changes)), make([]string, len(changes))
	at := make(map[aspectRef]int, len(changes))
	out := make([]AspectChanges, len(changes))
	for i, c := range changes {
		agents[i], aspects[i] = c.AgentID, c.AspectID
		at[aspectRef{c.AgentID, c.AspectID}] = i
		out[i] = c
		out[i].IDs = append([]string(nil), c.IDs...)
	}
	var records []struct {
		Snapshot    string         `db:"snapshot"`
		AgentID     sql.NullString `db:"agent_id"`
		AspectID    sql.NullString `db:"aspect_id"`
		AttributeID sql.NullString `db:"attribute_id"`
	}
	if err := f.e.db.SelectContext(ctx, &records, f.e.sql.Feed.Pending, pq.Array(agents), pq.Array(aspects), maxPending+1); err != nil {
		return "", nil, fmt.Errorf("read change records: %w", err)
	}
	if len(records) == 0 {
		return "", nil, fmt.Errorf("read change records: no snapshot")
	}
	count := make([]int, len(changes))
	for _, p := range records {
		i, ok := at[aspectRef{p.AgentID.String, p.AspectID.String}]
		if !ok {
			continue // the row that says only the snapshot
		}
		count[i]++
		if !p.AttributeID.Valid || p.AttributeID.String == "" || count[i] > maxPending {
			out[i].Whole = true // a record of the whole aspect, or too many
			continue
		}
		out[i].IDs = append(out[i].IDs, p.AttributeID.String)
	}
	return records[0].Snapshot, out, nil
}

// holdClaims renews a batch's claims every third of their term until the
// returned function is called, so that a batch that outlives its claim (a
// slow LLM) is not taken over by another reader.
func (f *Feed) holdClaims(ctx context.Context, b *Batch) (stop func()) {
	return store.Renew(ctx, b.claimFor/3, func(ctx context.Context) error {
		_, err := f.e.db.ExecContext(ctx, f.e.sql.Feed.Extend, pq.Array(b.claimed), f.holder, b.claimFor.Seconds())
		return err
	}, func(err error) {
		f.e.log.Warn("supersession: could not renew claims on change records; another reader may take them over", "err", err)
	})
}

// release gives back the claims of a batch that failed, so that the next
// reader need not wait for them to expire. When even that fails (the
// server is gone), they expire.
func (f *Feed) release(ctx context.Context, b *Batch) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.e.db.ExecContext(rctx, f.e.sql.Feed.Release, pq.Array(b.claimed), f.holder); err != nil {
		f.e.log.LogAttrs(ctx, slog.LevelWarn, "supersession: could not give back the claims of a failed batch; they expire",
			slog.String("claim_for", b.claimFor.String()), slog.Any("err", err))
	}
}

// DropSeen deletes the change records a snapshot saw committed: a complete
// full pass that started with it read every aspect after they were.
func (f *Feed) DropSeen(ctx context.Context, db sqlx.ExecerContext, snapshot string) error {
	if _, err := db.ExecContext(ctx, f.e.sql.Feed.DropSeen, snapshot); err != nil {
		return fmt.Errorf("supersession: drop the change records a full pass covered: %w", err)
	}
	return nil
}

// Unsettled records anew the aspects of groups the LLM still owes an answer
// (over budget, claimed by another asker, backing off, failed): a full
// pass's, which consumes no record of its own. The records are committed
// after the pass's snapshot, so its end does not drop them, and the next
// incremental pass asks again: a deferred window is never dropped.
func (f *Feed) Unsettled(ctx context.Context, groups []*Group) error {
	var agents, aspects []string
	for _, g := range groups {
		if g.Unsettled {
			agents, aspects = append(agents, g.AgentID), append(aspects, g.AspectID)
		}
	}
	if len(agents) == 0 {
		return nil
	}
	if _, err := f.e.db.ExecContext(ctx, f.e.sql.Feed.Again, pq.Array(agents), pq.Array(aspects)); err != nil {
		return fmt.Errorf("supersession: record the aspects the LLM owes an answer: %w", err)
	}
	return nil
}

// The change feed's SQL: the records the trigger appends (SPEC §11).
const (
	// againSQL records aspects anew as owed the LLM's answer
	// (OwedAttribute: whole for the sweep, nothing changed for the hook).
	againSQL = `INSERT INTO {{.Changes}} (agent_id, aspect_id, attribute_id) SELECT *, '' FROM unnest($1::text[], $2::text[])`

	// lastChangeSQL bounds a pass to the records that exist when it starts.
	lastChangeSQL = `SELECT coalesce(max(seq), 0) FROM {{.Changes}}`

	// claimChangesSQL claims the records of up to :aspects aspects, oldest
	// first: every unclaimed record of each (up to :upto), so that one reader examines
	// an aspect once for all its changes. While it runs it holds an advisory
	// lock per aspect it picks, and skips aspects another claim holds, so two
	// concurrent claims never split one aspect's records between them; SKIP
	// LOCKED keeps them off each other's rows; claimed_until makes a dead
	// holder's claims expire.
	claimChangesSQL = `
WITH pick AS (
  SELECT agent_id, aspect_id FROM {{.Changes}}
  WHERE seq <= :upto AND (claimed_until IS NULL OR claimed_until < now())
    AND pg_try_advisory_xact_lock(` + claimLockClass + `, hashtext(agent_id || '/' || aspect_id))
  ORDER BY seq
  LIMIT :aspects
  FOR UPDATE SKIP LOCKED
),
mine AS (
  SELECT c.seq FROM {{.Changes}} c
  JOIN (SELECT DISTINCT agent_id, aspect_id FROM pick) k ON k.agent_id = c.agent_id AND k.aspect_id = c.aspect_id
  WHERE c.seq <= :upto AND (c.claimed_until IS NULL OR c.claimed_until < now())
  FOR UPDATE OF c SKIP LOCKED
)
UPDATE {{.Changes}} c
SET claimed_by = :holder, claimed_until = now() + make_interval(secs => :claim_for)
FROM mine WHERE c.seq = mine.seq
RETURNING c.seq, c.agent_id, c.aspect_id, c.attribute_id`

	// extendChangesSQL renews this holder's claims on records it still works on.
	extendChangesSQL = `
UPDATE {{.Changes}} SET claimed_until = now() + make_interval(secs => $3)
WHERE seq = ANY($1) AND claimed_by = $2`

	// releaseChangesSQL gives back the claims of a batch that failed.
	releaseChangesSQL = `
UPDATE {{.Changes}} SET claimed_by = NULL, claimed_until = NULL
WHERE seq = ANY($1) AND claimed_by = $2`

	// consumeClaimedSQL is keepSQL's consumption of claimed records alone.
	consumeClaimedSQL = `DELETE FROM {{.Changes}} WHERE seq = ANY($1) AND claimed_by = $2`

	// consumeDecidedSQL is keepSQL's consumption of a told batch's records
	// alone.
	consumeDecidedSQL = `
DELETE FROM {{.Changes}} c
USING unnest(CAST(:agents AS text[]), CAST(:aspects AS text[]), CAST(:ids AS text[])) AS d(agent_id, aspect_id, attribute_id)
WHERE c.agent_id = d.agent_id AND c.aspect_id = d.aspect_id AND c.attribute_id = d.attribute_id
  AND pg_visible_in_snapshot(c.xid, CAST(:snapshot AS pg_snapshot))
  AND (c.claimed_until IS NULL OR c.claimed_until < now())`

	// keepSQL is a batch's end, in one statement: it consumes the records
	// the batch claimed (only while still ours) and those naming an
	// attribute a told batch decided (those its snapshot saw, and no reader
	// holds: a claimed one is its claimer's), records anew the aspects the
	// LLM owes an answer (:again: agent, aspect, agent, aspect...; claimed
	// by the background asker's hand-off :again_by when there is one; an
	// unclaimed one only where none waits for the sweep already: it reads
	// the aspect whole, whatever changed before), and
	// stores the key digest fragments (one bytea, :keys, cut at :ends: a
	// bytea array would travel as hex text), a fragment marked in :replaces
	// first deleting its aspect's fragments the snapshot saw (it was read
	// whole after them). A statement is atomic: no record goes without the
	// keys.
	keepSQL = `
WITH claimed AS (
  DELETE FROM {{.Changes}} c WHERE c.seq = ANY(CAST(:claimed AS bigint[])) AND c.claimed_by = :holder
),
decided AS (
  DELETE FROM {{.Changes}} c
  USING unnest(CAST(:agents AS text[]), CAST(:aspects AS text[]), CAST(:ids AS text[])) AS d(agent_id, aspect_id, attribute_id)
  WHERE c.agent_id = d.agent_id AND c.aspect_id = d.aspect_id AND c.attribute_id = d.attribute_id
    AND pg_visible_in_snapshot(c.xid, CAST(:snapshot AS pg_snapshot))
    AND (c.claimed_until IS NULL OR c.claimed_until < now())
),
again AS (
  INSERT INTO {{.Changes}} (agent_id, aspect_id, attribute_id, claimed_by, claimed_until)
  SELECT a[i], a[i + 1], '', CAST(:again_by AS text),
    CASE WHEN CAST(:again_by AS text) IS NOT NULL THEN now() + make_interval(secs => CAST(:again_for AS double precision)) END
  FROM (SELECT CAST(:again AS text[]) AS a) s, generate_series(1, cardinality(a), 2) AS i
  WHERE CAST(:again_by AS text) IS NOT NULL OR NOT EXISTS (
    SELECT 1 FROM {{.Changes}} o
    WHERE o.agent_id = a[i] AND o.aspect_id = a[i + 1] AND o.attribute_id = ''
      AND (o.claimed_until IS NULL OR o.claimed_until < now()))
),
frags AS (
  SELECT * FROM unnest(CAST(:frag_agents AS text[]), CAST(:frag_aspects AS text[]), CAST(:ends AS int[]), CAST(:replaces AS boolean[]))
    WITH ORDINALITY AS n(agent_id, aspect_id, stop, replaces, i)
),
gone AS (
  DELETE FROM {{.Keys}} k USING frags n
  WHERE n.replaces AND k.agent_id = n.agent_id AND k.aspect_id = n.aspect_id
    AND pg_visible_in_snapshot(k.xid, CAST(:snapshot AS pg_snapshot))
)
INSERT INTO {{.Keys}} (agent_id, aspect_id, heuristics, keys)
SELECT n.agent_id, n.aspect_id, :heuristics, substring(CAST(:keys AS bytea) FROM s.start + 1 FOR n.stop - s.start)
FROM frags n, LATERAL (SELECT coalesce((CAST(:ends AS int[]))[n.i - 1], 0) AS start) s`

	// pendingChangesSQL reads the aspects' records, at most $3 each, with
	// the statement's snapshot: at least one row, the snapshot alone when
	// there is no record. A record of an aspect owed the LLM's answer
	// (OwedAttribute) is not read: nothing in the aspect changed, its keys
	// are all in the digest.
	pendingChangesSQL = `
SELECT s.snapshot, p.agent_id, p.aspect_id, p.attribute_id
FROM (SELECT pg_current_snapshot()::text AS snapshot) s
LEFT JOIN LATERAL (
  SELECT k.agent_id, k.aspect_id, c.attribute_id
  FROM unnest($1::text[], $2::text[]) AS k(agent_id, aspect_id)
  CROSS JOIN LATERAL (
    SELECT c.attribute_id FROM {{.Changes}} c
    WHERE c.agent_id = k.agent_id AND c.aspect_id = k.aspect_id AND c.attribute_id IS DISTINCT FROM ''
    LIMIT $3) c
) p ON true`

	// dropSeenSQL deletes the records a complete full pass covered.
	dropSeenSQL = `DELETE FROM {{.Changes}} WHERE pg_visible_in_snapshot(xid, $1::pg_snapshot)`
)

// claimLockClass is the first key of the claims' advisory locks (the
// second is the aspect's hash): "SUPS".
const claimLockClass = "1398100051"

// feedStatements are the change feed's SQL, rendered for one database.
type feedStatements struct {
	Last, Extend, ConsumeClaimed, Release, Pending, DropSeen, Again, ExtendOwed, SettleOwed string
	Claim, Keep, ConsumeDecided                                                             schema.Named
}

var feedSQL = feedStatements{
	Last: lastChangeSQL, Claim: schema.NamedSQL(claimChangesSQL), Extend: extendChangesSQL, Keep: schema.NamedSQL(keepSQL),
	ConsumeClaimed: consumeClaimedSQL, ConsumeDecided: schema.NamedSQL(consumeDecidedSQL),
	Release: releaseChangesSQL, Pending: pendingChangesSQL, DropSeen: dropSeenSQL, Again: againSQL,
	ExtendOwed: extendOwedSQL, SettleOwed: settleOwedSQL,
}
