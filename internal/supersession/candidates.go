package supersession

import (
	"slices"
	"sync"

	"github.com/supersessiond/supersessiond/heuristics"
)

// candidates finds, for each attribute of a group, the newer siblings that
// could contradict it, without comparing every pair. The heuristics
// guarantee that two statements can only fire a signal if a probe key of
// one equals an anchor key of the other (heuristics.BlockKeys), so an
// inverted index from keys to attributes yields every pair that matters;
// an aspect of thousands of compatible facts ("Speaks French", "Visited
// Kyoto in 2019", ...) then costs about as many lookups as it has
// attributes, not the square of that. When the semantic fallback is on,
// pairs sharing at least three content tokens are candidates too (the LLM
// is asked only about those), found through an index of content keys.
type candidates struct {
	attrs    []*Attribute
	el       []elig
	anchorIx *keyIndex
	probeIx  *keyIndex
	anchors  [][]heuristics.Key
	probes   [][]heuristics.Key
	content  [][]heuristics.Key
	contIx   *keyIndex
	// every: every eligible pair is a candidate (the LLM's aspect gate).
	every bool

	// relevant marks the attributes in the index: everything without a
	// focus; with one (the inline hook), the focus, the siblings whose keys
	// meet a focus attribute's, and the siblings whose keys meet those
	// partners that are older than a focus attribute (their newer
	// contradictors compete with the focus for the rule's "newest").
	relevant []bool
	// decidable marks the old attributes whose decision a pass may make:
	// every eligible one without a focus; with one, the focus and its older
	// partners.
	decidable []bool

	seen []uint32 // per attribute: the query stamp that last collected it
	hits []uint8  // per attribute: shared content keys in this query
	gen  uint32
	buf  []int
}

type elig struct{ old, new bool }

func newCandidates(attrs []*Attribute, el []elig, pairs pairing, focus map[string]bool, cache *keyCache) *candidates {
	semantic := pairs == pairOverlap
	c := &candidates{
		attrs:     attrs,
		el:        el,
		anchors:   make([][]heuristics.Key, len(attrs)),
		probes:    make([][]heuristics.Key, len(attrs)),
		relevant:  make([]bool, len(attrs)),
		decidable: make([]bool, len(attrs)),
		seen:      make([]uint32, len(attrs)),
		every:     pairs == pairEvery,
	}
	if semantic {
		c.content = make([][]heuristics.Key, len(attrs))
		c.hits = make([]uint8, len(attrs))
	}
	for i, a := range attrs {
		if !el[i].old && !el[i].new {
			continue
		}
		if cache != nil {
			cache.keys(a)
		}
		c.anchors[i], c.probes[i] = a.blockKeys()
		if semantic {
			c.content[i] = a.statement().ContentKeys(nil)
		}
		c.relevant[i] = focus == nil
		c.decidable[i] = focus == nil && el[i].old
	}
	if focus != nil {
		c.narrow(focus)
	}
	c.anchorIx = newKeyIndex(c.anchors, c.relevant)
	c.probeIx = newKeyIndex(c.probes, c.relevant)
	if semantic {
		c.contIx = newKeyIndex(c.content, c.relevant)
	}
	return c
}

// keyIndex maps a key to the attributes that have it, newest first: an
// open-addressing table from key to the newest entry, and each entry
// chained to the next older one. Building it is one probe per key (keys
// are hashes already: their low bits are the slot), and a lookup for the
// siblings newer than i stops at the first that is not. A group of
// thousands holds tens of thousands of keys; a sort or a Go map of slices
// cost more than reading the group.
type keyIndex struct {
	slots []keySlot
	used  []int32 // the occupied slots, in the order they were taken
	mask  uint64
	next  []int32 // entry → the next older entry with the same key, or -1
	at    []int32 // entry → its attribute
}

type keySlot struct {
	key  heuristics.Key
	head int32 // newest entry + 1; 0: empty slot
}

// indexBuffers recycles the tables of keyIndex across groups: a pass
// builds three for every group, and allocating them was a tenth of its
// time. A few are kept on a list the collector leaves alone (a sync.Pool
// was emptied by each of the dozens of collections in a pass, and most of
// what a pass allocated was then new tables); a table of a giant group is
// not kept.
var indexBuffers struct {
	sync.Mutex
	free []*keyIndex
}

const (
	keptIndexes   = 4
	keptIndexSize = 1 << 18 // slots: 4 MiB
)

func getIndex() *keyIndex {
	indexBuffers.Lock()
	defer indexBuffers.Unlock()
	if n := len(indexBuffers.free); n > 0 {
		ix := indexBuffers.free[n-1]
		indexBuffers.free = indexBuffers.free[:n-1]
		return ix
	}
	return new(keyIndex)
}

// newKeyIndex indexes keys[i] of every attribute i marked in include.
// release returns its memory once the index is no longer used.
func newKeyIndex(keys [][]heuristics.Key, include []bool) *keyIndex {
	n := 0
	for i, ks := range keys {
		if include[i] {
			n += len(ks)
		}
	}
	size := 16
	for size < 2*n {
		size *= 2
	}
	ix := getIndex()
	if cap(ix.slots) < size {
		ix.slots = make([]keySlot, size)
	}
	ix.slots = ix.slots[:size] // all empty: a kept table was emptied by release
	ix.mask, ix.next, ix.at, ix.used = uint64(size-1), ix.next[:0], ix.at[:0], ix.used[:0]
	for i, ks := range keys {
		if !include[i] {
			continue
		}
		for _, k := range ks {
			h := ix.slotIndex(k)
			s := &ix.slots[h]
			if s.head == 0 {
				ix.used = append(ix.used, int32(h))
			}
			e := int32(len(ix.at))
			ix.at = append(ix.at, int32(i))
			ix.next = append(ix.next, s.head-1)
			s.key, s.head = k, e+1
		}
	}
	return ix
}

func (ix *keyIndex) release() {
	if ix == nil || cap(ix.slots) > keptIndexSize {
		return
	}
	// Empty the slots taken, not the table: a group's distinct keys are a
	// few of its table's slots (sized for every key it holds, repeated or
	// not), and clearing whole tables was half the cost of building them.
	for _, h := range ix.used {
		ix.slots[h] = keySlot{}
	}
	indexBuffers.Lock()
	defer indexBuffers.Unlock()
	if len(indexBuffers.free) < keptIndexes {
		indexBuffers.free = append(indexBuffers.free, ix)
	}
}

// slot is k's slot: the one holding k, or the empty one where it goes.
func (ix *keyIndex) slot(k heuristics.Key) *keySlot { return &ix.slots[ix.slotIndex(k)] }

func (ix *keyIndex) slotIndex(k heuristics.Key) uint64 {
	for h := uint64(k) & ix.mask; ; h = (h + 1) & ix.mask {
		if s := &ix.slots[h]; s.head == 0 || s.key == k {
			return h
		}
	}
}

// newer calls fn for each attribute after i that has key k, newest first.
func (ix *keyIndex) newer(k heuristics.Key, i int, fn func(j int32)) {
	for e := ix.slot(k).head - 1; e >= 0 && int(ix.at[e]) > i; e = ix.next[e] {
		fn(ix.at[e])
	}
}

// release returns the indexes' memory; c is not used after.
func (c *candidates) release() {
	c.anchorIx.release()
	c.probeIx.release()
	c.contIx.release()
	c.anchorIx, c.probeIx, c.contIx = nil, nil, nil
}

// narrow limits the index to what a focused pass needs, so a classification
// in an aspect of thousands costs a scan of their keys, not an index over
// all of them. An old partner of the focus is decided by the full rule (the
// newest sibling that contradicts it wins, focus or not), so the partners
// of those old partners are indexed too.
func (c *candidates) narrow(focus map[string]bool) {
	var focusIdx []int
	for i, a := range c.attrs {
		if focus[a.ID] && (c.el[i].old || c.el[i].new) {
			focusIdx = append(focusIdx, i)
		}
	}
	if len(focusIdx) == 0 {
		return
	}
	newestFocus := focusIdx[len(focusIdx)-1]
	for _, i := range focusIdx {
		c.relevant[i] = true
		c.decidable[i] = c.el[i].old
	}
	var partnerOlds []int
	for _, j := range c.meeting(focusIdx) {
		c.relevant[j] = true
		if j < newestFocus && c.el[j].old && !c.decidable[j] {
			c.decidable[j] = true
			partnerOlds = append(partnerOlds, j)
		}
	}
	for _, j := range c.meeting(partnerOlds) {
		if j > partnerOlds[0] {
			c.relevant[j] = true
		}
	}
}

// meeting returns the eligible attributes outside set whose keys could pair
// with an attribute of set: a probe meeting an anchor (either way round),
// or, with the semantic fallback, three content keys shared with the set
// taken together (a superset; the plan asks only about pairs that really do).
func (c *candidates) meeting(set []int) []int {
	if len(set) == 0 {
		return nil
	}
	in := make(map[int]bool, len(set))
	anchors := map[heuristics.Key]bool{}
	probes := map[heuristics.Key]bool{}
	var content map[heuristics.Key]int
	if c.content != nil {
		content = map[heuristics.Key]int{}
	}
	for _, i := range set {
		in[i] = true
		for _, k := range c.anchors[i] {
			anchors[k] = true
		}
		for _, k := range c.probes[i] {
			probes[k] = true
		}
		if content != nil {
			for _, k := range c.content[i] {
				content[k]++
			}
		}
	}
	var out []int
	for i := range c.attrs {
		if in[i] || (!c.el[i].old && !c.el[i].new) {
			continue
		}
		if c.meets(i, anchors, probes, content) {
			out = append(out, i)
		}
	}
	return out
}

func (c *candidates) meets(i int, anchors, probes map[heuristics.Key]bool, content map[heuristics.Key]int) bool {
	if c.every {
		return true
	}
	for _, k := range c.probes[i] {
		if anchors[k] {
			return true
		}
	}
	for _, k := range c.anchors[i] {
		if probes[k] {
			return true
		}
	}
	if content == nil {
		return false
	}
	shared := 0
	for _, k := range c.content[i] {
		if content[k] > 0 {
			shared++
		}
	}
	return shared >= 3
}

// newerThan returns the indices j > i of siblings eligible as the newer side
// that may contradict attribute i, newest first. The slice is reused by the
// next call.
func (c *candidates) newerThan(i int) []int {
	c.gen++
	c.buf = c.buf[:0]
	if c.every {
		// Every newer sibling is a candidate; those whose keys meet i's
		// are marked (met): only they can fire a heuristic signal.
		mark := func(j int32) { c.seen[j] = c.gen }
		for _, k := range c.probes[i] {
			c.anchorIx.newer(k, i, mark)
		}
		for _, k := range c.anchors[i] {
			c.probeIx.newer(k, i, mark)
		}
		for j := len(c.attrs) - 1; j > i; j-- {
			if c.el[j].new && c.relevant[j] {
				c.buf = append(c.buf, j)
			}
		}
		return c.buf
	}
	collect := func(j int32) {
		if c.seen[j] != c.gen && c.el[j].new {
			c.seen[j] = c.gen
			c.buf = append(c.buf, int(j))
		}
	}
	for _, k := range c.probes[i] {
		c.anchorIx.newer(k, i, collect)
	}
	for _, k := range c.anchors[i] {
		c.probeIx.newer(k, i, collect)
	}
	if c.content != nil {
		c.semanticCandidates(i)
	}
	slices.Sort(c.buf)
	slices.Reverse(c.buf)
	return c.buf
}

// met reports whether the keys of candidate j of the last newerThan meet
// its attribute's: a pair whose keys meet nothing fires no heuristic signal
// (heuristics.BlockKeys), so with every pair a candidate (the LLM's aspect
// gate) the heuristics are not run on it.
func (c *candidates) met(j int) bool { return c.seen[j] == c.gen }

// semanticCandidates adds the newer siblings sharing at least three content
// keys with attribute i.
func (c *candidates) semanticCandidates(i int) {
	var touched []int32
	for _, k := range c.content[i] {
		c.contIx.newer(k, i, func(j int32) {
			if c.hits[j] == 0 {
				touched = append(touched, j)
			}
			if c.hits[j] < 255 {
				c.hits[j]++
			}
		})
	}
	for _, j := range touched {
		if c.hits[j] >= 3 && c.seen[j] != c.gen && c.el[j].new {
			c.seen[j] = c.gen
			c.buf = append(c.buf, int(j))
		}
		c.hits[j] = 0
	}
}
