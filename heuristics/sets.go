package heuristics

import "bytes"

// sel selects content tokens of a statement: indexes [lo, hi) whose role is
// in roles (any role when roles is 0), leaving out the words of antonym pair
// skip-1 (when skip > 0) and, when flag is set, tokens without that flag.
// Sets are compared by stem; statements are short, so the quadratic loops
// below beat any hashing.
type sel struct {
	st     *Statement
	lo, hi int
	roles  uint8
	skip   int
	flag   uint32
	pre    uint64 // the mask, when precomputed by Analyze (hasPre)
	hasPre bool
}

func (s sel) ok(i int) bool {
	t := &s.st.toks[i]
	if !t.content() && s.flag == 0 {
		return false
	}
	if s.flag != 0 && t.flags&s.flag == 0 {
		return false
	}
	if s.roles != 0 && t.role&s.roles == 0 {
		return false
	}
	if s.skip > 0 && t.ant != 0 && inPair(t, s.skip-1) {
		return false
	}
	return true
}

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

// has reports whether s contains a token with the stem of t (of statement o).
func (s sel) has(o *Statement, t *token) bool {
	for j := s.lo; j < s.hi; j++ {
		if s.ok(j) && sameStem(s.st, &s.st.toks[j], o, t) {
			return true
		}
	}
	return false
}

func (s sel) count() int {
	n := 0
	for i := s.lo; i < s.hi; i++ {
		if s.ok(i) {
			n++
		}
	}
	return n
}

// mask is the set's stems as one bit each: a superset of a set has every
// bit of its mask, so most comparisons end here.
func (s sel) mask() uint64 {
	if s.hasPre && s.skip == 0 {
		return s.pre
	}
	var m uint64
	for i := s.lo; i < s.hi; i++ {
		if s.ok(i) {
			m |= 1 << (s.st.toks[i].hash & 63)
		}
	}
	return m
}

// subsetOf reports whether every token of s is in o.
func (s sel) subsetOf(o sel) bool {
	if s.mask()&^o.mask() != 0 {
		return false
	}
	for i := s.lo; i < s.hi; i++ {
		if s.ok(i) && !o.has(s.st, &s.st.toks[i]) {
			return false
		}
	}
	return true
}

func (s sel) equal(o sel) bool {
	if s.mask() != o.mask() {
		return false
	}
	return s.subsetOf(o) && o.subsetOf(s)
}

// shared counts the tokens of s that are in o.
func (s sel) shared(o sel) int {
	n := 0
	for i := s.lo; i < s.hi; i++ {
		if s.ok(i) && o.has(s.st, &s.st.toks[i]) {
			n++
		}
	}
	return n
}

// sharedFlag reports whether a shared token has one of the flags.
func (s sel) sharedFlag(o sel, flags uint32) bool {
	for i := s.lo; i < s.hi; i++ {
		if s.ok(i) && s.st.toks[i].flags&flags != 0 && o.has(s.st, &s.st.toks[i]) {
			return true
		}
	}
	return false
}

// last returns the index of the last selected token, or -1.
func (s sel) last() int {
	for i := s.hi - 1; i >= s.lo; i-- {
		if s.ok(i) {
			return i
		}
	}
	return -1
}

// appendRaw appends the surface words of the selection, space-separated.
func (s sel) appendRaw(b []byte) []byte {
	first := true
	for i := s.lo; i < s.hi; i++ {
		if !s.ok(i) {
			continue
		}
		if !first {
			b = append(b, ' ')
		}
		first = false
		b = append(b, s.st.raw(&s.st.toks[i])...)
	}
	return b
}

// Selections used by the signals.
func (st *Statement) subject() sel {
	return sel{st: st, lo: 0, hi: st.coreEnd, roles: rSubj, pre: st.subjMask, hasPre: true}
}

// predicate is everything of the main clause but the subject.
func (st *Statement) predicate() sel {
	return sel{st: st, lo: 0, hi: st.coreEnd, roles: rChain | rVerb | rVal | rQual, pre: st.predMask, hasPre: true}
}
func (st *Statement) core() sel    { return sel{st: st, lo: 0, hi: st.coreEnd} }
func (st *Statement) all() sel     { return sel{st: st, lo: 0, hi: st.ntok} }
func (st *Statement) value() sel   { return sel{st: st, lo: st.val0, hi: st.val1} }
func (st *Statement) asSel() sel   { return sel{st: st, lo: st.as0, hi: st.as1} }
func (st *Statement) slotSel() sel { return sel{st: st, lo: st.slot0, hi: st.slot1} }
func (st *Statement) target() sel  { return sel{st: st, lo: st.tgt0, hi: st.tgt1} }
func (st *Statement) object() sel {
	return sel{st: st, lo: 0, hi: st.coreEnd, roles: rVal | rQual, pre: st.objMask, hasPre: true}
}
func (st *Statement) scope() sel {
	return sel{st: st, lo: 0, hi: st.coreEnd, roles: rQual | rChain | rSubj, flag: fScope}
}
func (st *Statement) from() sel {
	if st.from0 < 0 {
		return sel{st: st}
	}
	return sel{st: st, lo: st.from0, hi: st.from1}
}
