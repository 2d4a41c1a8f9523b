package heuristics

import "math/bits"

// sel is a set of words of a statement, compared by stem: bit i of idx
// selects token i. Statements are short, so the quadratic loops below are
// as fast as any hashing.
type sel struct {
	st  *Statement
	idx uint64
}

func inPair(t *token, pair int) bool {
	for _, r := range defaultLexicon.ants[t.ant-1] {
		if r.Pair == pair {
			return true
		}
	}
	return false
}

// span is the bitmap of tokens [lo, hi).
func span(lo, hi int) uint64 {
	if hi <= lo {
		return 0
	}
	return (uint64(1)<<uint(hi) - 1) &^ (uint64(1)<<uint(lo) - 1)
}

// mk makes the selection of the tokens of idx.
func (st *Statement) mk(idx uint64) sel { return sel{st: st, idx: idx} }

// tokens calls fn with every selected token.
func (s sel) tokens(fn func(t *token) bool) bool {
	for m := s.idx; m != 0; m &= m - 1 {
		if !fn(&s.st.toks[bits.TrailingZeros64(m)]) {
			return false
		}
	}
	return true
}

// without leaves out the words of antonym pair p.
func (s sel) without(p int) sel {
	for m := s.idx; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if t := &s.st.toks[i]; t.ant != 0 && inPair(t, p) {
			s.idx &^= 1 << uint(i)
		}
	}
	return s
}

// has reports whether s contains a token with the stem of t.
func (s sel) has(t *token) bool {
	return !s.tokens(func(u *token) bool { return u.stem != t.stem })
}

func (s sel) count() int { return bits.OnesCount64(s.idx) }

// subsetOf reports whether every token of s is in o.
func (s sel) subsetOf(o sel) bool { return s.tokens(o.has) }

func (s sel) equal(o sel) bool { return s.subsetOf(o) && o.subsetOf(s) }

// shared counts the tokens of s that are in o.
func (s sel) shared(o sel) int {
	n := 0
	s.tokens(func(t *token) bool {
		if o.has(t) {
			n++
		}
		return true
	})
	return n
}

// sharedFlag reports whether a shared token has one of the flags.
func (s sel) sharedFlag(o sel, flags uint32) bool {
	return !s.tokens(func(t *token) bool { return t.flags&flags == 0 || !o.has(t) })
}

// last returns the index of the last selected token, or -1.
func (s sel) last() int { return 63 - bits.LeadingZeros64(s.idx) }

// appendRaw appends the surface words of the selection, space-separated.
func (s sel) appendRaw(b []byte) []byte {
	for m := s.idx; m != 0; m &= m - 1 {
		if m != s.idx {
			b = append(b, ' ')
		}
		b = append(b, s.st.toks[bits.TrailingZeros64(m)].raw...)
	}
	return b
}

// Selections used by the signals. Every selection but scope holds content
// words only.
func (st *Statement) subject() sel { return st.mk(st.subjIdx) }

// predicate is everything of the main clause but the subject.
func (st *Statement) predicate() sel { return st.mk(st.predIdx) }
func (st *Statement) object() sel    { return st.mk(st.objIdx) }
func (st *Statement) core() sel      { return st.mk(st.coreIdx) }
func (st *Statement) all() sel       { return st.mk(st.allIdx) }
func (st *Statement) value() sel     { return st.mk(st.allIdx & span(st.val0, st.val1)) }
func (st *Statement) asSel() sel     { return st.mk(st.allIdx & span(st.as0, st.as1)) }
func (st *Statement) slotSel() sel   { return st.mk(st.allIdx & span(st.slot0, st.slot1)) }
func (st *Statement) target() sel    { return st.mk(st.allIdx & span(st.tgt0, st.tgt1)) }

// scope is the time-scope words (weekends, summer) of the main clause but
// the value, content words or not.
func (st *Statement) scope() sel { return st.mk(st.scopeIdx) }
func (st *Statement) from() sel {
	if st.from0 < 0 {
		return sel{st: st}
	}
	return st.mk(st.allIdx & span(st.from0, st.from1))
}
