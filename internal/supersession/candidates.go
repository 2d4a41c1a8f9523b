package supersession

import (
	"cmp"
	"slices"

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
	anchorIx keyIndex
	probeIx  keyIndex
	anchors  [][]heuristics.Key
	probes   [][]heuristics.Key
	content  [][]heuristics.Key
	contIx   keyIndex

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

func newCandidates(attrs []*Attribute, el []elig, semantic bool, focus map[string]bool, cache *keyCache) *candidates {
	c := &candidates{
		attrs:     attrs,
		el:        el,
		anchors:   make([][]heuristics.Key, len(attrs)),
		probes:    make([][]heuristics.Key, len(attrs)),
		relevant:  make([]bool, len(attrs)),
		decidable: make([]bool, len(attrs)),
		seen:      make([]uint32, len(attrs)),
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

// keyIndex maps a key to the attributes that have it, in ascending order:
// one sorted slice rather than a map of slices, so that building it costs
// one allocation and a sort, however many distinct keys a group has.
type keyIndex []keyEntry

type keyEntry struct {
	key heuristics.Key
	at  int32
}

// newKeyIndex indexes keys[i] of every attribute i marked in include.
func newKeyIndex(keys [][]heuristics.Key, include []bool) keyIndex {
	n := 0
	for i, ks := range keys {
		if include[i] {
			n += len(ks)
		}
	}
	ix := make(keyIndex, 0, n)
	for i, ks := range keys {
		if include[i] {
			for _, k := range ks {
				ix = append(ix, keyEntry{k, int32(i)})
			}
		}
	}
	slices.SortFunc(ix, func(a, b keyEntry) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return cmp.Compare(a.at, b.at)
	})
	return ix
}

// after returns the entries of key k for attributes after i, in order.
func (ix keyIndex) after(k heuristics.Key, i int) keyIndex {
	lo, _ := slices.BinarySearchFunc(ix, keyEntry{k, int32(i + 1)}, func(e, t keyEntry) int {
		if e.key != t.key {
			return cmp.Compare(e.key, t.key)
		}
		return cmp.Compare(e.at, t.at)
	})
	hi := lo
	for hi < len(ix) && ix[hi].key == k {
		hi++
	}
	return ix[lo:hi]
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
	collect := func(list keyIndex) {
		for _, e := range list {
			if j := e.at; c.seen[j] != c.gen && c.el[j].new {
				c.seen[j] = c.gen
				c.buf = append(c.buf, int(j))
			}
		}
	}
	for _, k := range c.probes[i] {
		collect(c.anchorIx.after(k, i))
	}
	for _, k := range c.anchors[i] {
		collect(c.probeIx.after(k, i))
	}
	if c.content != nil {
		c.semanticCandidates(i)
	}
	slices.SortFunc(c.buf, func(a, b int) int { return b - a })
	return c.buf
}

// semanticCandidates adds the newer siblings sharing at least three content
// keys with attribute i.
func (c *candidates) semanticCandidates(i int) {
	var touched []int32
	for _, k := range c.content[i] {
		for _, e := range c.contIx.after(k, i) {
			j := e.at
			if c.hits[j] == 0 {
				touched = append(touched, j)
			}
			if c.hits[j] < 255 {
				c.hits[j]++
			}
		}
	}
	for _, j := range touched {
		if c.hits[j] >= 3 && c.seen[j] != c.gen && c.el[j].new {
			c.seen[j] = c.gen
			c.buf = append(c.buf, int(j))
		}
		c.hits[j] = 0
	}
}
