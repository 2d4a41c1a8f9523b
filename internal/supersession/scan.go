package supersession

import (
	"context"
	"sync"

	"github.com/supersessiond/supersessiond/heuristics"
)

// Limits bound what Scan hands over at once: a batch is at most Aspects
// groups and, once it holds one, about Attributes attributes; ChunkRows
// rows are read per statement.
type Limits struct {
	Aspects    int
	Attributes int
	ChunkRows  int
	// Analyze, when positive, analyses each batch on that many goroutines
	// before handing it over (see Analyze).
	Analyze int
	// Plan, when set (Engine.PlanAhead), also plans each group of a batch
	// on those goroutines, for the Process that decides the batch.
	Plan *Ahead
}

// Scan walks the active non-constraint attributes after the cursor (of one
// agent, when given) in the order of the sibling index and hands fn the
// groups of two or more attributes, a batch at a time, in cursor order.
//
// Each chunk of rows is one short statement, so no snapshot is held across
// a pass and a pass can stop after any batch. Rows are read once: an aspect
// cut off by the end of a chunk is read again whole by the next one (an
// aspect larger than a chunk is loaded on its own). An error of fn stops the
// scan and is returned as it is.
func (e *Engine) Scan(ctx context.Context, after Cursor, agent string, lim Limits, fn func([]*Group) error) error {
	lim = lim.withDefaults()
	s := scan{e: e, lim: lim, fn: fn}
	from, inclusive := after, false
	for {
		groups, full, err := e.attrs.chunk(ctx, from, inclusive, agent, lim.ChunkRows)
		if err != nil {
			return err
		}
		if !full {
			for _, g := range groups {
				if err := s.add(ctx, g); err != nil {
					return err
				}
			}
			return s.flush(ctx)
		}
		// The last group may continue beyond the chunk: it is read again.
		last := groups[len(groups)-1]
		for _, g := range groups[:len(groups)-1] {
			if err := s.add(ctx, g); err != nil {
				return err
			}
		}
		from, inclusive = Cursor{AgentID: last.AgentID, AspectID: last.AspectID}, true
		if len(groups) == 1 {
			// An aspect larger than a chunk: all of it, in one statement.
			whole, err := e.LoadAspects(ctx, []string{last.AgentID}, []string{last.AspectID})
			if err != nil {
				return err
			}
			for _, g := range whole {
				if err := s.add(ctx, g); err != nil {
					return err
				}
			}
			inclusive = false
		}
	}
}

func (l Limits) withDefaults() Limits {
	if l.Aspects <= 0 {
		l.Aspects = 500
	}
	if l.Attributes <= 0 {
		l.Attributes = 20000
	}
	if l.ChunkRows <= 0 {
		l.ChunkRows = 20000
	}
	return l
}

// scan accumulates the groups of a Scan into batches.
type scan struct {
	e     *Engine
	lim   Limits
	fn    func([]*Group) error
	batch []*Group
	attrs int
}

func (s *scan) add(ctx context.Context, g *Group) error {
	if len(g.Attrs) < 2 {
		return nil
	}
	sortGroup(g)
	s.batch = append(s.batch, g)
	s.attrs += len(g.Attrs)
	if len(s.batch) >= s.lim.Aspects || s.attrs >= s.lim.Attributes {
		return s.flush(ctx)
	}
	return nil
}

func (s *scan) flush(ctx context.Context) error {
	if len(s.batch) == 0 {
		return nil
	}
	if err := s.e.attrs.name(ctx, s.batch); err != nil {
		return err
	}
	if s.lim.Analyze > 0 {
		Analyze(s.batch, s.lim.Analyze)
	}
	if s.lim.Plan != nil {
		s.lim.Plan.plan(s.batch, s.lim.Analyze)
	}
	batch := s.batch
	s.batch, s.attrs = nil, 0
	return s.fn(batch)
}

// Analyze computes the blocking keys of every attribute of the groups that
// may take part in a pair, on up to workers goroutines,
// so that a pass can analyse the next batch while it decides and writes
// this one. Process would do it anyway, on first use; the groups must not
// be in use elsewhere until Analyze returns.
func Analyze(groups []*Group, workers int) {
	var attrs []*Attribute
	for _, g := range groups {
		if g.Dangling {
			continue
		}
		for _, a := range g.Attrs {
			if old, nw, _ := eligibility(a); old || nw {
				attrs = append(attrs, a)
			}
		}
	}
	workers = max(1, min(workers, len(attrs)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// Most attributes meet no sibling: keep the keys, not the
			// analysis (the few in a candidate pair are read again), so
			// that a batch in flight holds kilobytes less per attribute;
			// the next analysis reuses the last one's memory, and the keys
			// are kept in blocks shared by many attributes.
			var (
				spare   *heuristics.Statement
				an, pr  []heuristics.Key
				keySlab keySlab
			)
			for i := w; i < len(attrs); i += workers {
				a := attrs[i]
				if a.keyed || a.stmt != nil { // analysed elsewhere: not ours to reuse
					a.blockKeys()
					a.stmt = nil
					continue
				}
				st := heuristics.Reanalyze(spare, a.input())
				an, pr = st.BlockKeys(an[:0], pr[:0])
				a.anchors, a.probes, a.keyed = keySlab.take(an), keySlab.take(pr), true
				a.failure = st.Failure()
				spare = st
			}
		})
	}
	wg.Wait()
}

// keySlab hands out copies of key lists from large blocks: a pass keeps
// the keys of every attribute of a batch, and one allocation each was a
// tenth of what the pass allocated. A block lives as long as any
// attribute whose keys it holds.
type keySlab struct{ block []heuristics.Key }

// keySlabBlock is the size of a block, in keys (64 KiB).
const keySlabBlock = 8192

// take returns a copy of keys (nil for none) that appending to cannot
// spill into the next copy.
func (s *keySlab) take(keys []heuristics.Key) []heuristics.Key {
	if len(keys) == 0 {
		return nil
	}
	if cap(s.block)-len(s.block) < len(keys) {
		s.block = make([]heuristics.Key, 0, max(keySlabBlock, len(keys)))
	}
	n := len(s.block)
	s.block = append(s.block, keys...)
	return s.block[n:len(s.block):len(s.block)]
}
