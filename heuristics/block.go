package heuristics

import (
	"math/bits"
	"slices"
)

// Key is an opaque blocking key: equal keys are how candidate pairs are
// found without comparing every pair (see BlockKeys and ContentKeys).
type Key uint64

// BlockKeys appends st's blocking keys to anchors and probes: anchors are
// the keys st is indexed under, probes the keys st looks up. Two statements
// a and b can only contradict, in either order, if a probe of one equals an
// anchor of the other: for all statements a and b, if DecideAnalyzed(a, b)
// or DecideAnalyzed(b, a) fires a signal, then probes(a) ∩ anchors(b) or
// probes(b) ∩ anchors(a) is not empty. Keys that meet are only a candidate:
// the pair must still be decided. A constraint has no keys (it is never
// superseded and supersedes nothing). The keys appended by one call are
// sorted and distinct.
func (st *Statement) BlockKeys(anchors, probes []Key) ([]Key, []Key) {
	if st.constraint {
		return anchors, probes
	}
	a0, p0 := len(anchors), len(probes)
	subj := setHash(st.subject())
	anchors, probes = st.negationKeys(anchors, probes, subj)
	anchors, probes = st.antonymKeys(anchors, probes)
	anchors, probes = st.valueKeys(anchors, probes, subj)
	anchors, probes = st.temporalKeys(anchors, probes, subj)
	return sortDistinct(anchors, a0), sortDistinct(probes, p0)
}

// ContentKeys appends one key per distinct content word of st, as
// SharedContentTokens counts them: SharedContentTokens(a, b) is the number
// of keys that ContentKeys(a) and ContentKeys(b) have in common (a key is a
// 64-bit hash of the stem, so this holds unless two distinct stems collide
// in 64 bits). The keys appended by one call are sorted and distinct.
// Constraints have content keys like any statement; the caller decides
// whether to ask about them.
func (st *Statement) ContentKeys(dst []Key) []Key {
	n := len(dst)
	for i := range st.toks {
		if t := &st.toks[i]; t.content() {
			dst = append(dst, Key(hash64(t.stem)))
		}
	}
	return sortDistinct(dst, n)
}

// Key tags: each signal's keys live in their own space.
const (
	tagNegation uint64 = iota + 1
	tagAntonym
	tagValue
	tagTempSubject // a change on the subject of an older fact
	tagTempVerb    // "now"/"instead" with the verb of an older fact
	tagTempWord    // "switched from X", "replaced X": X is in the older fact
)

// Stand-ins for a word where a key needs one: an empty selection, a
// statement without a content verb, and any verb at all. Stem hashes are 32
// bits, so these never equal one.
const (
	keyEmpty   uint64 = 0x9b1f_36c4_e2a7_5d03
	keyNoVerb  uint64 = 0x6a09_e667_f3bc_c908
	keyAnyVerb uint64 = 0xbb67_ae85_84ca_a73b
)

// negationKeys. The signal needs one side negated and the other not, the
// same irrealis, equal subjects, the same main verb when both have a content
// verb, and the negated predicate's words contained in the affirmative
// predicate's words. So the affirmative side anchors (subject, irrealis,
// verb, w) for every word w of its predicate, once with its verb (or "no
// verb") and once with "any verb"; the negated side probes with one word of
// its own predicate, which the affirmative one must then contain: with its
// verb and with "no verb" when it has a content verb, with "any verb" when
// it has none. A negated side with an empty predicate never fires.
func (st *Statement) negationKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	base := mix(tagNegation, subj, b2u(st.irreal))
	verb := keyNoVerb
	if st.verb >= 0 && st.toks[st.verb].content() {
		verb = uint64(st.toks[st.verb].hash)
	}
	pred := st.predicate()
	if st.negated {
		if i := pickWord(pred); i >= 0 {
			w := uint64(st.toks[i].hash)
			if verb == keyNoVerb {
				probes = append(probes, Key(mix(base, keyAnyVerb, w)))
			} else {
				probes = append(probes, Key(mix(base, verb, w)), Key(mix(base, keyNoVerb, w)))
			}
		}
		return anchors, probes
	}
	for m := pred.idx; m != 0; m &= m - 1 {
		w := uint64(st.toks[bits.TrailingZeros64(m)].hash)
		anchors = append(anchors, Key(mix(base, verb, w)), Key(mix(base, keyAnyVerb, w)))
	}
	return anchors, probes
}

// antonymKeys. The signal needs a word of the main clause on one side of an
// antonym pair p in one statement and on the other side in the other, the
// same negation and irrealis, subjects equal once p's words are set aside,
// and predicates (without p's words) of which one contains the other. For
// every pair p and side s a word of st belongs to, st anchors (p, s, subject,
// w) for every predicate word w and for "empty", and probes (p, other side,
// subject, one predicate word or "empty"): of two statements that fire, the
// one with the smaller predicate finds the other through its probe.
func (st *Statement) antonymKeys(anchors, probes []Key) ([]Key, []Key) {
	if !st.hasAnt {
		return anchors, probes
	}
	for i := 0; i < int(st.coreEnd); i++ {
		t := &st.toks[i]
		if t.ant == 0 {
			continue
		}
		for _, r := range defaultLexicon.ants[t.ant-1] {
			subj, pred := st.subject().without(r.Pair), st.predicate().without(r.Pair)
			base := mix(tagAntonym, uint64(r.Pair), b2u(st.negated), b2u(st.irreal), setHash(subj))
			own, other := mix(base, uint64(r.Side)), mix(base, uint64(1-r.Side))
			w := keyEmpty
			if j := pickWord(pred); j >= 0 {
				w = uint64(st.toks[j].hash)
			}
			probes = append(probes, Key(mix(other, w)))
			anchors = append(anchors, Key(mix(own, keyEmpty)))
			for m := pred.idx; m != 0; m &= m - 1 {
				anchors = append(anchors, Key(mix(own, uint64(st.toks[bits.TrailingZeros64(m)].hash))))
			}
		}
	}
	return anchors, probes
}

// valueKeys. The signal needs both statements to give a non-empty value to
// the same slot (a named predicate's slot with equal subjects, or a noun
// slot with equal slot words), neither negated nor past, the same
// irrealis and, except for the employer slot (where a different role at the
// same employer counts), the same time scope. The slot key is anchored by a
// statement that may be the newer one (not an addition) and probed by one
// that may be the older one (a one-value predicate).
func (st *Statement) valueKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	if !st.hasPred || st.negated || st.past || st.value().count() == 0 {
		return anchors, probes
	}
	slot := mix(uint64(st.pred.slot), subj)
	if st.pred.slot == slotNoun {
		slot = mix(uint64(slotNoun), setHash(st.slotSel()))
	}
	var scope uint64
	if st.pred.slot != slotEmployer {
		scope = setHash(st.scope())
	}
	k := Key(mix(tagValue, slot, b2u(st.irreal), scope))
	if st.pred.val != multi {
		probes = append(probes, k)
	}
	if !st.addAdv {
		anchors = append(anchors, k)
	}
	return anchors, probes
}

// temporalKeys. The signal needs the newer statement to announce a change
// (a change verb, "now" or "instead"), not as an addition, and the older to
// be a current fact (not negated, past or hypothetical). Then it fires in
// three ways: "switched from X" or "replaced X" where the words of X are in
// the older statement's main clause; "now"/"instead" with the older
// statement's subject and (content) main verb; or a change verb on the
// older statement's subject. A possible older statement anchors all three;
// a possible newer one probes what its change allows.
func (st *Statement) temporalKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	if st.irreal || st.negated {
		return anchors, probes
	}
	if !st.past {
		anchors = append(anchors, Key(mix(tagTempSubject, subj)))
		if st.verb >= 0 && st.toks[st.verb].content() {
			anchors = append(anchors, Key(mix(tagTempVerb, subj, uint64(st.toks[st.verb].hash))))
		}
		for m := st.coreIdx; m != 0; m &= m - 1 {
			anchors = append(anchors, Key(mix(tagTempWord, uint64(st.toks[bits.TrailingZeros64(m)].hash))))
		}
	}
	if st.replaceAt < 0 && !st.strong && !st.now || st.addAdv || st.addVerb && !st.strong && st.replaceAt < 0 {
		return anchors, probes
	}
	if st.replaceAt < 0 {
		if st.verb >= 0 {
			probes = append(probes, Key(mix(tagTempVerb, subj, uint64(st.toks[st.verb].hash))))
		}
		return anchors, probes
	}
	probes = append(probes, Key(mix(tagTempSubject, subj)))
	if i := pickWord(st.from()); i >= 0 {
		probes = append(probes, Key(mix(tagTempWord, uint64(st.toks[i].hash))))
	}
	switch st.toks[st.replaceAt].stem {
	case "replace", "swap", "trade", "convert":
		if i := pickWord(st.value()); i >= 0 {
			probes = append(probes, Key(mix(tagTempWord, uint64(st.toks[i].hash))))
		}
	}
	return anchors, probes
}

// pickWord returns the token of s that a probe names, or -1 when s is
// empty. Any word of s would keep the guarantee; the last one is usually
// the head of the value ("black tea"), which is rarer than the verb.
func pickWord(s sel) int { return s.last() }

// setHash hashes the set of stems that s selects: equal sets (as sel.equal
// compares them) hash equal, whatever the order and repetitions of their
// words. Stems are identified by their 32-bit hash; a collision only merges
// two stems, which can make unequal sets hash equal but never the reverse.
func setHash(s sel) uint64 {
	var seen []uint32
	var sum uint64
	for m := s.idx; m != 0; m &= m - 1 {
		h := s.st.toks[bits.TrailingZeros64(m)].hash
		if !slices.Contains(seen, h) {
			seen = append(seen, h)
			sum += mix64(uint64(h) + 0x51ed_2701_3a6b_e5c3)
		}
	}
	return sum
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// mix combines words into a key.
func mix(first uint64, rest ...uint64) uint64 {
	h := mix64(first ^ 0x2545_f491_4f6c_dd1d)
	for _, x := range rest {
		h = mix64(h ^ x*0x9e37_79b9_7f4a_7c15)
	}
	return h
}

// mix64 is the SplitMix64 finaliser: a bijection that spreads every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58_476d_1ce4_e5b9
	x ^= x >> 27
	x *= 0x94d0_49bb_1331_11eb
	x ^= x >> 31
	return x
}

// hash64 is a 64-bit hash of a stem for ContentKeys (FNV-1a, finished by
// mix64).
func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return mix64(h)
}

// sortDistinct sorts keys[from:] and drops repeats.
func sortDistinct(keys []Key, from int) []Key {
	tail := keys[from:]
	slices.Sort(tail)
	return keys[:from+len(slices.Compact(tail))]
}
