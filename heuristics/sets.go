package heuristics

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/supersessiond/supersessiond/antonyms"
)

// sel is a set of words of a statement, compared by stem: bit i of idx
// selects token i. Statements are short, so the quadratic loops below are
// as fast as any hashing.
type sel struct {
	st  *Statement
	idx uint64
}

func inPair(t *token, pair int) bool {
	return slices.ContainsFunc(defaultLexicon().ants[t.ant-1], func(r antonyms.Ref) bool { return r.Pair == pair })
}

// span is the bitmap of tokens [lo, hi).
func span(lo, hi int) uint64 {
	if hi <= lo {
		return 0
	}
	return (uint64(1)<<uint(hi) - 1) &^ (uint64(1)<<uint(lo) - 1)
}

// words yields every selected token: for t := range s.words {...}.
func (s sel) words(yield func(t *token) bool) {
	for m := s.idx; m != 0; m &= m - 1 {
		if !yield(&s.st.toks[bits.TrailingZeros64(m)]) {
			return
		}
	}
}

// without leaves out token i and the words of antonym pair p (none when p
// is negative: a pair made of a word and its negation by a prefix).
func (s sel) without(p, i int) sel {
	s.idx &^= 1 << i
	for m := s.idx; m != 0 && p >= 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		if t := &s.st.toks[k]; t.ant != 0 && inPair(t, p) {
			s.idx &^= 1 << k
		}
	}
	return s
}

// has reports whether s contains a token with the stem.
func (s sel) has(stem string) bool {
	for u := range s.words {
		if s.st.stem(u) == stem {
			return true
		}
	}
	return false
}

func (s sel) count() int { return bits.OnesCount64(s.idx) }

// hasKin reports whether s contains t's word or, when neither is a verb,
// a word of its family ("allergic" for "allergy", see lexicon.family; a
// verb is an act: "manages" is not "management").
func (s sel) hasKin(t *token) bool {
	f := defaultLexicon().fam(t.hash)
	for u := range s.words {
		if u.hash == t.hash || u.flags&fVerb == 0 && t.flags&fVerb == 0 && defaultLexicon().fam(u.hash) == f {
			return true
		}
	}
	return false
}

// kinOf reports whether every word of s has kin in o.
func (s sel) kinOf(o sel) bool {
	for t := range s.words {
		if !o.hasKin(t) {
			return false
		}
	}
	return true
}

// subsetOf reports whether every token of s is in o.
func (s sel) subsetOf(o sel) bool { return s.minus(o).idx == 0 }

// flagged counts the tokens of s with one of the flags.
func (s sel) flagged(flags uint32) int { return bits.OnesCount64(s.idx & s.st.flagged(flags)) }

// minus is the tokens of s that are not in o.
func (s sel) minus(o sel) sel {
	for m := s.idx; m != 0; m &= m - 1 {
		if k := bits.TrailingZeros64(m); o.has(s.st.stem(&s.st.toks[k])) {
			s.idx &^= 1 << k
		}
	}
	return s
}

func (s sel) equal(o sel) bool { return s.subsetOf(o) && o.subsetOf(s) }

// shared counts the tokens of s that are in o.
func (s sel) shared(o sel) int { return s.count() - s.minus(o).count() }

// sharedFlag reports whether a shared token has one of the flags.
func (s sel) sharedFlag(o sel, flags uint32) bool {
	s.idx &^= s.minus(o).idx
	return s.flagged(flags) > 0
}

// last returns the index of the last selected token, or -1.
func (s sel) last() int { return 63 - bits.LeadingZeros64(s.idx) }

// text is the words of the selection, space-separated.
func (s sel) text() string {
	var words []string
	for t := range s.words {
		words = append(words, s.st.raw(t))
	}
	return strings.Join(words, " ")
}

// Selections used by the signals: content words of a clause, or of the
// whole statement (all).
func (c *clause) sel(idx uint64) sel { return sel{st: c.st, idx: idx} }
func (c *clause) subject() sel       { return c.sel(c.subjIdx) }

// predicate is everything of the clause but the subject.
func (c *clause) predicate() sel { return c.sel(c.predIdx) }
func (c *clause) object() sel    { return c.sel(c.objIdx) }
func (c *clause) core() sel      { return c.sel(c.coreIdx) }
func (c *clause) value() sel     { return c.sel(c.valIdx) }
func (c *clause) asSel() sel     { return c.sel(c.asIdx) }
func (c *clause) slotSel() sel   { return c.sel(c.slotIdx) }
func (c *clause) owner() sel     { return c.sel(c.ownerIdx) }
func (c *clause) target() sel    { return c.sel(c.tgtIdx) }
func (c *clause) from() sel      { return c.sel(c.fromIdx) }
func (c *clause) scope() sel     { return c.sel(c.scopeIdx) }
func (c *clause) when() sel      { return c.sel(c.whenIdx) }
func (st *Statement) all() sel   { return sel{st: st, idx: st.allIdx} }
