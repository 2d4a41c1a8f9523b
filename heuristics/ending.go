package heuristics

import (
	"math/bits"
	"strings"
)

// A thing ended: the newer says that something the older speaks of is no
// more ("Sold the Civic" / "Drives a 2016 Honda Civic", "Husky removed" /
// "Husky pre-commit hook runs lint-staged", "the shellfish allergy is
// gone" / "Has a shellfish allergy", "Migraines have stopped" / "Gets
// migraines about twice a month"): what the older says of it holds no
// more, whatever its verb. The thing is the object of an ending verb, or
// the subject of one that is passive, intransitive or a state; a
// cessation of using, taking or needing a thing ends the thing too
// ("Stopped using YNAB" / "Budgets with YNAB"). Every word of the thing
// but those that name an aspect of it ("usage", "support", "card") must be
// the older's.

// endingWords end their object, or their subject when they have none.
var endingWords = toSet(`sold sell sells selling lost lose loses removed remove removes deleted delete deletes withdrew withdrawn
	uninstalled uninstall cancelled canceled cancel cancels closed decommissioned decommission retired
	dropped ditched scrapped disbanded dissolved expired lapsed healed cured resolved gone dead over
	discontinued killed paused stopped ended terminated totaled totalled wrecked`)

// endingParticles make an ending of a verb with its particle ("paid off
// the loan", "shut down", "gave away", "handed off coaching", "stepped
// down from the board").
var endingParticles = map[string]string{"paid": "off", "pays": "off", "shut": "down", "tore": "down", "torn": "down",
	"gave": "away", "handed": "off", "hands": "off", "stepped": "down", "steps": "down", "phased": "out", "called": "off",
	"ruled": "out"}

// stateWords, after a copula, say how a thing is for now ("the office is
// closed"), not that it is no more.
var stateWords = toSet(`closed stopped paused dropped`)

// usageVerbs say that one uses a thing: their cessation or denial ends
// the thing ("stopped taking lisinopril", "doesn't need the CPAP").
var usageVerbs = toSet(`use uses using used take takes taking took need needs needing needed wear wears wearing
	go goes going attend attends attending`)

// partWords name an aspect of a thing rather than another thing: "NEXUS
// card", "styled-components usage", "MySQL support".
var partWords = toSet(`usage use support dependency dependencies integration subscription membership account card
	service plan policy package plugin setup license config cluster instance server last old whole entire`)

// endedThing is what clause c says ended, as the words that name it, and
// the words of who ended it (its subject, for an active ending).
func (c *clause) endedThing() (thing, who sel) {
	none := sel{st: c.st}
	if c.irreal || c.negated && !c.cease {
		if c.negated && c.verb >= 0 && usageVerbs[c.raw(c.verb)] {
			// "Doesn't need the CPAP anymore": what it denies using, when
			// it says no more of it ("doesn't take the bus on Sundays",
			// "doesn't use Linux at home" deny some of it).
			if thing := c.thingAt(c.verb + 1); c.unqualified(thing) {
				return thing, c.subject()
			}
			if c.verb+1 >= c.hi && c.subjIdx != 0 && !strings.HasSuffix(c.raw(c.verb), "s") {
				return c.subject(), sel{st: c.st} // "glasses no longer needed"
			}
		}
		return none, none
	}
	if c.temporary() || c.scopeIdx != 0 {
		return none, none // "the league ended for the season", "closes on Sundays"
	}
	lx := defaultLexicon()
	for i := c.start; i < c.hi; i++ {
		if !lx.ruleWords.has(c.tok(i).hash) {
			continue // most words: none the switch names
		}
		w := c.raw(i)
		n := i + 1
		switch {
		case endingParticles[w] != "" && c.is1(n, endingParticles[w]):
			n++
			if c.raw(i) == "stepped" || c.raw(i) == "steps" {
				if !c.is(n, wordFrom) {
					continue
				}
				n++ // "stepped down from the board"
			}
		case (w == "stopped" || w == "quit") && n < c.hi && usageVerbs[c.raw(n)]:
			n++ // "stopped using YNAB"
		case w == "gave" && c.giveTo(n):
		case (w == "put" || w == "puts") && c.onHold(n):
			// "Put Rust on hold": for now, no more
		case w == "off" && i == c.start && n < c.hi && c.tok(n).content():
			// "Off atorvastatin; lipids normal"
		case endingWords[w] && c.tok(i).flags&tNumber == 0 && !(strings.HasSuffix(w, "s") && w != c.stem(i)):
			// (Not "sells used books": a habit.)
			if c.numberNear(n) || n < c.hi && strings.HasSuffix(c.raw(n), "ing") && c.tok(n).flags&fVerb != 0 {
				return none, none // "lost 5 kg", "dropped to 10"; "stopped listening to X": a negation's
			}
			if p := i - 1; p >= c.start && (c.tok(p).flags&(fDet|fPrep) != 0 || p == c.verb && c.tok(p).content()) && n < c.hi && c.tok(n).content() {
				continue // "tracks closed tickets": which tickets, not an ending
			}
			if stateWords[w] && c.copular {
				return none, none // "the office is closed on Saturdays": a state
			}
		default:
			continue
		}
		if obj := c.thingAt(n); obj.count() > 0 {
			return c.andNamed(obj), c.sel(c.contentMask() & span(c.start, i) &^ c.flagged(fSelf) &^ c.hedges(i))
		}
		// No object: the subject ended ("Husky removed", "the allergy is gone").
		subj := c.sel(c.contentMask() & span(c.start, i) &^ c.flagged(fSelf|fWhen))
		if core := subj.withoutParts(); core.count() > 0 {
			subj = core
		}
		return subj, none
	}
	return none, none
}

// andNamed adds to thing the named things coordinated after it ("removed
// isort and flake8"); not a clause ("sold the car and bought a bike").
func (c *clause) andNamed(thing sel) sel {
	for j := thing.last() + 1; j+1 < c.hi && c.tok(j).flags&fConj != 0 && c.tok(j+1).flags&fVerb == 0; {
		next := c.thingAt(j + 1)
		if next.count() == 0 || !next.named() {
			break
		}
		thing.idx |= next.idx
		j = next.last() + 1
	}
	return thing
}

// hedges are the linking verbs before token i: "seems" of "Nils seems to
// have put Rust on hold" is no part of who did it.
func (c *clause) hedges(i int) uint64 {
	var m uint64
	for k := c.start; k < i; k++ {
		if linkingVerbs[c.stem(k)] {
			m |= 1 << k
		}
	}
	return m
}

// onHold reports "on hold" after the thing that starts at i.
func (c *clause) onHold(i int) bool {
	for k := i + 1; k+1 < c.hi; k++ {
		if c.raw(k) == "on" {
			return c.raw(k+1) == "hold"
		}
	}
	return false
}

// is1 reports whether token i of the clause is the word w.
func (c *clause) is1(i int, w string) bool { return i < c.hi && c.raw(i) == w }

// giveTo reports "gave X to Y": giving X away.
func (c *clause) giveTo(i int) bool {
	for k := i; k < c.hi; k++ {
		if c.is(k, wordTo) {
			return k > i
		}
	}
	return false
}

// numberNear reports a number at token i or after a "to" there ("lost 5
// kg", "dropped to about 2 a week").
func (c *clause) numberNear(i int) bool {
	if i < c.hi && c.is(i, wordTo) {
		i++
	}
	if i < c.hi && approximators[c.raw(i)] {
		i++
	}
	return i < c.hi && c.tok(i).flags&tNumber != 0
}

// thingAt is the noun phrase that starts at token i, past articles,
// possessives and "on": its content words up to a preposition, a
// conjunction or a break, without the words that name an aspect of it
// (unless it is nothing else).
func (c *clause) thingAt(i int) sel {
	for i < c.hi && c.tok(i).flags&(fDet|fSelf) != 0 && c.tok(i).flags&tBreak == 0 {
		i++
	}
	j := i
	for j < c.hi && c.tok(j).flags&(fPrep|fConj|fSub) == 0 && (j == i || c.tok(j).flags&tBreak == 0) {
		j++
	}
	s := c.sel(c.st.allIdx & span(i, j) &^ c.flagged(fWhen|tNumber))
	if k := j + 1; j < c.hi && k < c.hi && named(c.st, c.tok(k)) && c.tok(k).flags&tBreak == 0 {
		switch c.raw(j) {
		case "in", "at", "of", "from", "with":
			// "the house in Denver", "the account at Chase": which one.
			e := k
			for e < c.hi && c.tok(e).flags&(fPrep|fConj|fSub) == 0 && (e == k || c.tok(e).flags&tBreak == 0) {
				e++
			}
			s.idx |= c.st.allIdx & span(k, e) &^ c.flagged(fWhen|tNumber)
		}
	}
	return s.withoutParts()
}

// named reports a word that names one thing: capitalised (not a day, a
// month or a pronoun), or written as no English word is
// ("styled-components", "node.js", "flake8").
func named(st *Statement, t *token) bool {
	w := st.raw(t)
	return t.flags&tCap != 0 && t.flags&(fScope|fTime|fSelf) == 0 || strings.ContainsAny(w, "-./_") ||
		t.flags&tNumber == 0 && strings.ContainsAny(w, "0123456789") // "flake8", "ec2"
}

// withoutParts leaves out the words that name an aspect of a named thing
// ("NEXUS card", "MySQL support"): a "gym membership" is not the gym.
func (s sel) withoutParts() sel {
	core := s
	for m := s.idx; m != 0; m &= m - 1 {
		if k := bits.TrailingZeros64(m); partWords[s.st.raw(&s.st.toks[k])] {
			core.idx &^= 1 << k
		}
	}
	for t := range core.words {
		if named(s.st, t) {
			return core
		}
	}
	return s
}

// thingEnded: the newer clause b says a thing the older clause a speaks of
// ended (see endedThing).
func thingEnded(a, b *clause) (fired, bool) {
	whole, who := b.endedThing()
	said := a.st.all() // what the older says of it, in any of its parts
	if whole.count() == 0 || a.past && !a.acquired() || a.negated || b.irreal && !b.negated || !who.subsetOf(said) {
		return fired{}, false
	}
	var thing sel
	parts := whole.conjuncts()
	for _, t := range parts { // "flake8 and Prettier removed": each of them ended
		if len(parts) > 1 && !t.named() {
			continue // "ruff and black removed" says nothing of coffee taken black
		}
		if t.kinOf(said) && t.sameNumber(said) && !(a.left().count() > 0 && t.subsetOf(a.left())) {
			thing = t
			break
		}
	}
	if thing.count() == 0 || a.st.eventOf(thing) || !thing.gerundsSaid(said) {
		return fired{}, false // "the trip is cancelled" / "flies Alaska for work trips"; "migrated off MySQL" knew
	}
	if t, _ := a.endedThing(); t.count() > 0 {
		return fired{}, false // both tell of the end
	}
	if b.transfers() && a.st.subjectHas(thing) {
		return fired{}, false // "Gave Miso to her sister" / "Miso is an indoor cat": still so, elsewhere
	}
	return fired{SignalNegation, confNegationSubset, "newer ends: " + thing.text()}, true
}

// acquiringVerbs, in the past, start a relation that holds since:
// "Adopted a cat named Miso" has the cat, "Took a car loan" owes it. A
// purchase is an event ("Bought the Corolla used from a dealer" stays
// true when it is sold).
var acquiringVerbs = toSet(`adopt start join take took sign hire rent lease subscribe enroll enrol begin began`)

// acquired reports a past clause whose verb acquires what it names.
func (c *clause) acquired() bool {
	return c.verb >= 0 && (acquiringVerbs[c.stem(c.verb)] || acquiringVerbs[c.raw(c.verb)])
}

// unqualified reports that nothing but a reason or a time follows the
// thing a clause denies: all of it is denied.
func (c *clause) unqualified(thing sel) bool {
	if thing.count() == 0 {
		return false
	}
	for k := thing.last() + 1; k < c.end; k++ {
		t := c.tok(k)
		if circumstances[c.raw(k)] || t.flags&(fSub|tFull) != 0 {
			return true // "after losing weight"
		}
		if t.content() && t.flags&fWhen == 0 || t.flags&fScope != 0 {
			return false
		}
	}
	return true
}

// temporary reports an ending for a while only: "for the season", "for
// the summer", "until March", "for now".
func (c *clause) temporary() bool {
	for k := c.start; k+1 < c.end; k++ {
		w, n := c.raw(k), c.tok(k+1)
		switch {
		case w == "until" || w == "till" || w == "temporarily":
			return true
		case c.is(k, wordFor) && (n.flags&(fScope|fTime|fWhen) != 0 || c.raw(k+1) == "the" && k+2 < c.end &&
			(c.tok(k+2).flags&(fScope|fTime) != 0 || c.raw(k+2) == "season")):
			return true
		}
	}
	return false
}

// transfers reports a clause that gives a thing to someone else ("sold",
// "gave", "handed off"): the thing goes on, only not as the older's.
func (c *clause) transfers() bool {
	for i := c.start; i < c.hi; i++ {
		switch c.raw(i) {
		case "sold", "sell", "sells", "selling", "gave", "handed", "hands":
			return true
		}
	}
	return false
}

// sameNumber reports whether every word of s is said by o in the same
// form, or as a verb of the same stem: "the trip" is not "work trips",
// "the Times" not "time", "coaching" is what "coaches" does.
func (s sel) sameNumber(o sel) bool {
	for t := range s.words {
		same := false
		for u := range o.words {
			if o.st.raw(u) == s.st.raw(t) || !named(s.st, t) && (u.flags&fVerb != 0 && o.st.stem(u) == s.st.stem(t) ||
				u.hash != t.hash && u.flags&fVerb == 0 && defaultLexicon().fam(u.hash) == defaultLexicon().fam(t.hash)) { // "allergy" / "allergic"
				same = true
				break
			}
		}
		if !same {
			return false
		}
	}
	return true
}

// subjectHas reports a word of s in the subject of one of the clauses.
func (st *Statement) subjectHas(s sel) bool {
	for i := range st.clauses {
		if s.shared(st.clauses[i].subject()) > 0 {
			return true
		}
	}
	return false
}

// gerundsSaid reports that the -ing noun that heads s, if any, is said in o as an -ing
// word or a verb: "dropped the fasting" ends "fasts during Ramadan", not
// "the test suite is fast".
func (s sel) gerundsSaid(o sel) bool {
	for t := range s.words {
		if t != &s.st.toks[s.last()] || !strings.HasSuffix(s.st.raw(t), "ing") {
			continue // (its head only: "a standing desk" is a desk)
		}
		said := false
		for k := range o.st.toks {
			if u := &o.st.toks[k]; o.idx&(1<<k) != 0 && u.hash == t.hash {
				said = said || o.st.gerundAt(k)
			}
		}
		if !said {
			return false
		}
	}
	return true
}

// gerundAt reports the word at k said as an action: a verb not after a
// copula ("fasts", not "is fast"), or an -ing word that modifies no noun
// after it ("intermittent fasting", not "fasting glucose").
func (st *Statement) gerundAt(k int) bool {
	u := &st.toks[k]
	if !strings.HasSuffix(st.raw(u), "ing") {
		return u.flags&fVerb != 0 && (k == 0 || st.toks[k-1].flags&fCopula == 0)
	}
	n := k + 1
	return n >= len(st.toks) || st.toks[n].flags&tBreak != 0 || !st.toks[n].content() || st.toks[n].flags&(fVerb|fTime|fWhen|fScope) != 0
}

// conjuncts splits s at the conjunctions between its words ("flake8 and
// black": flake8, black; "Redshift loader and LOAD_TARGET flag"); s
// itself when none.
func (s sel) conjuncts() []sel {
	var out []sel
	cur := sel{st: s.st}
	for m := s.idx; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		if cur.idx != 0 {
			for j := cur.last() + 1; j < k; j++ {
				if s.st.toks[j].flags&fConj != 0 || s.st.toks[j].flags&tBreak != 0 {
					out = append(out, cur)
					cur = sel{st: s.st}
					break
				}
			}
		}
		cur.idx |= 1 << k
	}
	return append(out, cur)
}

// named reports a word of s that names one thing (see named).
func (s sel) named() bool {
	for m := s.idx; m != 0; m &= m - 1 {
		if named(s.st, &s.st.toks[bits.TrailingZeros64(m)]) {
			return true
		}
	}
	return false
}

// eventOf reports that the statement tells an event of the thing, a past
// participle right after it ("pg-pay-2 promoted, then switched back"): a
// record of what happened, which stays true when the thing is gone.
func (st *Statement) eventOf(thing sel) bool {
	for i := range st.toks {
		if !thing.has(st.stem(&st.toks[i])) || i+1 >= len(st.toks) {
			continue
		}
		n := &st.toks[i+1]
		if n.flags&tBreak != 0 || !strings.HasSuffix(st.raw(n), "ed") || n.flags&(fVerb|fPast) == 0 && n.content() {
			continue
		}
		if i+2 == len(st.toks) || st.toks[i+2].flags&(tBreak|fConj) != 0 {
			return true // not "Metformin raised to 1000 mg", a state
		}
	}
	return false
}
