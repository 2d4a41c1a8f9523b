package heuristics

import (
	"math/bits"
	"slices"

	"github.com/supersessiond/supersessiond/antonyms"
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
// superseded and supersedes nothing), nor has a statement whose analysis
// failed (see Failure). The keys appended by one call are
// distinct, in no particular order. A statement's keys are its clauses'
// keys: a decision fires on a pair of clauses.
func (st *Statement) BlockKeys(anchors, probes []Key) (outA, outP []Key) {
	if st.constraint || st.failed != "" {
		return anchors, probes
	}
	defer contain(func(why string) {
		st.failed = why // its keys are none, and its decisions blocked
		outA, outP = anchors, probes
	})
	// The keys are collected in scratch space and appended at their exact
	// number: the engine keeps every statement's keys for a whole batch.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	a, p := sc.anchors[:0], sc.probes[:0]
	for i := range st.clauses {
		c := &st.clauses[i]
		subj := setHash(c.subject())
		a, p = c.negationKeys(a, p, subj)
		a, p = c.antonymKeys(a, p, subj)
		a, p = c.valueKeys(a, p)
		a, p = c.temporalKeys(a, p, subj)
		if gone, _ := c.ends(); gone.idx != 0 {
			p = append(p, wordKey(c.tok(pickWord(gone)))) // ended: who is in the older's core
		}
		if c.pending() && !c.negated {
			for t := range c.sel(c.planned().idx & c.st.allIdx).words {
				p = append(p, wordKey(t)) // resolved: a word of the plan is the newer's
			}
		}
		if k := c.pauseAt(); k >= 0 {
			for _, t := range c.pausedThings(k) {
				if t.idx != 0 {
					p = append(p, wordKey(c.tok(pickWord(t)))) // resumed: what was paused is the newer's
				}
			}
		}
		if thing, _ := c.endedThing(); thing.idx != 0 {
			for _, t := range thing.conjuncts() {
				p = append(p, wordKey(c.tok(pickWord(t)))) // a thing ended: in the older statement
			}
		}
	}
	a, p = st.measureKeys(a, p)
	for t := range st.all().words {
		a = append(a, wordKey(t)) // a thing the newer ends (see thingEnded)
	}
	sc.anchors, sc.probes = a, p
	return sc.appendDistinct(anchors, a), sc.appendDistinct(probes, p)
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
	dst = slices.Grow(dst, st.all().count()) // at most one key per word
	for t := range st.all().words {
		dst = append(dst, Key(hash64(st.stem(t))))
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
	tagMorph       // a word and its negation by a prefix
	tagQuantity    // the same statement but for a number
	tagMeasure     // a measure of a thing (see measure)
)

// Stand-ins for a word where a key needs one: an empty selection, a
// statement without a content verb, and any verb at all. Stem hashes are 32
// bits, so these never equal one.
const (
	keyEmpty   uint64 = 0x9b1f_36c4_e2a7_5d03
	keyNoVerb  uint64 = 0x6a09_e667_f3bc_c908
	keyAnyVerb uint64 = 0xbb67_ae85_84ca_a73b
	keyAnyone  uint64 = 0x3c6e_f372_fe94_f82b
)

// negationKeys. The signal needs one side negated and the other not, the
// same irrealis, equal subjects, the same main verb when both have a content
// verb, and a denied set of words (the predicate, or the predicate with one
// conjunct of its value) contained in the affirmative predicate. So the
// affirmative side anchors (subject, irrealis, verb, w) for every word w of
// its predicate, once with its verb (or "no verb") and once with "any
// verb"; the negated side probes with one word of each denied set, which
// the affirmative one must then contain: with its verb and with "no verb"
// when it has a content verb, with "any verb" when it has none.
//
// An affirmative passive without an agent is anyone's: it anchors with an
// "anyone" subject and its subject among its words, and every negated
// clause probes under "anyone" too.
func (c *clause) negationKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	verb := keyNoVerb
	if c.verb >= 0 && c.tok(c.verb).content() {
		verb = uint64(c.tok(c.verb).hash)
	}
	if c.negated {
		for _, s := range [2]uint64{subj, keyAnyone} {
			base := mix(tagNegation, s, b2u(c.irreal))
			for _, ns := range c.denied() {
				if i := pickWord(ns); i >= 0 {
					w := uint64(defaultLexicon().fam(c.tok(i).hash)) // kin meet (see negation)
					if verb == keyNoVerb {
						probes = append(probes, Key(mix(base, keyAnyVerb, w)))
					} else {
						probes = append(probes, Key(mix(base, verb, w)), Key(mix(base, keyNoVerb, w)))
					}
				}
			}
		}
		return anchors, probes
	}
	words := c.predicate()
	if c.implicit {
		subj = keyAnyone
		words = c.sel(c.predIdx | c.subjIdx)
	}
	base := mix(tagNegation, subj, b2u(c.irreal))
	withVerb, anyVerb := mix(base, verb), mix(base, keyAnyVerb) // mix(base, v, w) == mixOn(mix(base, v), w)
	for t := range words.words {
		f := uint64(defaultLexicon().fam(t.hash))
		anchors = append(anchors, Key(mixOn(withVerb, f)), Key(mixOn(anyVerb, f)))
	}
	return anchors, probes
}

// antonymKeys. The signal needs a word of the predicate on one side of an
// antonym pair p in one clause and on the other side in the other, the
// same negation and irrealis, subjects equal once p's words are set aside,
// and predicates (without p's words) of which one contains the other. For
// every pair p and side s a word of c belongs to, c anchors (p, s, subject,
// w) for every predicate word w and for "empty", and probes (p, other side,
// subject, one predicate word or "empty"): of two clauses that fire, the
// one with the smaller predicate finds the other through its probe.
//
// A word and its negation by a prefix oppose each other only when the rest
// of the predicates is equal: every word X that says a state (mayNegate)
// anchors (X, subject, the rest), and a negated word unX probes (X,
// subject, its rest).
func (c *clause) antonymKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	for i := c.start; i < c.hi; i++ {
		t := c.tok(i)
		if c.roles[rSubj]&(1<<i) != 0 || c.modifiesObject(i) {
			continue
		}
		morph := c.mayNegate(i)
		if !morph && t.ant == 0 {
			continue // most words: no key of this signal
		}
		neg := mix(b2u(c.negatedBesides(i)), b2u(c.irreal))
		if morph {
			rest := setHash(c.predicate().without(morphPairID, i))
			anchors = append(anchors, Key(mix(tagMorph, uint64(fnv1a(c.raw(i))), neg, subj, rest)))
			if base, ok := antonyms.NegatedBase(c.raw(i)); ok {
				probes = append(probes, Key(mix(tagMorph, uint64(fnv1a(base)), neg, subj, rest)))
			}
		}
		if t.ant == 0 {
			continue
		}
		for _, r := range defaultLexicon().ants[t.ant-1] {
			subj, pred := c.subject().without(r.Pair, i), c.predicate().without(r.Pair, i)
			base := mix(tagAntonym, uint64(r.Pair), neg, setHash(subj))
			own, other := mix(base, uint64(r.Side)), mix(base, uint64(1-r.Side))
			w := keyEmpty
			if j := pickWord(pred); j >= 0 {
				w = uint64(c.tok(j).hash)
			}
			probes = append(probes, Key(mix(other, w)))
			ownH := mix(own) // mix(own, w) == mixOn(mix(own), w)
			anchors = append(anchors, Key(mixOn(ownH, keyEmpty)))
			for t := range pred.words {
				anchors = append(anchors, Key(mixOn(ownH, uint64(t.hash))))
			}
		}
	}
	return anchors, probes
}

// valueKeys. The signal needs both clauses to give a non-empty value to
// the same slot (a named predicate's slot with equal owners, or a noun slot
// with equal slot words), neither negated nor past, the same irrealis and,
// except for the employer slot (where a different role at the same
// employer counts), the same time scope. The slot key is anchored by a
// clause that may be the newer one (not an addition) and probed by one that
// may be the older one (a one-value predicate). A quantity that changed
// needs the same words in the same order but for one number: the clause
// anchors and probes the sequence of its words with numbers left out.
func (c *clause) valueKeys(anchors, probes []Key) ([]Key, []Key) {
	if c.negated || c.past {
		return anchors, probes
	}
	if k, ok := c.quantityKey(); ok {
		probes = append(probes, k)
		if !c.addAdv {
			anchors = append(anchors, k)
		}
	}
	if c.pred == nil || c.value().count() == 0 {
		return anchors, probes
	}
	slot := mix(uint64(fnv1a(c.pred.slot)), setHash(c.owner()))
	if c.pred.slot == slotNoun {
		slot = mix(uint64(fnv1a(slotNoun)), setHash(c.slotSel()))
	}
	var scope uint64
	if c.pred.slot != slotEmployer {
		scope = setHash(c.scope())
	}
	k := Key(mix(tagValue, slot, b2u(c.irreal), scope))
	if c.pred.val != multi {
		probes = append(probes, k)
	}
	if !c.addAdv {
		anchors = append(anchors, k)
	}
	return anchors, probes
}

// quantityKey hashes the clause's words in order, numbers left out, when it
// has a number that counts (see counts): the quantity signal's key.
func (c *clause) quantityKey() (Key, bool) {
	h, numbers := mix(tagQuantity, b2u(c.irreal)), false
	for m := c.coreIdx; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		t := c.tok(i)
		if t.flags&tNumber != 0 {
			numbers = numbers || c.counts(i)
			h = mix(h, keyEmpty)
			continue
		}
		h = mix(h, uint64(t.hash))
	}
	return Key(h), numbers
}

// temporalKeys. The signal needs the newer clause to announce a change (a
// change verb, "now" or "instead"), not as an addition, and the older to be
// a current fact or plan (not negated or past). Then it fires in
// three ways: "switched from X", "Y instead of X" or "replaced X" where the
// words of X are in the older clause; "now"/"instead" with the older
// clause's subject and (content) main verb, or with its subject when both
// are copulas; or a change verb on the older
// clause's subject. A possible older clause anchors all three; a possible
// newer one probes what its change allows.
func (c *clause) temporalKeys(anchors, probes []Key, subj uint64) ([]Key, []Key) {
	if c.negated {
		return anchors, probes
	}
	if !c.past {
		anchors = append(anchors, Key(mix(tagTempSubject, subj)))
		if c.verb >= 0 && c.tok(c.verb).content() {
			anchors = append(anchors, Key(mix(tagTempVerb, subj, uint64(c.tok(c.verb).hash))))
		} else if c.copular {
			anchors = append(anchors, Key(mix(tagTempVerb, subj, keyNoVerb)))
		}
		// (Its words' keys: BlockKeys anchors every word of the statement.)
	}
	if c.replaceAt < 0 && !c.strong && !c.now || c.addAdv || c.addVerb && !c.strong && c.replaceAt < 0 {
		return anchors, probes
	}
	if i := pickWord(c.from()); i >= 0 {
		probes = append(probes, wordKey(c.tok(i)))
	}
	if c.replaceAt < 0 {
		if c.verb >= 0 {
			probes = append(probes, Key(mix(tagTempVerb, subj, uint64(c.tok(c.verb).hash))))
		} else if c.copular {
			probes = append(probes, Key(mix(tagTempVerb, subj, keyNoVerb)))
		}
		return anchors, probes
	}
	probes = append(probes, Key(mix(tagTempSubject, subj)))
	if i := pickWord(c.subject()); i >= 0 {
		probes = append(probes, wordKey(c.tok(i))) // thingChanged: in the older's subject
	}
	// "replaced X", or the object of any change verb when it names what
	// the older clause is about ("switched my main email to ...").
	if i := pickWord(c.value()); i >= 0 {
		probes = append(probes, wordKey(c.tok(i)))
	}
	if i := pickWord(c.sel(c.valIdx &^ c.tgtIdx)); i >= 0 {
		probes = append(probes, wordKey(c.tok(i)))
	}
	if i := c.sel(c.tgtIdx &^ c.flagged(tNumber) &^ c.models()).last(); i >= 0 && c.subjIdx == 0 {
		probes = append(probes, wordKey(c.tok(i))) // sameKind
	}
	return anchors, probes
}

// wordKey is the key of a word a temporal or ending signal needs in the
// other statement: its family's (see lexicon.family), so that "allergy"
// meets "allergic".
func wordKey(t *token) Key { return Key(mix(tagTempWord, uint64(defaultLexicon().fam(t.hash)))) }

// pickWord returns the token of s that a probe names, or -1 when s is
// empty. Any word of s would keep the guarantee; the last one is usually
// the head of the value ("black tea"), which is rarer than the verb.
func pickWord(s sel) int { return s.last() }

// setHash hashes the set of stems that s selects: equal sets (as sel.equal
// compares them) hash equal, whatever the order and repetitions of their
// words. Stems are identified by their 32-bit hash; a collision only merges
// two stems, which can make unequal sets hash equal but never the reverse.
func setHash(s sel) uint64 {
	var seen [maxTokens]uint32
	n := 0
	var sum uint64
	for t := range s.words {
		if !slices.Contains(seen[:n], t.hash) {
			seen[n] = t.hash
			n++
			sum += mix64(uint64(t.hash) + 0x51ed_2701_3a6b_e5c3)
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
	return mixOn(mix64(first^0x2545_f491_4f6c_dd1d), rest...)
}

// mixOn continues a mix with more words: mix(a, b, c) == mixOn(mix(a, b), c),
// so that keys sharing their first words need not mix those again.
func mixOn(h uint64, rest ...uint64) uint64 {
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
	sortKeys(tail)
	return keys[:from+len(slices.Compact(tail))]
}

// appendDistinct appends keys to dst without repeats, in the order they
// first occur. A statement has a few dozen keys: a small hash set (keys are
// hashes already) finds repeats in a third of the time a sort took. Its
// slots are stamped with a generation, so it is never cleared.
func (sc *scratch) appendDistinct(dst, keys []Key) []Key {
	if 2*len(keys) > len(sc.seen) {
		sortKeys(keys)
		return append(dst, slices.Compact(keys)...)
	}
	sc.gen++
	if sc.gen == 0 { // wrapped: stamps of 2^32 calls ago would look current
		clear(sc.seen[:])
		sc.gen = 1
	}
	const mask = uint64(len(sc.seen) - 1)
	dst = slices.Grow(dst, len(keys))
	for _, k := range keys {
		for h := uint64(k) & mask; ; h = (h + 1) & mask {
			s := &sc.seen[h]
			if s.gen != sc.gen {
				s.gen, s.key = sc.gen, k
				dst = append(dst, k)
				break
			}
			if s.key == k {
				break
			}
		}
	}
	return dst
}

// sortKeys sorts keys. A statement has a few dozen keys at most, which an
// insertion sort sorts about twice as fast as slices.Sort.
func sortKeys(keys []Key) {
	if len(keys) > 48 {
		slices.Sort(keys)
		return
	}
	for i := 1; i < len(keys); i++ {
		k, j := keys[i], i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
	}
}
