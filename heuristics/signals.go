package heuristics

import (
	"math/bits"
	"strings"
	"sync"

	"github.com/supersessiond/supersessiond/antonyms"
)

// The signals below compare two clauses, a of the older statement and b of
// the newer. They have blocking keys in block.go, built from their
// necessary conditions: a change to what a signal requires must change its
// keys too (block_test.go and sweep_test.go fail when they disagree).

// Signal names: fixed strings, recorded in audit metadata.
const (
	SignalNegation = "negation_polarity"
	SignalAntonym  = "antonym"
	SignalValue    = "value_conflict"
	SignalTemporal = "temporal_supersession"
)

// Calibrated confidences. The engine applies supersessionMinConfidence
// (0.7) and supersessionReviewConfidence (0.5): a contradiction the
// heuristics are sure of scores at least 0.75, a plausible change they
// cannot pin to a slot lands in [0.5, 0.7) for human review, and what they
// consider compatible fires no signal at all.
const (
	confNegationExact    = 0.9  // "drinks coffee" / "doesn't drink coffee"
	confNegationSubset   = 0.8  // "drinks coffee every morning" / "doesn't drink coffee"
	confAntonymExact     = 0.85 // same words but one antonym
	confAntonymPartial   = 0.6  // one side says more besides the antonym
	confAntonymQualified = 0.75 // ... only in a qualifier ("is cold after the restart")
	confValueDisjoint    = 0.9  // single-valued slot, unrelated values
	confValueOverlap     = 0.85 // single-valued slot, values share a word ("north/west vancouver")
	confValueRole        = 0.8  // same employer, different "as" role
	confValueCategory    = 0.85 // prefers window seat / prefers aisle seat
	confValueCatBare     = 0.75 // prefers tea / prefers coffee
	confValueUsually     = 0.6  // usually single-valued: drives, attends
	confValueUsuallyNow  = 0.75 // the same, and the newer says it changed ("now drives")
	confTemporalFrom     = 0.9  // "switched from X" where X is the older value
	confTemporalSlot     = 0.85 // change verb in a named one-value slot ("as the main editor")
	confTemporalVerb     = 0.8  // same verb, new value, explicit change ("now", "instead")
	confTemporalContext  = 0.75 // change verb sharing context with the older ("the desktop")
	confTemporalWeak     = 0.6  // "now" + same verb, nothing else shared
	confTemporalBare     = 0.55 // change verb, nothing shared: which slot changed is a guess
)

// explain collects why a signal did not fire, for the reason of a decision
// with no signal. The first explanation set wins: signals are evaluated in
// order of how telling their near misses are.
type explain struct{ why string }

func (e *explain) miss(why string) {
	if e.why == "" {
		e.why = why
	}
}

// fired is a signal that fired.
type fired struct {
	name   string
	conf   float64
	detail string
}

// change renders "label: from → to".
func change(label string, from, to sel) string {
	return label + ": " + from.text() + " → " + to.text()
}

// sameTime: time anchors said on both sides must agree ("on call this week"
// and "not on call next week" are about different weeks); one said on one
// side only ("until next year") qualifies without contradicting.
func sameTime(a, b *clause) bool {
	return a.whenIdx == 0 || b.whenIdx == 0 || a.when().equal(b.when())
}

// negation: one clause denies what the other asserts. The denied content
// must be contained in the asserted one ("doesn't drink coffee" against
// "drinks coffee every morning"), about the same subject, with the same
// verb: "doesn't drink black tea" says nothing against "drinks green tea".
// A coordinated denial denies each conjunct ("no longer likes chess or
// sushi").
func negation(a, b *clause, e *explain) (fired, bool) {
	if f, ok := ended(a, b); ok {
		return f, true
	}
	if f, ok := thingEnded(a, b); ok {
		return f, true
	}
	if a.negated == b.negated {
		return fired{}, false
	}
	if a.irreal != b.irreal {
		e.miss("No contradiction: one statement is hypothetical (a plan or a wish), the other a fact.")
		return fired{}, false
	}
	neg, pos, side := a, b, "older negates"
	if b.negated {
		neg, pos, side = b, a, "newer negates"
	}
	ps := pos.predicate()
	ps.idx &^= pos.fromIdx // "takes the 8:05 now instead of the 7:15" does not take the 7:15
	switch {
	case neg.subject().equal(pos.subject()):
	case pos.implicit && !neg.implicit && sameVerb(neg, pos) && pos.subject().subsetOf(neg.predicate()):
		// "Kafka is used for event streaming" / "The pipeline no longer
		// uses Kafka for ...": the active's object is the passive's subject.
		ps = pos.sel(pos.predIdx | pos.subjIdx)
	default:
		e.miss("No contradiction: the negation is about a different subject.")
		return fired{}, false
	}
	if neg.verb >= 0 && pos.verb >= 0 {
		nv, pv := neg.tok(neg.verb), pos.tok(pos.verb)
		if nv.content() && pv.content() && neg.stem(neg.verb) != pos.stem(pos.verb) {
			e.miss("No contradiction: the negation is about a different action.")
			return fired{}, false
		}
	}
	ps.idx &^= pos.perPhrase() // "pages average 5 per on-call week" says nothing of being on call
	if !sameTime(neg, pos) {
		e.miss("No contradiction: the statements are about different times.")
		return fired{}, false
	}
	for _, ns := range neg.denied() {
		if ns.count() == 0 || !ns.kinOf(ps) { // "no longer allergic to shellfish" / "has a shellfish allergy"
			continue
		}
		conf := confNegationSubset
		if ps.kinOf(ns) {
			conf = confNegationExact
		}
		return fired{SignalNegation, conf, side + ": " + ns.text()}, true
	}
	e.miss("No contradiction: the negation is about something the other statement does not say.")
	return fired{}, false
}

// sameVerb reports clauses whose main verbs are the same content verb.
func sameVerb(a, b *clause) bool {
	return a.verb >= 0 && b.verb >= 0 && a.tok(a.verb).content() && a.stem(a.verb) == b.stem(b.verb)
}

// denied is what a negated clause denies: its predicate, or, for a
// coordinated value, its predicate with each conjunct alone.
//
// A cessation's reasons and replacements are not what it ends: "ditched
// Chrome for Firefox", "quit smoking after the diagnosis".
func (c *clause) denied() []sel {
	if c.verb >= 0 && c.tok(c.verb).content() && c.indefinite0() {
		return []sel{c.sel(1 << c.verb)} // "doesn't manage anyone": whoever it was
	}
	pred := c.predIdx
	if k := bits.TrailingZeros64(c.roles[rQual] & c.flagged(fPrep)); c.cease && k < c.hi && (circumstances[c.raw(k)] || c.is(k, wordFor)) {
		pred &^= span(k, c.hi)
	}
	if len(c.alts) == 0 {
		return []sel{c.sel(pred)}
	}
	out := make([]sel, 0, len(c.alts))
	for _, alt := range c.alts {
		out = append(out, c.sel(pred&^(c.valIdx&^alt)))
	}
	return out
}

// antonym: the clauses are the same but for a pair of opposite words
// ("notifications are enabled" / "notifications are disabled"). Opposite
// words about different things are not a contradiction: in different
// subjects ("Wi-Fi is on" / "the heating is off"), or as the kind of the
// object of a many-valued predicate ("owns small boats" / "owns large
// boats": two sets of boats).
func antonym(a, b *clause, e *explain) (fired, bool) {
	if a.irreal != b.irreal || !sameTime(a, b) {
		return fired{}, false
	}
	best := fired{}
	for i := a.start; i < a.hi; i++ {
		for j := b.start; j < b.hi; j++ {
			pair := a.opposite(i, b, j)
			if pair == noPair || a.negatedBesides(i) != b.negatedBesides(j) {
				continue // "is not enabled" and "is disabled" agree
			}
			if f, ok := opposed(a, b, i, j, pair, e); ok && f.conf > best.conf {
				best = f
			}
		}
	}
	return best, best.conf > 0
}

// negatedBesides is the negation parity without token i's part: "the trip
// is cancelled" opposes "confirmed" by the word that is also a cessation.
func (c *clause) negatedBesides(i int) bool {
	return c.negated != (c.cease && c.tok(i).flags&fCease != 0)
}

// opposed decides on tokens i of a and j of b, which are opposite sides
// of the antonym pair.
func opposed(a, b *clause, i, j, pair int, e *explain) (fired, bool) {
	sa, sb := a.subject().without(pair, i), b.subject().without(pair, j)
	if !sa.equal(sb) {
		e.miss("No contradiction: opposite words, but about different subjects.")
		return fired{}, false
	}
	ra, rb := a.predicate().without(pair, i), b.predicate().without(pair, j)
	switch {
	case pair == morphPairID && !ra.equal(rb):
	case ra.equal(rb):
		return fired{SignalAntonym, confAntonymExact, antonymDetail(a, b, i, j, rb)}, true
	case ra.subsetOf(rb) || rb.subsetOf(ra):
		conf := confAntonymPartial
		if qualifiesOnly(a, ra, rb) && qualifiesOnly(b, rb, ra) && a.scope().equal(b.scope()) {
			conf = confAntonymQualified
		}
		return fired{SignalAntonym, conf, antonymDetail(a, b, i, j, rb)}, true
	}
	e.miss("No contradiction: opposite words, but about different things.")
	return fired{}, false
}

// qualifiesOnly reports whether the words of r, a selection of c, that o
// lacks all say when or after what ("after the restart", "since the
// remodel"): the circumstance of a change, not a narrower place or thing
// ("off in the living room", "fails on ARM") nor more of the value.
func qualifiesOnly(c *clause, r, o sel) bool {
	extra := r.minus(o).idx
	if k := bits.TrailingZeros64(c.roles[rQual] & c.flagged(fPrep)); k < c.hi && circumstances[c.raw(k)] {
		// An event, not a time of day ("on after 10pm").
		return extra&^span(k, c.hi) == 0 && c.sel(extra).flagged(tNumber|fTime) == 0
	}
	return extra == 0 // another preposition first: "in the living room"
}

var circumstances = toSet(`after since following`)

func antonymDetail(a, b *clause, i, j int, rest sel) string {
	d := a.raw(i) + " → " + b.raw(j)
	if rest.count() > 0 {
		d += " (" + rest.text() + ")"
	}
	return d
}

// opposite returns the antonym pair that token i of a and token j of b are
// opposite sides of, or noPair. A word of the subject names a thing rather than
// its state ("the front door"); an opposite role opposes what someone is
// ("is a winner"), never two things someone has ("has a son"); and a word
// that modifies the object of a many-valued predicate names which object.
// Besides the lexicon's pairs, a word and its negation by un-, non- or dis-
// are opposite when both occur ("encrypted", "unencrypted").
func (a *clause) opposite(i int, b *clause, j int) int {
	ta, tb := a.tok(i), b.tok(j)
	if a.roles[rSubj]&(1<<i) != 0 || b.roles[rSubj]&(1<<j) != 0 || a.modifiesObject(i) || b.modifiesObject(j) {
		return noPair
	}
	if ta.ant != 0 && tb.ant != 0 {
		for _, ra := range defaultLexicon().ants[ta.ant-1] {
			for _, rb := range defaultLexicon().ants[tb.ant-1] {
				if ra.Pair == rb.Pair && ra.Side != rb.Side && (defaultLexicon().pairs[ra.Pair].Kind != antonyms.Role || a.copular && b.copular) {
					return ra.Pair
				}
			}
		}
	}
	if a.mayNegate(i) && b.mayNegate(j) && (morphPair(ta, a.raw(i), b.raw(j)) || morphPair(tb, b.raw(j), a.raw(i))) {
		return morphPairID
	}
	return noPair
}

// mayNegate reports whether token i says a state that its negation by a
// prefix would oppose: the value of a copula or of a linking verb ("is
// refundable", "feels safe"), or a passive's participle ("is supported").
func (c *clause) mayNegate(i int) bool {
	if !c.tok(i).content() {
		return false
	}
	if i == c.verb {
		return c.passive
	}
	return c.valIdx&(1<<i) != 0 && (c.copular || c.linking)
}

// linkingVerbs say what their subject is, as a copula does.
var linkingVerbs = toSet(`feel seem look sound become stay remain keep`)

// Stand-ins for an antonym pair: none, and a pair made of a word and its
// negation by a prefix.
const (
	noPair      = -1
	morphPairID = -2
)

// morphPair reports whether the word neg is the word of token base negated
// by a prefix.
func morphPair(base *token, baseRaw, neg string) bool {
	b, ok := antonyms.NegatedBase(neg)
	return ok && base.content() && b == baseRaw
}

// modifiesObject reports whether token i, after the verb of a predicate
// that holds many values, modifies the noun that follows it ("small boats",
// "a wired mouse", "tests for public functions"): it says which things,
// not how they are.
func (c *clause) modifiesObject(i int) bool {
	if c.copular || c.oneValue() || i <= c.verb || i+1 >= c.hi {
		return false
	}
	t, next := c.tok(i), c.tok(i+1)
	return t.content() && next.content() && next.flags&tBreak == 0 && c.roles[rChain]&(1<<i) == 0
}

// oneValue: the predicate holds one value at a time (or usually, or one per kind).
func (c *clause) oneValue() bool { return c.pred != nil && c.pred.val != multi }

// sameSlot reports whether both clauses give a value to the same slot.
func sameSlot(a, b *clause) bool {
	if a.pred == nil || b.pred == nil || a.pred.slot != b.pred.slot {
		return false
	}
	if a.pred.slot == slotNoun {
		return a.slotSel().equal(b.slotSel())
	}
	return a.owner().equal(b.owner())
}

// value: the same one-value slot holds different values ("lives in
// Toronto" / "lives in Vancouver"). A value that refines the other
// ("Toronto" / "downtown Toronto") or predicates that hold many values
// ("plays tennis" / "plays the piano") are not a conflict; a quantity that
// changed in an otherwise identical statement is ("takes 10 mg" / "takes 20
// mg").
func value(a, b *clause, e *explain) (fired, bool) {
	if a.negated || b.negated || a.irreal != b.irreal {
		return fired{}, false
	}
	if !sameSlot(a, b) {
		return quantity(a, b, e)
	}
	if a.pred.val == multi {
		e.miss(a.pred.multiReason)
		return quantity(a, b, e)
	}
	if a.past || b.past {
		e.miss("No contradiction: one statement is about the past.")
		return fired{}, false
	}
	if b.addAdv {
		e.miss("No contradiction: the newer statement adds a value (also, too, another).")
		return fired{}, false
	}
	va, vb := a.value(), b.value()
	if va.count() == 0 || vb.count() == 0 {
		return fired{}, false
	}
	if ka, kb := a.valueKind(), b.valueKind(); ka != kb || ka == valueNone || a.pred.slot == slotNoun && !a.holder && (a.valuePrep() != b.valuePrep() || a.partOf() != b.partOf()) {
		e.miss("No contradiction: the values are of different kinds (a city and a kind of home, an employer and a time, a model and a colour).")
		return fired{}, false
	}
	label := a.pred.display
	if a.pred.slot == slotNoun {
		label = a.slotSel().text()
	}
	if agree(va, vb) {
		// Same value. A different role at the same employer is a change.
		if a.pred.slot == slotEmployer && b.pred.slot == slotEmployer {
			aa, ab := a.asSel(), b.asSel()
			if aa.count() > 0 && ab.count() > 0 && !aa.subsetOf(ab) && !ab.subsetOf(aa) {
				return fired{SignalValue, confValueRole, change("works as", aa, ab)}, true
			}
		}
		e.miss("No contradiction: the values agree.")
		return fired{}, false
	}
	if va.subsetOf(b.sel(b.coreIdx|b.apposition())) || vb.subsetOf(a.sel(a.coreIdx|a.apposition())) {
		e.miss("No contradiction: the newer statement refines the older value.")
		return fired{}, false
	}
	if !a.scope().equal(b.scope()) || !sameTime(a, b) {
		e.miss("No contradiction: the values hold at different times (weekends, summer...).")
		return fired{}, false
	}
	if b.narrows(a) {
		e.miss("No contradiction: the newer value holds for some of it only.")
		return fired{}, false // "100 requests per minute per key" / "raised to 500 for enterprise keys"
	}
	conf, ok := slotConfidence(a, b, va, vb, e)
	if !ok {
		return fired{}, false
	}
	return fired{SignalValue, conf, change(label, va, vb)}, true
}

// narrows reports a "for" after the value that names whom it holds for,
// of which the older statement says nothing ("for enterprise keys", "for
// paid plans").
func (c *clause) narrows(a *clause) bool {
	if c.value().flagged(tNumber) == 0 {
		return false // a quantity's: "relocated to Denver for work" says why
	}
	for i := c.value().last() + 1; i > 0 && i+1 < c.end; i++ {
		if c.tok(i).word != wordFor {
			continue
		}
		if n := c.tok(i + 1); n.flags&(tNumber|fTime) != 0 || allWords[c.raw(i+1)] {
			return false // "for six years", "for all public endpoints"
		}
		who := c.sel(c.st.allIdx & span(i+1, c.end))
		return who.count() > 0 && who.shared(a.tail()) == 0
	}
	return false
}

// allWords say a "for" is for everyone.
var allWords = toSet(`all every everyone everybody everything each any`)

// slotConfidence is how sure a conflict of values va and vb of a's slot is.
func slotConfidence(a, b *clause, va, vb sel, e *explain) (float64, bool) {
	switch a.pred.val {
	case single:
		if va.shared(vb) > 0 {
			return confValueOverlap, true
		}
		return confValueDisjoint, true
	case usually:
		if b.now || b.strong {
			return confValueUsuallyNow, true
		}
		return confValueUsually, true
	case category:
		switch {
		case b.sel(b.objIdx&^b.valIdx).minus(a.tail()).count() > 0:
			// "prefers aisle seats" / "prefers window seats on long
			// flights": for some of it, perhaps.
			return confValueUsually, true
		case a.stem(va.last()) == b.stem(vb.last()):
			return confValueCategory, true
		case va.count() == 1 && vb.count() == 1 && a.objIdx == a.valIdx && b.objIdx == b.valIdx:
			return confValueCatBare, true
		}
		e.miss("No contradiction: preferences about different kinds of things.")
		return 0, false
	}
	e.miss(a.pred.multiReason)
	return 0, false
}

// agree reports values that are the same, or of which one is the other
// with more detail: "Toronto" and "downtown Toronto", version "20" and
// "20.11.1".
func agree(va, vb sel) bool {
	if va.subsetOf(vb) || vb.subsetOf(va) {
		return true
	}
	if va.count() != 1 || vb.count() != 1 {
		return false
	}
	x, y := va.st.raw(&va.st.toks[va.last()]), vb.st.raw(&vb.st.toks[vb.last()])
	for _, sep := range []string{".", "-"} {
		if strings.HasPrefix(x, y+sep) || strings.HasPrefix(y, x+sep) {
			return true // "20" and "20.11.1", "Berlin" and "Berlin-Kreuzberg"
		}
	}
	return typo(x, y)
}

// typo reports two words of at least six letters that differ by one
// letter added, dropped, replaced or two swapped ("Torronto", "Shopfy"): a
// misspelling, not another value.
func typo(x, y string) bool {
	if len(x) < 6 || len(y) < 6 || x[0] != y[0] || strings.ContainsAny(x+y, "0123456789") {
		return false
	}
	if len(x) > len(y) {
		x, y = y, x
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	switch {
	case len(y) == len(x)+1:
		return x[i:] == y[i+1:]
	case len(y) != len(x):
		return false
	case i+1 < len(x) && x[i] == y[i+1] && x[i+1] == y[i]:
		return x[i+2:] == y[i+2:]
	}
	return i == len(x) || x[i+1:] == y[i+1:]
}

// Kinds of value of a slot that holds a name or a place.
const (
	valueName   = iota // "Lisbon", "Stripe", "the hospital"
	valueKind          // "a rented flat", "a standing desk": what kind, not which
	valueNone          // a time or a means: "at night", "by train", "at home"
	valueColour        // "red", "navy": how it looks, not which one it is
)

// colours are the basic colour terms.
var colours = toSet(`red orange yellow green blue purple violet pink brown black white gray grey silver
	gold golden beige navy teal turquoise maroon cream tan`)

// valueKind tells a named value from a kind of thing and from no value at
// all, for the slots where it matters: "lives in a rented flat" says nothing
// of the city, "works at night" nothing of the employer; and, for a slot
// that is not a colour, a colour from a name ("the car is silver" says
// nothing of the model).
func (c *clause) valueKind() int {
	if lo := bits.TrailingZeros64(c.valIdx); c.lone(lo) && colours[c.raw(lo)] && !c.slotSel().has("color") {
		return valueColour
	}
	switch c.pred.slot {
	case slotResidence, slotEmployer, slotNickname:
	default:
		return valueName
	}
	v0 := bits.TrailingZeros64(c.valIdx)
	first := c.tok(v0)
	if w := c.raw(v0); first.flags&(fScope|fTime) != 0 || byMeans[w] || w == "home" {
		return valueNone
	}
	if v0 > c.start && (c.raw(v0-1) == "a" || c.raw(v0-1) == "an") {
		return valueKind
	}
	return valueName
}

// valuePrep is the preposition that introduces a noun slot's value, or ""
// when none does, it is the "to" of a change ("went up to $92k") or it
// says how near a number is ("is about $18k"): "is in
// the office" and "is on the desk" say different things of a printer, as
// "is on call" and "is the Commerce org's" do of a team.
func (c *clause) valuePrep() string {
	for i := bits.TrailingZeros64(c.valIdx) - 1; i >= c.start; i-- {
		t := c.tok(i)
		switch {
		case t.flags&fPrep != 0:
			switch w := c.raw(i); w {
			case "to", "about", "around", "over", "under":
				return "" // "went up to $92k", "is about $18k"
			default:
				return w
			}
		case t.flags&(fDet|fStop) == 0 || t.flags&(fCopula|fLight) != 0:
			return ""
		}
	}
	return ""
}

// partOf reports a value that is the head of an "of" ("is part of the
// Commerce org", "is one of three teams"): what its subject belongs to,
// not which one it is.
func (c *clause) partOf() bool {
	i := c.value().last() + 1
	return i > 0 && i < c.hi && c.raw(i) == "of"
}

// quantity: the statements are the same word for word but for one number
// that counts what follows it ("takes 10 mg of lisinopril" / "takes 20 mg
// of lisinopril", "has two cats" / "has one cat now"), or the version of a
// name ("uses React 17" / "uses React 18"). Any other number that ends the
// statement names rather than counts ("hobby number 2", "apartment 4B",
// "team 3"), and two names of a many-valued thing do not conflict.
func quantity(a, b *clause, e *explain) (fired, bool) {
	if a.past || b.past || b.addAdv || !a.subject().equal(b.subject()) || !sameTime(a, b) {
		return fired{}, false
	}
	// The words of both, in order (coreIdx), pairwise.
	ma, mb := a.coreIdx, b.coreIdx
	if bits.OnesCount64(ma) != bits.OnesCount64(mb) {
		return fired{}, false
	}
	diffA, diffB := -1, -1
	for ; ma != 0; ma, mb = ma&(ma-1), mb&(mb-1) {
		i, j := bits.TrailingZeros64(ma), bits.TrailingZeros64(mb)
		ta, tb := a.tok(i), b.tok(j)
		if a.stem(i) == b.stem(j) {
			continue
		}
		if diffA >= 0 || ta.flags&tNumber == 0 || tb.flags&tNumber == 0 || agree(a.sel(1<<i), b.sel(1<<j)) {
			return fired{}, false
		}
		diffA, diffB = i, j
	}
	if diffA < 0 || !a.counts(diffA) || !b.counts(diffB) {
		return fired{}, false
	}
	return fired{SignalValue, confValueDisjoint, change("quantity", a.sel(1<<diffA), b.sel(1<<diffB))}, true
}

// counts reports whether the number at token i, one of the clause's words
// (coreIdx), counts what follows it, is the version of the capitalised
// name before it ("React 18") or is a decimal or a version ("pinned to
// 1.74"); a whole number that ends a statement otherwise names something
// ("team 3").
func (c *clause) counts(i int) bool {
	before, after := c.coreIdx&(1<<i-1), c.coreIdx>>(i+1)
	return after != 0 || before != 0 && c.tok(63-bits.LeadingZeros64(before)).flags&tCap != 0 || strings.Contains(c.raw(i), ".")
}

// temporal: the newer clause says something changed (switched, moved,
// migrated, now, instead) and the change lands on what the older one says.
// A temporal word on an addition ("recently started reading poetry") is
// not a change.
func temporal(a, b *clause, e *explain) (fired, bool) {
	if f, ok := undoneOrResolved(a, b); ok {
		return f, true
	}
	if b.replaceAt < 0 && !b.strong && !b.now {
		return fired{}, false
	}
	if a.pred != nil && originSlots[a.pred.slot] && (b.pred == nil || b.pred.slot != a.pred.slot) {
		e.miss("No contradiction: where something began does not change when it moves or changes later.")
		return fired{}, false // "born in Chennai" / "moved to Lyon"
	}
	// Two plans or rules change as facts do ("should use npm" / "should
	// use pnpm now"); a plan does not change a fact.
	if a.irreal != b.irreal || a.negated || b.negated || a.past {
		return fired{}, false
	}
	if b.addAdv || b.addVerb && !b.strong && b.replaceAt < 0 {
		e.miss("No contradiction: the newer statement adds something rather than replacing it.")
		return fired{}, false
	}
	if !a.st.created.IsZero() && !b.st.created.IsZero() && b.st.created.Before(a.st.created) {
		e.miss("No contradiction: the statement announcing a change is the older one.")
		return fired{}, false
	}
	marker := changeMarker(b)
	// A change of a thing it names says nothing of what another thing is:
	// "rewrote the ingestion service from Python to Go" leaves "the primary
	// language is Python" and "upgraded the codebase to Python 3.12".
	if thing := b.changed(); b.replaceAt >= 0 && thing.count() > 0 && (a.copular && a.subject().count() > 0 || a.changed().count() > 0) &&
		thing.shared(a.tail()) == 0 {
		if f := b.left(); f.count() > 0 && f.subsetOf(a.core()) {
			// It names the older value as what it leaves: whether "ISPs"
			// is "home internet" is a question for a reviewer.
			return fired{SignalTemporal, confTemporalBare, change(marker, f, b.target())}, true
		}
		e.miss("No contradiction: the change is to another thing than the one the older statement is about.")
		return fired{}, false
	}
	// "switched from X to Y", "Y instead of X", "replaced X with Y" where X
	// is the older value; in "vim -> neovim" the older value is all of the
	// note's key ("python version -> 3.12" is no change from "version").
	if f := b.from(); f.count() > 0 && (f.subsetOf(a.core()) || f.shared(a.core()) > 0 && f.subsetOf(a.st.all())) && !(b.tgtIdx != 0 && b.target().subsetOf(a.target())) && b.asSel().subsetOf(a.tail()) && (b.noteKey == 0 || b.tok(b.noteKey).flags&tArrow == 0 || a.value().count() > 0 && a.value().subsetOf(b.sel(b.coreIdx&span(b.start, b.noteKey)))) {
		t := b.target()
		if t.count() == 0 {
			t = b.sel(b.objIdx &^ b.fromIdx) // "reads on a Kobo instead"
		}
		return fired{SignalTemporal, confTemporalFrom, change(marker, f, t)}, true
	}
	if b.replaces() {
		if v := b.value(); v.count() > 0 && v.subsetOf(a.core()) {
			return fired{SignalTemporal, confTemporalFrom, change(marker, v, b.target())}, true
		}
	}
	// A change that names what it leaves changes that, and nothing else:
	// "switched from Spotify to Apple Music" says nothing of "subscribes to
	// Netflix", "replaced the router" nothing of "uses Tailscale".
	if old := b.left(); old.count() > 0 && old.shared(a.tail()) == 0 {
		e.miss("No contradiction: the newer statement names what it changed from, and the older statement does not mention it.")
		return fired{}, false
	}
	// A change applied to a thing the older statement names as what it
	// has or is ("has a beagle named Toby" / "switched Toby to a grain-free
	// food"; "uses Postgres" / "moved Postgres to RDS") changes something of
	// that thing: the thing, and the older statement, remain.
	if thing := b.sel(b.valIdx &^ b.tgtIdx &^ b.fromIdx); b.replaceAt >= 0 && a.replaceAt < 0 && thing.count() > 0 && thing.named() &&
		(thing.equal(a.value()) || thing.equal(a.object()) || a.introduces(thing)) {
		e.miss("No contradiction: the change is applied to the thing the older statement names, which remains.")
		return fired{}, false
	}
	return inferredChange(a, b, marker, e)
}

// changeMarker is the word of b that says a change happened: its
// replacing verb, "changed" for an arrow, "instead", else "now".
func changeMarker(b *clause) string {
	switch {
	case b.replaceAt >= 0:
		return b.raw(b.replaceAt)
	case b.arrow:
		return "changed"
	case b.strong:
		return "instead"
	}
	return "now"
}

// inferredChange decides a change of b whose older value it does not
// name, so the older value is inferred from a.
func inferredChange(a, b *clause, marker string, e *explain) (fired, bool) {
	// The older value is inferred, not named: the change must lead
	// to a thing of the older value's kind where both kinds are known
	// ("written in Go" / "migrated the backend to PostgreSQL" is a
	// database, not a language).
	old := a.value()
	if old.count() == 0 {
		old = a.object() // "is written in Go": what it is written in
	}
	if otherKind(old, b.target()) || b.replaceAt < 0 && otherKind(a.object(), b.object()) || a.replaceAt >= 0 && otherKind(a.target(), b.target()) {
		e.miss("No contradiction: the change leads to a thing of another kind (a language and a database, say).")
		return fired{}, false
	}
	if t := b.target(); moves(b) && a.pred != nil && a.pred.slot == slotResidence && old.flagged(tCap) > 0 && b.indefinite(t) &&
		b.sel(span(t.last(), b.end)).flagged(tCap) == 0 {
		e.miss("No contradiction: the move says what kind of place, not where; the older place may still hold.")
		return fired{}, false // "lives in Ohio" / "moved into an assisted living facility", but "... a flat in Leeds", "..., Sunrise Manor"
	}
	if moves(b) && a.copular && a.classifies(old) {
		e.miss("No contradiction: a move changes where something is, and the older statement says what it is.")
		return fired{}, false // "the car is a Volvo" / "moved the car to the garage"
	}
	t, v := b.target(), b.versionWords()
	if more := t.minus(old).idx; old.count() > 0 && old.subsetOf(t) && more != 0 && more&^(b.flagged(tNumber)|v) == 0 {
		e.miss("No contradiction: the change leads to a version of what the older statement says.")
		return fired{}, false // "writes Python" / "upgraded to Python 3.12"
	}
	if t.idx&v != 0 && t.idx&^(b.flagged(tNumber)|v) == 0 && a.tail().flagged(tNumber) == 0 {
		e.miss("No contradiction: the change is to a version the older statement does not state.")
		return fired{}, false // "uses PostgreSQL" / "upgraded Postgres to version 16"
	}
	if f, ok := changedSlot(a, b, marker); ok {
		return f, true
	}
	if f, ok := sameKind(a, b, marker); ok {
		return f, true
	}
	if !a.subject().equal(b.subject()) {
		e.miss("No contradiction: the change is about a different subject.")
		return fired{}, false
	}
	if b.replaceAt < 0 {
		return nowChange(a, b, marker)
	}
	return changeVerb(a, b, marker, e)
}

// otherThing reports a change that names the thing it changes, whose
// head the older clause a does not mention, and whose other words are
// whose thing it is: a possessor ("switched Zahra's grooming to a mobile
// van" against "walks Zahra"), or the value of a's many-valued predicate
// ("switched oud teacher to Nadia" against "plays oud"). The words it
// shares with a say whose thing changed, not which. (A word a says of its
// value's use is the thing's: "switched the internet provider to Sonic"
// against "uses Comcast for internet".)
func (c *clause) otherThing(a *clause) bool {
	thing := c.changed()
	thing.idx &^= c.flagged(tNumber) | c.models()
	h := thing.last()
	if h < 0 || a.tail().has(c.stem(h)) {
		return false
	}
	shared := thing.minus(thing.minus(a.tail()))
	for t := range shared.words {
		if strings.HasSuffix(c.st.raw(t), "'s") {
			return true
		}
	}
	return shared.count() > 0 && a.pred != nil && a.pred.val == multi && shared.subsetOf(a.value())
}

// undoneOrResolved: a change the older made is undone (reverted), or a
// plan the older made came out (resolved).
func undoneOrResolved(a, b *clause) (fired, bool) {
	if f, ok := reverted(a, b); ok {
		return f, true
	}
	if f, ok := resumed(a, b); ok {
		return f, true
	}
	return resolved(a, b)
}

// changed is the thing a change names as changed ("the ingestion service"
// of "rewrote the ingestion service from Python to Go"), without what it
// leaves and what it leads to; empty when it names none or is no change.
func (c *clause) changed() sel {
	if c.replaceAt < 0 {
		return sel{st: c.st}
	}
	return c.sel(c.valIdx &^ c.tgtIdx &^ c.fromIdx &^ c.left().idx)
}

// left is what a change names as left behind: "from X", "instead of X",
// "X was replaced", "replaced X with Y"; empty when it names none, and for
// a note's arrow ("vim -> neovim"), whose older value is all of its key.
func (c *clause) left() sel {
	if c.arrow {
		return sel{st: c.st}
	}
	if c.fromIdx != 0 {
		return c.from()
	}
	if c.replaces() {
		return c.sel(c.valIdx &^ c.tgtIdx)
	}
	return sel{st: c.st}
}

// ended is what the clause says stopped ("stopped wearing the Apple
// Watch": its object; "shared that she stopped using Duolingo": the words
// after the stopping verb), what an "instead" in the clause after it
// replaces; 0 when it stops nothing.
func (c *clause) ended() uint64 {
	if c.irreal {
		return 0
	}
	if c.negated {
		return c.objIdx
	}
	for k := c.start; k < c.hi; k++ {
		if c.tok(k).flags&fCease != 0 {
			return c.coreIdx & span(k+1, c.end)
		}
	}
	return 0
}

// replaces reports an active change verb whose object is what it leaves:
// "replaced X with Y", "swapped X for Y", "converted X to Y".
func (c *clause) replaces() bool {
	if c.replaceAt < 0 || c.passive {
		return false
	}
	switch c.stem(c.replaceAt) {
	case "replace", "swap", "trade", "convert":
		return true
	}
	return false
}

// ended: the newer says that someone the older speaks of died, or that a
// relationship with them ended ("Has a cat named Miso" / "Miso died last
// week", "Is dating Lena" / "Broke up with Lena"): what the older says of
// them holds no more.
func ended(a, b *clause) (fired, bool) {
	gone, breakup := b.ends()
	if gone.count() == 0 || a.past || a.negated || a.irreal || b.irreal || b.negated || !gone.subsetOf(a.tail()) {
		return fired{}, false
	}
	if g, _ := a.ends(); g.count() > 0 {
		return fired{}, false // both tell of the end
	}
	if breakup && !a.together(gone) {
		return fired{}, false // "Her manager is Priya" / "Broke up with Priya": another Priya, or still her manager
	}
	for i := range a.st.toks {
		if a.st.toks[i].flags&tCap != 0 && gone.has(a.st.stem(&a.st.toks[i])) && !a.st.lone(i) {
			return fired{}, false // "Max connections", "HBO Max" against "Max passed away"
		}
	}
	return fired{SignalNegation, confNegationSubset, "newer ends: " + gone.text()}, true
}

// lone reports a capitalised word that stands alone as a name: not inside
// a longer name ("HBO Max") nor before the noun it modifies ("Max
// connections"), but a possessive ("Biscuit's vet").
func (st *Statement) lone(i int) bool {
	if p := &st.toks[max(i-1, 0)]; i > 0 && p.flags&tCap != 0 && p.content() && st.toks[i].flags&tBreak == 0 &&
		!(p.flags&lexiconFlags != 0 && (i == 1 || p.flags&tFull != 0)) { // "Walks Kinako": a verb that starts the sentence
		return false
	}
	if i+1 < len(st.toks) && !strings.HasSuffix(st.raw(&st.toks[i]), "'s") { // "Biscuit's vet" is his
		n := &st.toks[i+1]
		if n.flags&tBreak == 0 && n.content() && n.flags&(tCap|fVerb|tNumber|fSingleMod|fScope) == 0 {
			return false
		}
	}
	return true
}

// togetherWords say that two are a couple.
var togetherWords = toSet(`dating date dates married marry engaged together partner partners boyfriend girlfriend
	wife husband fiance fiancé fiancee fiancée spouse seeing relationship`)

// together reports a clause that says the one the memory is about is in a
// relationship with who ("is dating Lena", "has been married to Alex",
// "Sam is her boyfriend"; not "Dana and Sam are together").
func (c *clause) together(who sel) bool {
	for t := range c.subject().minus(who).words {
		if !togetherWords[c.st.raw(t)] {
			return false
		}
	}
	for i := c.start; i < c.end; i++ {
		if togetherWords[c.raw(i)] && c.subjIdx&(1<<i) == 0 {
			return true // what it says of them: "her husband Daniel is vegetarian" is of his diet
		}
	}
	return false
}

// kinWords name someone by their relation: who may die.
var kinWords = toSet(`mom mum mother dad father grandma grandmother grandpa grandfather granny nana uncle aunt
	brother sister son daughter husband wife partner cousin niece nephew`)

// ends is who the clause says died, or that a relationship of the one the
// memory is about ended with ("separated", "divorced", "broke up", "split
// up"): the named or kin subject of "died" or
// "passed away" ("Miso", "her grandmother"; not "one of my cats"), or for
// a breakup of theirs ("broke up with Lena", "Alex and the user
// separated"; not "her sister is divorced") the names in the statement,
// without one the words after the verb ("divorced her husband").
func (c *clause) ends() (who sel, breakup bool) {
	none := sel{st: c.st}
	for i := c.start; i < c.hi; i++ {
		w := c.raw(i)
		switch w { // BlockKeys asks of every clause: a switch, not a map
		case "died", "dies", "passed", "separated", "divorced", "broke", "split":
		default:
			continue
		}
		next := ""
		if i+1 < c.hi {
			next = c.raw(i + 1)
		}
		keep := c.contentMask() &^ c.flagged(fSelf|fTime|fWhen|tNumber)
		switch {
		case w == "died" || w == "dies" || w == "passed" && next == "away":
			who := c.sel(keep & span(c.start, i))
			named := false
			for t := range who.words {
				if r := c.st.raw(t); r == "one" || r == "of" || r != c.st.stem(t) && strings.HasSuffix(r, "s") && t.flags&tCap == 0 {
					return none, false // "one of my cats", "the chickens"
				}
				named = named || t.flags&tCap != 0 || kinWords[c.st.raw(t)]
			}
			if !named {
				return none, false
			}
			return who, false
		case w == "separated" || w == "divorced" || (w == "broke" || w == "split") && next == "up":
			// Theirs: no subject but the one the memory is about.
			for k := c.start; k < i; k++ {
				if t := c.tok(k); t.content() && t.flags&tCap == 0 && t.flags&fSelf == 0 {
					return none, false // "her sister is divorced"
				}
			}
			var names uint64
			for k := range c.st.toks {
				if t := &c.st.toks[k]; k != i && t.flags&tCap != 0 && t.content() && t.flags&(fSelf|fTime|fVerb) == 0 {
					names |= 1 << k
				}
			}
			if names != 0 {
				return c.sel(names), true
			}
			return c.sel(keep & span(i+1, c.hi)), true
		}
	}
	return none, false
}

// reverted: the older statement changed something from X to Y and the
// newer says X of it ("Moved CI from Jenkins to GitHub Actions" / "CI runs
// on Jenkins", "... / "Moved CI back to Jenkins"): the change was undone,
// or the newer knows better. When the change names no thing ("switched from Duolingo
// to italki"), which of X's slots the newer speaks of is a guess.
func reverted(a, b *clause) (fired, bool) {
	from, to := a.from(), a.target()
	if a.replaceAt < 0 || a.arrow || a.passive || a.addAdv || from.count() == 0 || to.count() == 0 || a.irreal || a.negated ||
		b.irreal || b.negated || b.past || b.addAdv || b.addVerb {
		return fired{}, false
	}
	// "The docs moved back to GitBook" is a change back; a change to
	// anything else is temporal's.
	if t := b.target(); b.replaceAt >= 0 && !(t.subsetOf(from) && from.subsetOf(t)) {
		return fired{}, false
	}
	if b.replaceAt < 0 && !from.subsetOf(b.object()) || to.shared(b.tail()) > 0 {
		return fired{}, false
	}
	conf := confTemporalBare
	if thing := a.changed(); thing.count() > 0 {
		said := b.tail()
		said.idx &^= compoundsApart(a, b, thing, said) // "the ingestion service" is not "the billing service"
		if thing.shared(said) == 0 {
			return fired{}, false
		}
		conf = confTemporalContext
	}
	return fired{SignalTemporal, conf, change("back", to, from)}, true
}

// moves reports a change verb that moves something ("moved", "relocated").
func moves(c *clause) bool {
	if c.replaceAt < 0 {
		return false
	}
	switch c.stem(c.replaceAt) {
	case "move", "relocate":
		return true
	}
	return false
}

// introduces reports that c gives the name of thing, a selection of
// another statement: "has a beagle named Toby", "a cat called Pixel".
func (c *clause) introduces(thing sel) bool {
	first := &thing.st.toks[bits.TrailingZeros64(thing.idx)]
	for i := c.start + 1; i < c.hi; i++ {
		if c.st.stem(&c.st.toks[i]) == thing.st.stem(first) {
			switch c.raw(i - 1) {
			case "named", "called":
				return true
			}
		}
	}
	return false
}

// indefinite reports whether an indefinite article comes right before v.
func (c *clause) indefinite(v sel) bool {
	i := bits.TrailingZeros64(v.idx) - 1
	if v.idx == 0 || i < c.start {
		return false
	}
	w := c.raw(i)
	return w == "a" || w == "an"
}

// classifies reports whether v, a value of the copular clause c, says
// only what kind of thing its subject is: an indefinite article comes
// right before it and no preposition after ("is a Volvo", "is an old
// labrador"), where "is in the office", "is on Thursday", "is downtown"
// and "is an intern at Pixar" say where or when too.
func (c *clause) classifies(v sel) bool {
	if !c.indefinite(v) {
		return false
	}
	for k := bits.TrailingZeros64(v.idx); k < c.hi; k++ {
		if c.tok(k).flags&fPrep != 0 {
			return false // "is an intern at Pixar" also says where
		}
	}
	return true
}

// Kinds of technical things, as bits: a name may be of more than one.
const (
	techLanguage = 1 << iota
	techDatabase
	techCloud
	techOS
	techEditor
	techFrontend
	techRuntime
	techAPIStyle
	techCI
)

// techKinds names technical things by kind, lowercase, one word each: a
// change from one of them to a thing of another kind changes another
// attribute. Words of everyday English among them ("go", "rust", "swift")
// count only as the last word of a value.
var techKinds = func() map[string]uint16 {
	m := map[string]uint16{}
	for kind, words := range map[uint16]string{
		techLanguage: `go golang rust python java javascript typescript ruby php kotlin swift scala elixir erlang
			haskell clojure perl lua dart julia zig ocaml fortran cobol csharp f# c# c++ objective-c groovy`,
		techDatabase: `postgresql postgres mysql mariadb mongodb mongo redis sqlite cassandra dynamodb cockroachdb
			elasticsearch opensearch clickhouse snowflake bigquery oracle couchdb neo4j firestore timescaledb
			influxdb memcached valkey scylladb`,
		techCloud:    `aws gcp azure heroku vercel netlify digitalocean linode cloudflare hetzner`,
		techOS:       `linux windows macos ubuntu debian fedora centos freebsd ios android`,
		techEditor:   `vim neovim nvim emacs vscode sublime intellij pycharm goland webstorm xcode`,
		techFrontend: `react vue angular svelte ember`,
		techRuntime:  `node node.js nodejs deno bun jvm graalvm`,
		techAPIStyle: `rest graphql grpc soap trpc json-rpc`,
		techCI:       `jenkins circleci travis buildkite teamcity bamboo drone`,
	} {
		for _, w := range strings.Fields(words) {
			m[w] |= kind
		}
	}
	return m
}()

// otherKind reports whether the last words of a and b name technical
// things of known, different kinds.
func otherKind(a, b sel) bool {
	ka, kb := a.techKind(), b.techKind()
	return ka != 0 && kb != 0 && ka&kb == 0
}

// techKind is the kinds the last word of s names, numbers aside (0: none
// the table knows).
func (s sel) techKind() uint16 {
	s.idx &^= s.st.flagged(tNumber) // "Node.js 20" is Node.js
	i := s.last()
	if i < 0 {
		return 0
	}
	return techKinds[s.st.raw(&s.st.toks[i])]
}

// sameKind: the one the memory is about changes to a value whose head is a
// word of the older value ("She upgraded to an iPhone 15" / "Her phone is
// an iPhone 12"), said of no one named, and all else the change names is
// the older's subject ("changed doctors" is not about the landlord).
func sameKind(a, b *clause, marker string) (fired, bool) {
	t := b.target()
	h := b.sel(b.tgtIdx &^ b.flagged(tNumber) &^ b.models()).last() // its head: "iphone" of "iphone 15 pro"
	if b.replaceAt < 0 || b.subjIdx != 0 || b.asIdx != 0 || h < 0 || !a.value().has(b.stem(h)) || t.subsetOf(a.core()) ||
		a.subject().flagged(tCap) > 0 || !b.sel(b.valIdx&^b.tgtIdx).subsetOf(a.subject()) {
		return fired{}, false
	}
	return fired{SignalTemporal, confTemporalContext, change(marker, a.value(), t)}, true
}

// compoundsApart is the bitmap of the words of pb that a's words share
// only as the heads of other compounds: the same head after another
// modifier ("a checking account" / "a savings account"; not a head one has
// one of at a time, as a team), or a word of a
// name in the newer against a common word in the older ("moved to Google
// Cloud" / "the cloud bill"; but "moved the photos to iCloud" / "stores
// photos in Google Photos").
func compoundsApart(a, b *clause, pa, pb sel) uint64 {
	var apart uint64
	for m := pb.idx; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		for n := pa.idx; n != 0; n &= n - 1 {
			j := bits.TrailingZeros64(n)
			if a.stem(j) != b.stem(k) {
				continue
			}
			pk, pj := b.modifier(k, -1), a.modifier(j, -1)
			one := b.tok(k).flags&fAttr != 0 // one at a time: "the Maps team" / "the payments team" is a change
			if pk != "" && pj != "" && pk != pj && !one || b.namePart(k) && !a.namePart(j) {
				apart |= 1 << k
			}
		}
	}
	return apart
}

// namePart reports a capitalised word after another in a name ("Cloud" of
// "Google Cloud"), a capitalised verb that starts the clause aside ("Sees
// Dr. Kim").
func (c *clause) namePart(i int) bool {
	if i <= c.start {
		return false
	}
	p := c.tok(i - 1)
	return c.tok(i).flags&tCap != 0 && p.flags&tCap != 0 && p.content() && !(i-1 == c.start && p.flags&fVerb != 0)
}

// modifier is the stem of the content word right before (dir -1) or after
// (+1) word i in its noun phrase ("eastern" of "Eastern time"), or "": not
// the clause's verb, a number or a word that only says it is the one
// ("main"), nor any word of a name ("Google Cloud").
func (c *clause) modifier(i, dir int) string {
	j := i + dir
	if j < c.start || j >= c.hi {
		return ""
	}
	if t := c.tok(j); !t.content() || j == c.verb || j == c.replaceAt || t.flags&(tNumber|fSingleMod) != 0 || c.tok(i).flags&tCap != 0 {
		return ""
	}
	return c.stem(j)
}

// versionWords is the bitmap of the clause's words that say a version is
// next ("upgraded Postgres to version 16").
func (c *clause) versionWords() uint64 {
	var m uint64
	for i := c.start; i < c.hi; i++ {
		if w := c.raw(i); w == "version" || w == "v" || w == "release" {
			m |= 1 << i
		}
	}
	return m
}

// modelWords end a product's name to say which model it is ("iPhone 15
// Pro", "Galaxy S24 Ultra", "MacBook Air"): they name no kind of thing.
var modelWords = map[string]bool{"pro": true, "max": true, "plus": true, "mini": true, "ultra": true, "air": true, "lite": true, "se": true, "xl": true}

// models is the bitmap of the clause's model words that follow a name or a
// number.
func (c *clause) models() uint64 {
	var m uint64
	for i := c.start + 1; i < c.hi; i++ {
		if modelWords[c.raw(i)] && c.tok(i-1).flags&(tCap|tNumber) != 0 && c.tok(i-1).content() {
			m |= 1 << i
		}
	}
	return m
}

// changedSlot: a change verb whose object is what the older clause is
// about ("switched my main email to Fastmail" against "My main email is
// Hotmail", "moved the printer to the hallway" against "The printer is in
// the office").
func changedSlot(a, b *clause, marker string) (fired, bool) {
	changed := b.sel(b.valIdx &^ b.tgtIdx)
	t := b.target()
	if b.replaceAt >= 0 && changed.count() == 0 && b.thingChanged(a) {
		// "Search switched to Typesense" / "Docs search uses Lunr": the
		// thing is the subject of its change.
		return fired{SignalTemporal, confTemporalVerb, change(marker, a.value(), t)}, true
	}
	if b.replaceAt < 0 || changed.count() == 0 || t.count() == 0 || !changed.subsetOf(a.subject()) || t.subsetOf(a.core()) ||
		!b.subject().subsetOf(a.subject()) { // "the mobile team moved their CI" is not ours
		return fired{}, false
	}
	conf := confTemporalContext
	if changed.sharedFlag(a.core(), fSingleMod|fAttr) {
		conf = confTemporalSlot
	}
	return fired{SignalTemporal, conf, change(marker, a.value(), t)}, true
}

// nowChange: "now" or "instead" with the older clause's verb and another
// object ("uses Slack" / "now uses Discord").
func nowChange(a, b *clause, marker string) (fired, bool) {
	copulas := a.copular && b.copular // "is the treasurer" / "is the secretary now"
	if !copulas && (a.verb < 0 || b.verb < 0 || !a.tok(a.verb).content() || a.stem(a.verb) != b.stem(b.verb)) {
		return fired{}, false
	}
	oa, ob := a.object(), b.object()
	same := a.value().equal(b.value())
	if a.holder && b.holder {
		same = a.slotSel().equal(b.slotSel()) // "is the treasurer of the club" / "is the secretary of the club now"
	}
	if oa.subsetOf(ob) || ob.subsetOf(oa) || copulas && same || b.narrows(a) {
		return fired{}, false
	}
	conf := confTemporalWeak
	if b.strong || oa.shared(ob) > 0 || a.verbPrep() != "" && a.verbPrep() == b.verbPrep() && !a.oneValue() {
		conf = confTemporalVerb // "plays for the Tigers" / "plays for the Hawks now"; slots are value's
	}
	return fired{SignalTemporal, conf, change(marker, oa, ob)}, true
}

// verbPrep is the preposition right after the main verb ("shipped to"), or "".
func (c *clause) verbPrep() string {
	if c.verb >= 0 && c.verb+1 < c.hi && c.tok(c.verb+1).flags&fPrep != 0 {
		return c.raw(c.verb + 1)
	}
	return ""
}

// changeVerb: a change verb whose new value the older clause does not
// already hold. The context it shares with the older clause says which slot
// changed: a named one-value slot ("as the main editor", "standup") or at
// least a common word.
func changeVerb(a, b *clause, marker string, e *explain) (fired, bool) {
	if b.slotIdx != 0 && !a.slotSel().equal(b.slotSel()) {
		e.miss("No contradiction: the change is to another slot.")
		return fired{}, false
	}
	t := b.target()
	if t.count() == 0 || t.subsetOf(a.core()) {
		e.miss("No contradiction: the change leads to what the older statement already says.")
		return fired{}, false
	}
	if v := a.value(); (a.oneValue() || b.anew) && v.count() > 0 && v.subsetOf(b.sel(b.coreIdx|b.apposition()).minus(t)) {
		e.miss("No contradiction: the older value still holds after the change.")
		return fired{}, false // "works at Stripe" / "moved to a new desk at Stripe"; "is building an app" / "rewrote the app in Go"
	}
	// The context is what they share besides the subject they must share
	// anyway ("the service was ported to Go" says nothing of what it
	// calls), unless the older says where or what the subject is ("the
	// office is in Midtown": it relocated; "Priya works in marketing").
	pa, pb := a.core(), b.core()
	if !a.copular && !a.passive && !a.oneValue() || b.anew && (!a.copular || !a.oneValue()) {
		pb = pb.minus(b.subject()) // a thing made anew keeps its slots ("deployed to Fly.io")
	}
	// A modifier of a state pair says how things are, not which ("collects
	// new coins" / "moved to a new desk"); a person's role ("her parents'
	// place") says which.
	for m := pb.idx; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		if t := b.tok(k); t.ant != 0 && t.flags&tCap == 0 && pb.idx&(1<<(k+1)) != 0 && !defaultLexicon().role(t) {
			pb.idx &^= 1 << k
		}
	}
	pb.idx &^= b.models() // "an iPhone 15 Pro" shares nothing with "a MacBook Pro"
	pb.idx &^= compoundsApart(a, b, pa, pb)
	pb.idx &^= t.owners() // "moved into Marek's flat" says nothing against "engaged to Marek"
	conf := confTemporalBare
	switch {
	case b.otherThing(a):
		// "switched Zahra's grooming to a van" / "walks Zahra": what it
		// changes is the grooming, which the older does not mention.
	case pb.sharedFlag(pa, fSingleMod|fAttr):
		conf = confTemporalSlot
	case pb.shared(pa) > 0:
		conf = confTemporalContext
	}
	if moves(b) && b.sel(b.valIdx&^b.tgtIdx&^b.fromIdx).count() == 0 && !a.saysWhere() {
		// Someone moved: where they are changed, and the older says
		// something else of them ("reports to Yuki", "is on the platform
		// team"). Whether that went with the move is a reviewer's guess.
		conf = confTemporalBare
	}
	return fired{SignalTemporal, conf, change(marker, a.value(), t)}, true
}

// placeSlots are slots that say where someone or something is (a blog is
// hosted on Medium): a move changes them.
var placeSlots = map[string]bool{slotResidence: true, slotEmployer: true, "stay": true, "workplace": true, "school": true,
	"host": true, "deploy": true, "platform": true, "store": true}

// placeVerbs are the verbs of the place slots' predicates ("live",
// "reside", "work"), from the predicate table.
var placeVerbs = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range onePredicates {
		if placeSlots[p.slot] {
			for _, k := range strings.Split(p.keys, "|") {
				verb, _, _ := strings.Cut(k, " ")
				m[verb] = true
			}
		}
	}
	return m
})

// saysWhere reports a clause that says where its subject is: a predicate
// of a place slot, or a place after a locative preposition ("is in
// Midtown", "works at the Lisbon office"), not a predicate of another slot
// ("reports to Yuki") nor a membership ("is on the platform team").
func (c *clause) saysWhere() bool {
	if c.pred != nil {
		return placeSlots[c.pred.slot]
	}
	if c.verb >= 0 && placeVerbs()[c.stem(c.verb)] {
		return true // "lives with his parents"
	}
	for i := c.start; i+1 < c.hi; i++ {
		switch c.raw(i) {
		case "in", "at", "near":
			if c.coreIdx&(1<<(i+1)) != 0 || c.raw(i+1) == "the" && i+2 < c.hi {
				return true
			}
		}
	}
	return false
}

// owners is the bitmap of the possessives of s that say whose a thing
// after them is ("Marek's" of "Marek's flat").
func (s sel) owners() uint64 {
	var m uint64
	for k := range s.st.toks {
		if s.idx&(1<<k) != 0 && strings.HasSuffix(s.st.raw(&s.st.toks[k]), "'s") && s.idx&(1<<(k+1)) != 0 {
			m |= 1 << k
		}
	}
	return m
}

// perPhrase is the bitmap of the words that say what a rate is per ("per
// on-call week", "each way").
func (c *clause) perPhrase() uint64 {
	var m uint64
	for i := c.start; i < c.hi; i++ {
		if w := c.raw(i); w == "per" || w == "each" {
			for k := i + 1; k < c.hi && c.tok(k).flags&(fPrep|fConj|tBreak) == 0; k++ {
				m |= 1 << k
			}
		}
	}
	return m
}

// apposition is the bitmap of the words of the clause's fragments that
// name what its value is in, not where it stands from: "Lisbon" of "moved
// into a flat in Arroios, Lisbon", not "Oslo" of "moved to Bergen, three
// hours from Oslo".
func (c *clause) apposition() uint64 {
	var m uint64
	for k := c.hi; k < c.end; k++ {
		t := c.tok(k)
		if t.flags&(fPrep|fSub|tNumber) != 0 || t.flags&fVerb != 0 && t.content() {
			return 0
		}
		if t.content() {
			m |= 1 << k
		}
	}
	return m
}

// thingChanged reports an intransitive change of a thing the older clause
// a is about ("Search switched to Typesense" / "Docs search uses Lunr"):
// the change's subject is the head of a's subject, a thing, not someone
// (a person moves elsewhere, not their things), and both a's value and
// the change's target are names, so that the change is of what a names.
func (c *clause) thingChanged(a *clause) bool {
	s, t := c.subject(), c.target()
	if s.count() == 0 || t.count() == 0 || c.passive || t.subsetOf(a.core()) || !s.subsetOf(a.subject()) ||
		!a.copular && !(a.verb >= 0 && a.stem(a.verb) == "use") || // what it is or uses, not what it runs
		c.raw(s.last()) != a.raw(a.subject().last()) { // "search" is "search", not "hosting" "host"
		return false
	}
	for u := range s.words {
		if kinWords[c.st.raw(u)] || a.capitalised(c.st.stem(u)) {
			return false // "Emma moved to ..." / "Daughter Emma ...": someone
		}
	}
	return named(a.st, &a.st.toks[max(a.value().last(), 0)]) && a.value().count() > 0 && named(c.st, &c.st.toks[t.last()])
}

// capitalised reports a word of the clause written with a capital where no
// sentence starts: a name.
func (c *clause) capitalised(stem string) bool {
	for i := c.start; i < c.end; i++ {
		if t := c.tok(i); t.flags&tCap != 0 && i > 0 && t.flags&tFull == 0 && c.stem(i) == stem {
			return true
		}
	}
	return false
}

// indefinite0 reports an object that is anyone or anything: "doesn't
// manage anyone (directly)", "no longer owns anything".
func (c *clause) indefinite0() bool {
	for i := c.verb + 1; i < c.hi && c.tok(i).flags&fPrep == 0; i++ {
		switch c.raw(i) {
		case "anyone", "anybody", "anything", "anymore":
			return c.raw(i) != "anymore"
		}
	}
	return false
}
