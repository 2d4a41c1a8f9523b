package heuristics

import (
	"bytes"
	"math/bits"
)

// sel is a set of words of a statement, compared by stem: bit i of idx
// selects token i. Analyze computes the token sets the signals compare (the
// subject, the predicate, the value...) once, with mask, the stems of the
// set as one bit each: a superset of a set has every bit of its mask, so
// most comparisons end on the masks. Statements are short, so the quadratic
// loops below beat any hashing.
type sel struct {
	st   *Statement
	idx  uint64
	mask uint64
}

// Token bitmaps hold maxTokens bits.
var _ [64 - maxTokens]struct{}

func inPair(t *token, pair int) bool {
	for _, r := range defaultLexicon.ants[t.ant-1] {
		if r.Pair == pair {
			return true
		}
	}
	return false
}

func sameStem(a *Statement, ta *token, b *Statement, tb *token) bool {
	return ta.hash == tb.hash && bytes.Equal(a.stem(ta), b.stem(tb))
}

// span is the bitmap of tokens [lo, hi).
func span(lo, hi int) uint64 {
	if hi <= lo {
		return 0
	}
	return (uint64(1)<<uint(hi) - 1) &^ (uint64(1)<<uint(lo) - 1)
}

// stemMask is the mask of the tokens of idx.
func (st *Statement) stemMask(idx uint64) uint64 {
	var m uint64
	for ; idx != 0; idx &= idx - 1 {
		m |= 1 << (st.toks[bits.TrailingZeros64(idx)].hash & 63)
	}
	return m
}

// mk makes the selection of the tokens of idx.
func (st *Statement) mk(idx uint64) sel { return sel{st: st, idx: idx, mask: st.stemMask(idx)} }

// without leaves out the words of antonym pair p.
func (s sel) without(p int) sel {
	drop := uint64(0)
	for m := s.idx; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if t := &s.st.toks[i]; t.ant != 0 && inPair(t, p) {
			drop |= 1 << uint(i)
		}
	}
	if drop == 0 {
		return s
	}
	return s.st.mk(s.idx &^ drop)
}

// has reports whether s contains a token with the stem of t (of statement o).
func (s sel) has(o *Statement, t *token) bool {
	if s.mask&(1<<(t.hash&63)) == 0 {
		return false
	}
	for m := s.idx; m != 0; m &= m - 1 {
		if sameStem(s.st, &s.st.toks[bits.TrailingZeros64(m)], o, t) {
			return true
		}
	}
	return false
}

func (s sel) count() int { return bits.OnesCount64(s.idx) }

// subsetOf reports whether every token of s is in o.
func (s sel) subsetOf(o sel) bool {
	if s.mask&^o.mask != 0 {
		return false
	}
	for m := s.idx; m != 0; m &= m - 1 {
		if !o.has(s.st, &s.st.toks[bits.TrailingZeros64(m)]) {
			return false
		}
	}
	return true
}

func (s sel) equal(o sel) bool {
	if s.mask != o.mask {
		return false
	}
	return s.subsetOf(o) && o.subsetOf(s)
}

// shared counts the tokens of s that are in o.
func (s sel) shared(o sel) int {
	if s.mask&o.mask == 0 {
		return 0
	}
	n := 0
	for m := s.idx; m != 0; m &= m - 1 {
		if o.has(s.st, &s.st.toks[bits.TrailingZeros64(m)]) {
			n++
		}
	}
	return n
}

// sharedFlag reports whether a shared token has one of the flags.
func (s sel) sharedFlag(o sel, flags uint32) bool {
	if s.mask&o.mask == 0 {
		return false
	}
	for m := s.idx; m != 0; m &= m - 1 {
		t := &s.st.toks[bits.TrailingZeros64(m)]
		if t.flags&flags != 0 && o.has(s.st, t) {
			return true
		}
	}
	return false
}

// last returns the index of the last selected token, or -1.
func (s sel) last() int { return 63 - bits.LeadingZeros64(s.idx) }

// appendRaw appends the surface words of the selection, space-separated.
func (s sel) appendRaw(b []byte) []byte {
	for m := s.idx; m != 0; m &= m - 1 {
		if m != s.idx {
			b = append(b, ' ')
		}
		b = append(b, s.st.raw(&s.st.toks[bits.TrailingZeros64(m)])...)
	}
	return b
}

// Selections used by the signals. Every selection but scope holds content
// words only.
func (st *Statement) subject() sel { return sel{st: st, idx: st.subjIdx, mask: st.subjMask} }

// predicate is everything of the main clause but the subject.
func (st *Statement) predicate() sel { return sel{st: st, idx: st.predIdx, mask: st.predMask} }
func (st *Statement) object() sel    { return sel{st: st, idx: st.objIdx, mask: st.objMask} }
func (st *Statement) core() sel      { return sel{st: st, idx: st.coreIdx, mask: st.coreMask} }
func (st *Statement) all() sel       { return sel{st: st, idx: st.allIdx, mask: st.allMask} }
func (st *Statement) value() sel     { return st.mk(st.allIdx & span(int(st.val0), int(st.val1))) }
func (st *Statement) asSel() sel     { return st.mk(st.allIdx & span(int(st.as0), int(st.as1))) }
func (st *Statement) slotSel() sel   { return st.mk(st.allIdx & span(int(st.slot0), int(st.slot1))) }
func (st *Statement) target() sel    { return st.mk(st.allIdx & span(int(st.tgt0), int(st.tgt1))) }

// scope is the time-scope words (weekends, summer) of the main clause but
// the value, content words or not.
func (st *Statement) scope() sel { return st.mk(st.scopeIdx) }
func (st *Statement) from() sel {
	if st.from0 < 0 {
		return sel{st: st}
	}
	return st.mk(st.allIdx & span(int(st.from0), int(st.from1)))
}
