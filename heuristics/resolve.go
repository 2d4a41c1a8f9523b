package heuristics

import (
	"math/bits"
	"strings"
)

// A pending thing resolved: the older says something under way, planned
// or being weighed ("Is training for the Chicago Marathon", "Is
// interviewing at Stripe", "Plan: migrate off styled-components",
// "Evaluating Grafana Mimir to replace Thanos"), and the newer tells how
// it came out, whichever way ("Ran the Chicago Marathon in 3:58",
// "Accepted an offer from Stripe", "Mimir cutover complete"): the older
// no longer holds. The newer must name what the older's plan names (its
// names, or the head of its object) and tell an outcome: an event in the
// past, a change, an end, a decision, a completion, or, for a change under
// way, the thing in its new place.

// pendingWords, as the verb of a clause, say a thing under way that an
// outcome resolves.
var pendingWords = toSet(`training interviewing looking searching hunting saving waiting trying expecting preparing
	applying negotiating evaluating considering planning testing trialing trialling piloting reading watching
	introducing booked scheduled aiming`)

// pauseWords say a state that lasts a while and then ends: "paused",
// "on leave", "on hold".
var pauseWords = toSet(`paused suspended leave hold sabbatical furlough`)

// pendingLabels head a note that is a plan ("Plan: ...", "proposal: ...").
var pendingLabels = toSet(`plan proposal wip todo pending draft goal`)

// outcomeWords tell how a pending thing came out.
var outcomeWords = toSet(`finished completed complete done did ran won passed accepted selected chose chosen picked withdrew
	decided live landed merged shipped launched cutover converted signed bought joined sat took got returned back
	postponed pushed rescheduled off restarted resumed`)

// modalRules say what should be, not what is planned: "should use pnpm".
var modalRules = toSet(`should must shall if`)

// pending reports a clause that says a thing under way or planned.
func (c *clause) pending() bool {
	lx := defaultLexicon()
	for i := c.start; i < c.hi; i++ {
		t := c.tok(i)
		if t.flags&fIrreal == 0 && !lx.ruleWords.has(t.hash) {
			continue // most words: none the switch names
		}
		w := c.raw(i)
		switch {
		case modalRules[w]:
			return false
		case t.flags&fIrreal != 0 && t.flags&fAdv == 0 && w != "going":
			return true
		case pendingWords[w] && (i == c.start || c.roles[rChain]&(1<<i) != 0 || i > c.start && c.tok(i-1).flags&(fCopula|fAux|fNow) != 0):
			return true // "Training for the marathon", "is interviewing at Stripe", "currently reading X"
		case c.noteKey > 0 && i < c.noteKey && pendingLabels[w]:
			return true // "Plan: migrate off X"
		case w == "progress" && i > c.start && c.raw(i-1) == "in" || w == "wip":
			return true // "migration in progress", "Vite migration WIP"
		}
	}
	return c.underWay()
}

// pauseAt is the word that says the clause's state is a pause: a
// participle after what is paused ("Savings paused while moving"), or a
// word after "on" ("is on parental leave", "on hold"); not a pause done to
// something ("paused the savings"). -1 when none.
func (c *clause) pauseAt() int {
	lx := defaultLexicon()
	for i := c.start + 1; i < c.hi; i++ {
		if !lx.ruleWords.has(c.tok(i).hash) || !pauseWords[c.raw(i)] {
			continue
		}
		if strings.HasSuffix(c.raw(i), "ed") {
			p, w := i-1, c.raw(i-1)
			if c.tok(p).flags&fCopula != 0 && p > c.start {
				p, w = p-1, c.raw(p-1) // "the membership is paused"
			}
			if c.tok(p).content() && !strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "ing") && (i+1 >= c.hi || !c.tok(i+1).content()) {
				return i // not "has paused running", "paused the gym"
			}
			continue
		}
		if c.raw(i-1) == "on" || i-2 >= c.start && c.raw(i-2) == "on" && c.tok(i-1).content() && c.tok(i-1).flags&fVerb == 0 {
			return i
		}
	}
	return -1
}

// pausedThings are what a pause at k holds: the words before a
// participle ("Fund savings" paused); who is on a pause ("Ana" on leave),
// or, when no one is named, the pause itself when it says more than a
// pause ("parental leave", not "hold").
func (c *clause) pausedThings(k int) []sel {
	if strings.HasSuffix(c.raw(k), "ed") {
		return []sel{c.sel(c.contentMask() & span(c.start, k) &^ c.flagged(fSelf|fWhen|fCopula))}
	}
	on := k - 1
	if c.raw(on) != "on" {
		on--
	}
	who := c.sel(c.contentMask() & span(c.start, on) &^ c.flagged(fSelf|fWhen|fVerb|fCopula))
	if who.flagged(tCap) > 0 {
		return []sel{who} // "Ana is on leave" / "Bo is back from leave": another's
	}
	out := []sel{who}
	if what := c.sel(c.contentMask() & span(on+1, k+1)); what.count() > 1 {
		out = append(out, what)
	}
	return out
}

// resumeWords tell that a pause is over.
var resumeWords = toSet(`restarted resumed resume resumes returned back over ended lifted`)

// resumes reports a clause that says a pause is over: "savings restarted",
// "back at work", "came back from leave"; not "hurt his back".
func (c *clause) resumes() bool {
	for i := c.start; i < c.end; i++ {
		if !resumeWords[c.raw(i)] {
			continue
		}
		if c.raw(i) != "back" || i > c.start && c.tok(i-1).flags&(fCopula|fVerb) != 0 || i+1 < c.end && c.tok(i+1).flags&fPrep != 0 {
			return true
		}
	}
	return false
}

// resumed: the older clause a says a pause ("Savings paused", "is on
// parental leave"), and the newer that it is over, of the same thing.
func resumed(a, b *clause) (fired, bool) {
	k := a.pauseAt()
	if k < 0 || a.negated || b.irreal || b.negated || !b.resumes() {
		return fired{}, false
	}
	own := b.sel(span(b.start, b.end) & b.st.allIdx) // "Bo said Ana is back": Ana's
	for _, what := range a.pausedThings(k) {
		if what.count() > 0 && what.subsetOf(own) {
			return fired{SignalTemporal, confTemporalContext, "resumes: " + what.text()}, true
		}
	}
	return fired{}, false
}

// planned is what a pending clause plans: the names of its object (of
// its subject when the subject is what is planned: "Vite migration WIP",
// "Sleep study booked"), or else its object's first noun ("a 1BHK" of
// "looking for a 1BHK closer to the office"). Who plans it, times,
// numbers and the words of the plan itself say nothing of what.
func (c *clause) planned() sel {
	words := c.objIdx
	if c.replaceAt >= 0 && c.tgtIdx != 0 && c.tgtIdx != c.valIdx {
		words = c.tgtIdx // "switching Sofi to a bilingual school": where to
	}
	if c.verb < 0 || c.passive || c.noteKey > 0 || c.replaceAt > c.start && c.raw(c.replaceAt-1) == "being" {
		words |= c.subjIdx
	}
	digits := c.flagged(tNumber) // numbers, but a number word of a name ("a half marathon")
	for m := digits; m != 0; m &= m - 1 {
		if k := bits.TrailingZeros64(m); !isASCIIDigit(c.raw(k)[0]) {
			digits &^= 1 << k
		}
	}
	words &^= c.flagged(fWhen|fTime) | digits
	var names uint64
	for m := words; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		if named(c.st, c.tok(k)) && !pendingLabels[c.raw(k)] && !pendingWords[c.raw(k)] {
			names |= 1 << k
		}
	}
	if names != 0 {
		return c.sel(names)
	}
	// No name: the first noun phrase of what it plans, with the words that
	// say which ("a second dog", "a half marathon", "the new laptop").
	for k := c.start; k < c.hi; k++ {
		t := c.tok(k)
		if words&(1<<k) == 0 || !t.content() || pendingWords[c.raw(k)] || pendingLabels[c.raw(k)] || k == c.verb {
			continue
		}
		lo := k
		for lo > c.start && c.tok(lo-1).flags&fAddAdv != 0 {
			lo-- // "a second dog"
		}
		hi := k
		for hi < c.hi && c.tok(hi).flags&(fPrep|fConj|fSub|fDet) == 0 && (hi == k || c.tok(hi).flags&tBreak == 0) {
			hi++
		}
		return c.sel(span(lo, hi) &^ c.flagged(fWhen|fTime|fDet|fSelf) &^ digits)
	}
	return sel{st: c.st}
}

// outcome reports a clause that tells how something came out: an event
// in the past, a change, an end, a completion, "now".
func (c *clause) outcome() bool {
	if c.past || c.perfect || c.cease || c.negated || c.replaceAt >= 0 || c.now || c.strong || c.addVerb {
		return true
	}
	for i := c.start; i < c.end; i++ {
		if outcomeWords[c.raw(i)] {
			return true
		}
	}
	return c.verb >= 0 && c.tok(c.verb).flags&fPast != 0
}

// resolved: the older clause a is pending and the newer b tells how what
// it plans came out.
func resolved(a, b *clause) (fired, bool) {
	if !a.pending() || a.negated || b.pending() || b.irreal || b.rule() {
		return fired{}, false
	}
	if as, bs := a.subject(), b.subject(); as.count() > 0 && bs.count() > 0 && as.flagged(tCap) == as.count() &&
		bs.flagged(tCap) == bs.count() && as.shared(b.st.all()) == 0 {
		return fired{}, false // "Ioana plans to move to Cluj" / "Bogdan moved to Cluj": someone else's outcome
	}
	plan := a.planned()
	if b.addAdv && !b.sel(b.flagged(fAddAdv)&span(b.start, b.hi)).subsetOf(plan) {
		return fired{}, false // "also", unless the plan's own ("a second rabbit")
	}
	need := plan.count() // all of a plan without a name ("a second dog" is not "a dog")
	if plan.flagged(tCap) > 0 || plan.count() == 1 {
		need = min(plan.count(), 2) // "the Twin Cities Marathon" is not "Grandma's Marathon"
	}
	if plan.count() == 0 || plan.count()-plan.minus(b.st.words()).count() < need || plan.shared(b.st.all()) == 0 {
		return fired{}, false // (a content word of it said: the blocking key)
	}
	if head := a.planHead(); head.count() > 0 && !head.subsetOf(b.st.words()) && !b.tells(a, plan) {
		return fired{}, false // "Considering swim lessons for Leo" / "Leo started kindergarten"; "Planning to move in with Lena" / "got engaged"
	}
	at, bt := a.sel(a.times()), b.sel(b.times())
	if b.replaceAt < 0 && !b.cease && !b.now && at.count() > 0 && bt.count() > 0 && !at.equal(bt) {
		return fired{}, false // "Scheduled a call on Sunday" / "Had a call at 8am today": another one
	}
	if !b.outcome() && !(a.underWay() && b.sel(b.valIdx|b.tgtIdx).shared(plan) > 0) {
		return fired{}, false // "Deploy is being moved to Fly.io" / "Production runs on Fly.io" tells it
	}
	return fired{SignalTemporal, confTemporalContext, "resolves: " + plan.text()}, true
}

// planHead is what a plan's outcome must say besides its names: the verb
// it plans ("move" of "Planning to move in with Lena"), or the head of
// what it plans when that is a common noun ("swim lessons" of
// "Considering swim lessons for Leo").
func (c *clause) planHead() sel {
	if c.underWay() {
		return sel{st: c.st} // "is being moved to Fly.io": where it is now tells it
	}
	if c.verb >= 0 && (c.tok(c.verb).content() || c.replaceAt == c.verb) && !pendingWords[c.raw(c.verb)] && c.tok(c.verb).flags&fIrreal == 0 {
		return c.sel(1 << c.verb)
	}
	for k := bits.TrailingZeros64(c.valIdx); k < c.hi && c.valIdx&(1<<k) != 0; k++ {
		if t := c.tok(k); t.content() && t.flags&fVerb == 0 && !named(c.st, t) && !pendingWords[c.raw(k)] {
			return c.sel(c.valIdx &^ c.flagged(fVerb|tCap) &^ span(0, k))
		}
	}
	return sel{st: c.st}
}

// words is every word of the statement, function words too ("a second
// dog").
func (st *Statement) words() sel { return sel{st: st, idx: span(0, len(st.toks))} }

// times is the bitmap of the clause's words that say when: anchors,
// scopes, and days or months that are not a length ("3 weeks").
func (c *clause) times() uint64 {
	m := c.flagged(fWhen | fScope)
	for t := c.flagged(fTime) &^ m; t != 0; t &= t - 1 {
		if k := bits.TrailingZeros64(t); k == c.start || c.tok(k-1).flags&tNumber == 0 || strings.ContainsAny(c.raw(k-1), "apm:") {
			m |= 1 << k
		}
	}
	return m
}

// rule reports a prohibition with no subject: "Never schedule calls
// before 9am", "Don't use emojis".
func (c *clause) rule() bool {
	return c.negated && c.subjIdx == 0 && c.tok(c.start).flags&fNeg != 0
}

// tells reports a clause that says in its own words how the plan came
// out: what it plans, with an end or a completion ("A second rabbit is
// off the table", "Docs now live on Docusaurus" for "Plan: move the docs
// to Docusaurus").
func (c *clause) tells(a *clause, plan sel) bool {
	own := c.sel(span(c.start, c.end))
	if !plan.subsetOf(own) {
		return false
	}
	if a.replaceAt >= 0 && c.now && a.target().shared(own) > 0 {
		return true // where the plan moves it, now
	}
	for i := c.start; i < c.end; i++ {
		if tellingWords[c.raw(i)] || c.tok(i).flags&fCease != 0 || c.raw(i) == "back" && c.is(i+1, wordFrom) {
			return true // "off the table", "got back from Japan"
		}
	}
	return c.cease
}

// tellingWords tell in a plan's own words that it is done or off: "A
// second rabbit is off the table", "the move is done".
var tellingWords = toSet(`finished completed complete done live cutover off postponed decided over returned withdrew`)

// ruleWordSet is every word the endings and the plans name (see
// lexicon.ruleWords).
func ruleWordSet() map[string]bool {
	m := map[string]bool{"stopped": true, "quit": true, "gave": true, "off": true, "progress": true, "wip": true, "put": true, "puts": true}
	for _, set := range []map[string]bool{endingWords, modalRules, pendingWords, pendingLabels, pauseWords} {
		for w := range set {
			m[w] = true
		}
	}
	for w := range endingParticles {
		m[w] = true
	}
	return m
}
