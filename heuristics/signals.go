package heuristics

import "github.com/supersessiond/supersessiond/antonyms"

// The signals below have blocking keys in block.go, built from their
// necessary conditions: a change to what a signal requires must change its
// keys too (block_test.go and sweep_test.go fail when they disagree).

// Signal names: fixed strings, recorded in audit metadata.
const (
	SignalNegation = "negation_polarity"
	SignalAntonym  = "antonym"
	SignalValue    = "value_conflict"
	SignalTemporal = "temporal_supersession"
)

// Signal kinds, in evaluation order.
const (
	sigNegation uint8 = iota
	sigAntonym
	sigValue
	sigTemporal
)

func signalName(k uint8) string {
	switch k {
	case sigNegation:
		return SignalNegation
	case sigAntonym:
		return SignalAntonym
	case sigValue:
		return SignalValue
	}
	return SignalTemporal
}

// Calibrated confidences. The engine applies supersessionMinConfidence
// (0.7) and supersessionReviewConfidence (0.5): a contradiction the
// heuristics are sure of scores at least 0.75, a plausible change they
// cannot pin to a slot lands in [0.5, 0.7) for human review, and what they
// consider compatible fires no signal at all.
const (
	confNegationExact   = 0.9  // "drinks coffee" / "doesn't drink coffee"
	confNegationSubset  = 0.8  // "drinks coffee every morning" / "doesn't drink coffee"
	confAntonymExact    = 0.85 // same words but one antonym
	confAntonymPartial  = 0.6  // one side says more besides the antonym
	confValueDisjoint   = 0.9  // single-valued slot, unrelated values
	confValueOverlap    = 0.85 // single-valued slot, values share a word ("north/west vancouver")
	confValueRole       = 0.8  // same employer, different "as" role
	confValueCategory   = 0.85 // prefers window seat / prefers aisle seat
	confValueCatBare    = 0.75 // prefers tea / prefers coffee
	confValueUsually    = 0.6  // usually single-valued: drives, attends
	confTemporalFrom    = 0.9  // "switched from X" where X is the older value
	confTemporalSlot    = 0.85 // change verb in a named one-value slot ("as the main editor")
	confTemporalVerb    = 0.8  // same verb, new value, explicit change ("now", "instead")
	confTemporalContext = 0.75 // change verb sharing context with the older ("the desktop")
	confTemporalWeak    = 0.6  // "now" + same verb, nothing else shared
	confTemporalBare    = 0.55 // change verb, nothing shared: which slot changed is a guess
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

// fired is a signal that fired, before its detail is rendered from the
// words of the two statements.
type fired struct {
	kind  uint8 // sigNegation...
	hasTo bool  // the detail is "label: from → to"
	ant   bool  // the detail is "from → to (extra)": opposite words and what they are about
	conf  float64
	// label is a fixed label; when empty, the words of labelRef are.
	label    string
	labelRef wordRef
	from, to wordRef
	extra    wordRef
}

// wordRef is tokens of the older or the newer statement of a decision.
type wordRef struct {
	idx   uint64
	newer bool
}

// wordsOf refers to the tokens of s, newer being the newer statement.
func wordsOf(s sel, newer *Statement) wordRef {
	return wordRef{idx: s.idx, newer: s.st == newer && newer != nil}
}

// negation: one statement denies what the other asserts. The denied content
// must be contained in the asserted one ("doesn't drink coffee" against
// "drinks coffee every morning"), about the same subject, with the same verb:
// "doesn't drink black tea" says nothing against "drinks green tea".
func negation(a, b *Statement, e *explain, out *fired) bool {
	if a.negated == b.negated {
		return false
	}
	if a.irreal != b.irreal {
		e.miss("No contradiction: one statement is hypothetical (a plan or a wish), the other a fact.")
		return false
	}
	neg, pos, side := a, b, "older negates"
	if b.negated {
		neg, pos, side = b, a, "newer negates"
	}
	if !neg.subject().equal(pos.subject()) {
		e.miss("No contradiction: the negation is about a different subject.")
		return false
	}
	if neg.verb >= 0 && pos.verb >= 0 {
		nv, pv := &neg.toks[neg.verb], &pos.toks[pos.verb]
		if nv.content() && pv.content() && nv.stem != pv.stem {
			e.miss("No contradiction: the negation is about a different action.")
			return false
		}
	}
	ns, ps := neg.predicate(), pos.predicate()
	if ns.count() == 0 {
		e.miss("No contradiction: the negation has no content to compare.")
		return false
	}
	if !ns.subsetOf(ps) {
		e.miss("No contradiction: the negation is about something the other statement does not say.")
		return false
	}
	conf := confNegationSubset
	if ps.subsetOf(ns) {
		conf = confNegationExact
	}
	*out = fired{kind: sigNegation, conf: conf, label: side, from: wordsOf(ns, b)}
	return true
}

// antonym: the statements are the same but for a pair of opposite words
// ("notifications are enabled" / "notifications are disabled"). Opposite
// words about different things ("Wi-Fi is on" / "the heating is off") are
// not a contradiction.
func antonym(a, b *Statement, e *explain, out *fired) bool {
	if !a.hasAnt || !b.hasAnt {
		return false
	}
	if a.negated != b.negated || a.irreal != b.irreal {
		return false // "is not enabled" and "is disabled" agree
	}
	best := fired{}
	// Opposite words in the subjects name two things ("the front door",
	// "the back door"); opposite roles oppose what someone is ("is a
	// winner"), never two things someone has ("has a son").
	for i := 0; i < a.coreEnd; i++ {
		ta := &a.toks[i]
		if ta.ant == 0 || a.roles[rSubj]&(1<<i) != 0 {
			continue
		}
		for j := 0; j < b.coreEnd; j++ {
			tb := &b.toks[j]
			if tb.ant == 0 || b.roles[rSubj]&(1<<j) != 0 {
				continue
			}
			pair := opposite(ta, tb)
			if pair < 0 || defaultLexicon.pairs[pair].Kind == antonyms.Role && (a.verb >= 0 || b.verb >= 0) {
				continue
			}
			sa, sb := a.subject().without(pair), b.subject().without(pair)
			if !sa.equal(sb) {
				e.miss("No contradiction: opposite words, but about different subjects.")
				continue
			}
			ra, rb := a.predicate().without(pair), b.predicate().without(pair)
			var conf float64
			switch {
			case ra.equal(rb):
				conf = confAntonymExact
			case ra.subsetOf(rb) || rb.subsetOf(ra):
				conf = confAntonymPartial
			default:
				e.miss("No contradiction: opposite words, but about different things.")
				continue
			}
			if conf > best.conf {
				best = fired{kind: sigAntonym, conf: conf, ant: true,
					from: wordRef{idx: 1 << uint(i)}, to: wordRef{idx: 1 << uint(j), newer: true}, extra: wordsOf(rb, b)}
			}
		}
	}
	if best.conf == 0 {
		return false
	}
	*out = best
	return true
}

// opposite returns the antonym pair that ta and tb are opposite sides of, or -1.
func opposite(ta, tb *token) int {
	for _, ra := range defaultLexicon.ants[ta.ant-1] {
		for _, rb := range defaultLexicon.ants[tb.ant-1] {
			if ra.Pair == rb.Pair && ra.Side != rb.Side {
				return ra.Pair
			}
		}
	}
	return -1
}

// sameSlot reports whether both statements give a value to the same slot.
func sameSlot(a, b *Statement) bool {
	if !a.hasPred || !b.hasPred {
		return false
	}
	if a.pred.slot == slotNoun || b.pred.slot == slotNoun {
		return a.pred.slot == b.pred.slot && a.slotSel().equal(b.slotSel())
	}
	return a.pred.slot == b.pred.slot && a.subject().equal(b.subject())
}

// value: the same one-value slot holds different values ("lives in
// Toronto" / "lives in Vancouver"). A value that refines the other
// ("Toronto" / "downtown Toronto") or predicates that hold many values
// ("plays tennis" / "plays the piano") are not a conflict.
func value(a, b *Statement, e *explain, out *fired) bool {
	if !a.hasPred || !b.hasPred || a.negated || b.negated || a.irreal != b.irreal {
		return false
	}
	if !sameSlot(a, b) {
		return false
	}
	if a.pred.val == multi {
		e.miss(a.pred.multiReason)
		return false
	}
	if a.past || b.past {
		e.miss("No contradiction: one statement is about the past.")
		return false
	}
	if b.addAdv {
		e.miss("No contradiction: the newer statement adds a value (also, too, another).")
		return false
	}
	va, vb := a.value(), b.value()
	if va.count() == 0 || vb.count() == 0 {
		return false
	}
	label, labelRef := a.pred.display, wordRef{}
	if a.pred.slot == slotNoun {
		label, labelRef = "", wordsOf(a.slotSel(), b)
	}
	if va.subsetOf(vb) || vb.subsetOf(va) {
		// Same value. A different role at the same employer is a change.
		if a.pred.slot == slotEmployer && b.pred.slot == slotEmployer {
			aa, ab := a.asSel(), b.asSel()
			if aa.count() > 0 && ab.count() > 0 && !aa.subsetOf(ab) && !ab.subsetOf(aa) {
				*out = fired{kind: sigValue, conf: confValueRole, label: "works as", from: wordsOf(aa, b), to: wordsOf(ab, b), hasTo: true}
				return true
			}
		}
		e.miss("No contradiction: the values agree.")
		return false
	}
	if va.subsetOf(b.core()) || vb.subsetOf(a.core()) {
		e.miss("No contradiction: the newer statement refines the older value.")
		return false
	}
	if !a.scope().equal(b.scope()) {
		e.miss("No contradiction: the values hold at different times (weekends, summer...).")
		return false
	}
	var conf float64
	switch a.pred.val {
	case single:
		conf = confValueDisjoint
		if va.shared(vb) > 0 {
			conf = confValueOverlap
		}
	case usually:
		conf = confValueUsually
	case category:
		ha, hb := va.last(), vb.last()
		switch {
		case a.toks[ha].stem == b.toks[hb].stem:
			conf = confValueCategory
		case va.count() == 1 && vb.count() == 1:
			conf = confValueCatBare
		default:
			e.miss("No contradiction: preferences about different kinds of things.")
			return false
		}
	default:
		e.miss(a.pred.multiReason)
		return false
	}
	*out = fired{kind: sigValue, conf: conf, label: label, labelRef: labelRef, from: wordsOf(va, b), to: wordsOf(vb, b), hasTo: true}
	return true
}

// temporal: the newer statement says something changed (switched, moved,
// migrated, now, instead) and the change lands on what the older one says.
// A temporal word on an addition ("recently started reading poetry") is not
// a change.
func temporal(a, b *Statement, e *explain, out *fired) bool {
	if b.replaceAt < 0 && !b.strong && !b.now {
		return false
	}
	if a.irreal || b.irreal || a.negated || b.negated || a.past {
		return false
	}
	if b.addAdv || (b.addVerb && !b.strong && b.replaceAt < 0) {
		e.miss("No contradiction: the newer statement adds something rather than replacing it.")
		return false
	}
	if !a.created.IsZero() && !b.created.IsZero() && b.created.Before(a.created) {
		e.miss("No contradiction: the statement announcing a change is the older one.")
		return false
	}
	marker, markerRef := "now", wordRef{}
	if b.replaceAt >= 0 {
		marker, markerRef = "", wordRef{idx: 1 << uint(b.replaceAt), newer: true}
	} else if b.strong {
		marker = "instead"
	}
	// "switched from X to Y", "replaced X with Y" where X is the older value.
	if f := b.from(); f.count() > 0 && f.subsetOf(a.core()) {
		*out = fired{kind: sigTemporal, conf: confTemporalFrom, label: marker, labelRef: markerRef, from: wordsOf(f, b), to: wordsOf(b.target(), b), hasTo: true}
		return true
	}
	if b.replaceAt >= 0 {
		switch b.toks[b.replaceAt].stem {
		case "replace", "swap", "trade", "convert":
			if v := b.value(); v.count() > 0 && v.subsetOf(a.core()) {
				*out = fired{kind: sigTemporal, conf: confTemporalFrom, label: marker, labelRef: markerRef, from: wordsOf(v, b), to: wordsOf(b.target(), b), hasTo: true}
				return true
			}
		}
	}
	if !a.subject().equal(b.subject()) {
		e.miss("No contradiction: the change is about a different subject.")
		return false
	}
	if a.verb >= 0 && b.verb >= 0 && b.replaceAt < 0 {
		va, vb := &a.toks[a.verb], &b.toks[b.verb]
		if va.content() && va.stem == vb.stem {
			oa, ob := a.object(), b.object()
			if oa.subsetOf(ob) || ob.subsetOf(oa) {
				return false
			}
			conf := confTemporalWeak
			if b.strong || oa.shared(ob) > 0 {
				conf = confTemporalVerb
			}
			*out = fired{kind: sigTemporal, conf: conf, label: marker, labelRef: markerRef, from: wordsOf(a.object(), b), to: wordsOf(ob, b), hasTo: true}
			return true
		}
	}
	if b.replaceAt < 0 {
		return false
	}
	t := b.target()
	if t.count() == 0 || t.subsetOf(a.core()) {
		e.miss("No contradiction: the change leads to what the older statement already says.")
		return false
	}
	// The context the change shares with the older statement (besides the
	// new value) says which slot changed: a named one-value slot ("as the
	// main editor", "standup" as subject) or at least a common word.
	pa, pb := a.core(), b.core()
	conf := confTemporalBare
	switch {
	case pb.sharedFlag(pa, fSingleMod|fAttr):
		conf = confTemporalSlot
	case pb.shared(pa) > 0:
		conf = confTemporalContext
	}
	*out = fired{kind: sigTemporal, conf: conf, label: marker, labelRef: markerRef, from: wordsOf(a.value(), b), to: wordsOf(t, b), hasTo: true}
	return true
}
