package supersession

import (
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
	anchorIx map[heuristics.Key][]int32
	probeIx  map[heuristics.Key][]int32
	anchors  [][]heuristics.Key
	probes   [][]heuristics.Key
	content  [][]heuristics.Key
	contIx   map[heuristics.Key][]int32

	// relevant marks the attributes that can take part in a pair at all:
	// everything without a focus; with one (the inline hook), the focus and
	// the siblings whose keys meet a focus attribute's.
	relevant []bool

	seen []uint32 // per attribute: the query stamp that last collected it
	hits []uint8  // per attribute: shared content keys in this query
	gen  uint32
	buf  []int
}

type elig struct{ old, new bool }

func newCandidates(attrs []*Attribute, el []elig, semantic bool, focus map[string]bool) *candidates {
	c := &candidates{
		attrs:    attrs,
		el:       el,
		anchorIx: map[heuristics.Key][]int32{},
		probeIx:  map[heuristics.Key][]int32{},
		anchors:  make([][]heuristics.Key, len(attrs)),
		probes:   make([][]heuristics.Key, len(attrs)),
		relevant: make([]bool, len(attrs)),
		seen:     make([]uint32, len(attrs)),
	}
	if semantic {
		c.content = make([][]heuristics.Key, len(attrs))
		c.contIx = map[heuristics.Key][]int32{}
		c.hits = make([]uint8, len(attrs))
	}
	for i, a := range attrs {
		if !el[i].old && !el[i].new {
			continue
		}
		st := a.statement()
		c.anchors[i], c.probes[i] = st.BlockKeys(nil, nil)
		if semantic {
			c.content[i] = st.ContentKeys(nil)
		}
		c.relevant[i] = focus == nil
	}
	if focus != nil {
		c.narrow(focus)
	}
	for i := range attrs {
		if !c.relevant[i] {
			continue
		}
		for _, k := range c.anchors[i] {
			c.anchorIx[k] = append(c.anchorIx[k], int32(i))
		}
		for _, k := range c.probes[i] {
			c.probeIx[k] = append(c.probeIx[k], int32(i))
		}
		if semantic {
			for _, k := range c.content[i] {
				c.contIx[k] = append(c.contIx[k], int32(i))
			}
		}
	}
	return c
}

// narrow keeps the focus attributes and the siblings that could pair with
// one of them, so a classification in an aspect of thousands costs a scan of
// their keys, not an index over all of them.
func (c *candidates) narrow(focus map[string]bool) {
	fAnchors := map[heuristics.Key]bool{}
	fProbes := map[heuristics.Key]bool{}
	var fContent map[heuristics.Key]int
	if c.content != nil {
		fContent = map[heuristics.Key]int{}
	}
	var focusIdx []int
	for i, a := range c.attrs {
		if !focus[a.ID] || (!c.el[i].old && !c.el[i].new) {
			continue
		}
		c.relevant[i] = true
		focusIdx = append(focusIdx, i)
		for _, k := range c.anchors[i] {
			fAnchors[k] = true
		}
		for _, k := range c.probes[i] {
			fProbes[k] = true
		}
		if fContent != nil {
			for _, k := range c.content[i] {
				fContent[k]++
			}
		}
	}
	if len(focusIdx) == 0 {
		return
	}
	for i := range c.attrs {
		if c.relevant[i] || (!c.el[i].old && !c.el[i].new) {
			continue
		}
		for _, k := range c.probes[i] {
			if fAnchors[k] {
				c.relevant[i] = true
				break
			}
		}
		if !c.relevant[i] {
			for _, k := range c.anchors[i] {
				if fProbes[k] {
					c.relevant[i] = true
					break
				}
			}
		}
		if !c.relevant[i] && fContent != nil {
			// A superset: shares three content keys with the focus taken
			// together; the plan asks only about pairs that really do.
			shared := 0
			for _, k := range c.content[i] {
				if fContent[k] > 0 {
					shared++
				}
			}
			c.relevant[i] = shared >= 3
		}
	}
}

// newerThan returns the indices j > i of siblings eligible as the newer side
// that may contradict attribute i, newest first. The slice is reused by the
// next call.
func (c *candidates) newerThan(i int) []int {
	c.gen++
	c.buf = c.buf[:0]
	collect := func(list []int32) {
		// Lists are in ascending index order: skip to the newer siblings.
		start, _ := slices.BinarySearch(list, int32(i+1))
		for _, j := range list[start:] {
			if c.seen[j] != c.gen && c.el[j].new {
				c.seen[j] = c.gen
				c.buf = append(c.buf, int(j))
			}
		}
	}
	for _, k := range c.probes[i] {
		collect(c.anchorIx[k])
	}
	for _, k := range c.anchors[i] {
		collect(c.probeIx[k])
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
		list := c.contIx[k]
		start, _ := slices.BinarySearch(list, int32(i+1))
		for _, j := range list[start:] {
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
