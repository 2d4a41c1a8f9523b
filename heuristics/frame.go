package heuristics

import (
	"math/bits"
	"slices"
	"strings"
)

// findFrame finds the predicate, the value and the slot, starting after the
// verb chain at j.
func (c *clause) findFrame(j int, copula, aux bool) {
	lx := defaultLexicon()
	k := j
	if c.verb >= 0 {
		vt := c.tok(c.verb)
		c.linking = linkingVerbs[c.stem(c.verb)]
		// Past tense only without auxiliary or copula ("is married" is a
		// state; "lived in" is history), and never for change verbs (a move
		// is news, "turned 35" a new state) or "born" (a birthplace does
		// not expire).
		p, n := c.lookupPred(c.verb)
		entered := false
		if p == nil {
			p, n = c.aspectPred(c.verb) // "moved into a flat in Lyon" in an aspect about where one lives
			entered = p != nil
		}
		switch {
		case c.replaceAt >= 0 || entered || c.stem(c.verb) == "born" || c.stem(c.verb) == "turn":
			c.past = false
		case !copula && !aux:
			// "Married to Jon" is a state, as a participle of a stative
			// predicate is.
			c.past = vt.flags&fPast != 0 && !(p != nil && p.stative && c.verb == c.start)
		case c.perfect && !copula && durativeVerbs[c.stem(c.verb)] && !c.lasting():
			// "Has lived in Oslo" says where someone has lived, not where
			// they live: a present perfect of a lasting state says it
			// held, and says it still holds only with a duration or
			// "still" ("has lived in Oslo since 2019", "for six years").
			// An event in the present perfect is news ("has moved to
			// Oslo", "has joined Stripe"): only states are read so.
			c.past = true
		}
		if p != nil && (!p.passiveOnly || c.passive) {
			c.pred = p
			c.roles[rChain] |= span(c.verb+1, c.verb+n)
			k = c.verb + n
		}
	} else if copula && c.is(j, wordFrom) {
		c.pred = lx.beFrom
		c.roles[rChain] |= 1 << j
		k = j + 1
	}
	if !c.quantityChange() {
		c.readValue(k, copula)
	}
	if c.passive {
		c.agent()
	}
	c.readChange()
	c.findSlot()
}

// haveForms are the forms of "have" that make a perfect with a participle.
var haveForms = toSet(`has have had having i've we've they've you've`)

// durativeVerbs say a state that lasts: their present perfect without a
// duration is experience ("has worked at Google"), not the present.
var durativeVerbs = toSet(`live reside work stay use own study attend`)

// lasting reports a word of the clause or its fragments that says the
// state goes on: "since", "still", "always", "now", or "for" with a length
// of time ("for six years", "for years"; not "works for Acme").
func (c *clause) lasting() bool {
	for i := c.start; i < c.end; i++ {
		t := c.tok(i)
		switch w := c.raw(i); {
		case w == "since" || w == "still" || w == "always" || t.flags&fNow != 0:
			return true
		case t.word == wordFor:
			for k := i + 1; k < min(i+4, c.end); k++ {
				if f := c.tok(k).flags; f&(tNumber|fTime) != 0 {
					return true
				}
			}
		}
	}
	return false
}

// quantityChange reads "went up to 2,300", "was raised to 500", "dropped
// to 10" as the copula of a changed value: "is now 2,300".
func (c *clause) quantityChange() bool {
	if c.verb < 0 || !quantityVerbs[c.raw(c.verb)] {
		return false
	}
	k := c.verb + 1
	if k < c.hi && (c.is(k, wordUp) || c.raw(k) == "down") {
		k++
	}
	if obj := c.quantityObject(k); obj != 0 {
		// "Raised the grocery budget to $750": what was raised is what
		// is now $750.
		k = bits.Len64(obj)
		c.roles[rSubj], c.subjSpan = obj, obj
		c.roles[rVal] &^= obj
		c.roles[rQual] &^= obj
	}
	n := c.numberAfter(k)
	if !c.is(k, wordTo) || n < 0 {
		return false
	}
	c.roles[rChain] |= span(c.verb, n) &^ c.roles[rSubj]
	c.roles[rVerb], c.verb, c.pred, c.passive, c.past = 0, -1, nil, false, false
	c.copular, c.now = true, true
	c.readValue(n, true)
	return true
}

// numberAfter returns where the number after word k starts, past a word
// that says how near it is ("to about 2 a week"), or -1.
func (c *clause) numberAfter(k int) int {
	n := k + 1
	if n < c.hi && approximators[c.raw(n)] {
		n++
	}
	if n >= c.hi || c.tok(n).flags&tNumber == 0 {
		return -1
	}
	return n
}

// approximators say how near a number is.
var approximators = toSet(`about around roughly approximately nearly almost like ~`)

// quantityObject is the object of a quantity verb without a subject of
// its own, from word k to a "to" and a number ("raised the rate limit to
// 500"): the bitmap of its words, or 0.
func (c *clause) quantityObject(k int) uint64 {
	if c.subjSpan != 0 || k >= c.hi || c.is(k, wordTo) {
		return 0
	}
	content := false
	for m := k; m+1 < c.hi; m++ {
		t := c.tok(m)
		switch {
		case c.is(m, wordTo):
			if content && c.numberAfter(m) >= 0 {
				return span(k, m)
			}
			return 0
		case t.flags&(fVerb|fConj|fSub|fNeg) != 0 || t.flags&fPrep != 0 && c.raw(m) != "of":
			return 0
		}
		content = content || t.content()
	}
	return 0
}

// quantityVerbs move a quantity, as written ("increased" is an unknown participle).
var quantityVerbs = toSet(`go goes went gone rose risen raised increased decreased climbed grew grown
	jumped bumped lowered reduced doubled halved fell fallen dropped tightened loosened upped trimmed`)

// lookupPred finds the longest predicate key at verb v: its canonical stem
// followed by up to three words. It returns the number of tokens used.
func (c *clause) lookupPred(v int) (best *predicate, n int) {
	lx := defaultLexicon()
	h := c.tok(v).hash // of its stem, as the filters are
	if !lx.predShapes[4].has(h) {
		return nil, 0
	}
	key := append(make([]byte, 0, 48), c.stem(v)...)
	for m := 0; m <= 3 && v+m < c.hi; m++ {
		if m > 0 {
			key = append(append(key, ' '), c.raw(v+m)...)
		}
		if !lx.predShapes[m].has(h) {
			continue
		}
		if p := lx.preds[string(key)]; p != nil {
			best, n = p, m+1
		}
	}
	return best, n
}

// readValue reads the value from k: articles, negation and (after a copula)
// a leading preposition are skipped, then the value runs up to the first
// preposition or conjunction; the rest of the clause qualifies it. A value
// of coordinated words ("chess or poker") keeps its conjuncts apart.
func (c *clause) readValue(k int, copula bool) {
	j := k
	for k < c.hi {
		f := c.tok(k).flags
		if f&(fDet|fNeg|fSelf) != 0 || f&fStop != 0 && f&(fPrep|fConj) == 0 || copula && c.verb < 0 && f&fPrep != 0 && k == j {
			c.roles[rChain] |= 1 << k
			k++
			continue
		}
		break
	}
	v0 := k
	for k < c.hi && c.tok(k).flags&(fPrep|fSub) == 0 && (c.tok(k).flags&fConj == 0 || c.conjunct(k)) {
		k++
	}
	c.roles[rVal] |= span(v0, k)
	c.roles[rQual] |= span(k, c.hi)
	c.valIdx = span(v0, k)
	c.splitConjuncts(v0, k)
	// "as (the) main editor", "as a backend engineer".
	for m := k; m < c.hi; m++ {
		if c.is(m, wordAs) && !(m+1 < c.hi && c.raw(m+1) == "well") {
			c.asIdx = c.phrase(m + 1)
			break
		}
	}
}

// conjunct reports whether the conjunction at k joins two words of one value
// ("chess or poker", "Go, Python") rather than ending it.
func (c *clause) conjunct(k int) bool {
	return k+1 < c.hi && c.tok(k+1).content() && c.tok(k+1).flags&fVerb == 0
}

// splitConjuncts records the conjuncts of a coordinated value.
func (c *clause) splitConjuncts(lo, hi int) {
	var cur uint64
	for k := lo; k < hi; k++ {
		if c.tok(k).flags&fConj != 0 {
			c.alts = append(c.alts, cur)
			cur = 0
			continue
		}
		cur |= 1 << k
	}
	if len(c.alts) > 0 {
		c.alts = append(c.alts, cur)
	}
}

// phrase returns the words from a (past articles) up to the next
// preposition or conjunction.
func (c *clause) phrase(a int) uint64 {
	for a < c.hi && c.tok(a).flags&fDet != 0 {
		a++
	}
	b := a
	for b < c.hi && c.tok(b).flags&(fPrep|fConj) == 0 {
		b++
	}
	return span(a, b)
}

// byMeans are what "by" introduces besides an agent ("by bike", "by
// default").
var byMeans = toSet(`default hand bike bicycle car train bus plane air boat ferry foot email phone mail
	post text chat cheque check card cash transfer far now then design mistake accident chance night day
	itself himself herself themselves`)

// agent turns a passive with an agent into the active voice: "Traffic from
// the VPN is blocked by the firewall" says what "The firewall blocks traffic
// from the VPN" says. A change verb keeps its subject: in "Jenkins was
// replaced by GitHub Actions" the agent is the new value.
func (c *clause) agent() {
	for m := c.verb + 1; m+1 < c.hi; m++ {
		if c.raw(m) != "by" || byMeans[c.raw(m+1)] || c.tok(m+1).flags&(fTime|fScope|tNumber) != 0 {
			continue
		}
		agent := c.phrase(m + 1)
		if c.replaceAt >= 0 {
			c.tgtIdx = agent
			return
		}
		subj := c.roles[rSubj]
		c.roles[rSubj] = agent
		c.subjSpan = agent
		c.roles[rQual] &^= agent | 1<<m
		c.roles[rVal] |= subj
		c.valIdx |= subj
		return
	}
	c.implicit = c.replaceAt < 0 // "Kafka is used for event streaming": by whom is unsaid
}

// readChange reads what a change verb changes: "switched from X to Y",
// "traded X for Y", "X was replaced with Y", "Y instead of X".
func (c *clause) readChange() {
	// "plan: free -> pro": what is before the arrow changes to what is
	// after it; after a note's key ("vim -> neovim", "version -> 3.12"),
	// when the older statement says so (see temporal).
	for m := c.start + 1; m < c.hi; m++ {
		if c.tok(m).flags&tArrow != 0 && (m == c.noteKey || c.valIdx&(1<<m) != 0) {
			c.fromIdx = c.valIdx & span(c.start, m)
			if m == c.noteKey {
				c.fromIdx = 1 << (m - 1)
			}
			c.tgtIdx = c.phrase(m)
			c.valIdx, c.strong, c.arrow = c.tgtIdx, true, true
			return
		}
	}
	for m := c.start; m+1 < c.hi; m++ {
		if c.tok(m).flags&fStrong != 0 && c.raw(m+1) == "of" {
			c.fromIdx = c.phrase(m + 2) // "Redpanda instead of Kafka"
		}
	}
	if c.replaceAt < 0 {
		c.tgtIdx = c.valIdx
		return
	}
	if b := c.replaceAt + 1; b < c.hi && c.raw(b) == "back" {
		c.valIdx &^= 1 << b // "moved back to GitBook": a particle, no value
		c.roles[rVal] &^= 1 << b
		c.roles[rQual] &^= 1 << b
	}
	into := [2]uint8{wordTo, wordInto}
	switch c.stem(c.replaceAt) {
	case "replace", "swap", "trade":
		into = [2]uint8{wordWith, wordFor}
	case "rebuild", "rewrite": // "rewritten in Go", "rebuilt with Astro"
		into, c.anew = [2]uint8{wordIn, wordWith}, true
		for m := c.replaceAt + 1; m+1 < c.hi; m++ {
			if c.is(m, wordFrom) {
				into = [2]uint8{wordTo, wordTo} // "rewrote the service from Python to Go"
				break
			}
		}
	}
	if c.tgtIdx == 0 {
		c.tgtIdx = c.valIdx
		for m := c.hi - 1; m > c.replaceAt; m-- {
			if c.is(m, into[0]) || c.is(m, into[1]) {
				c.tgtIdx = c.phrase(m + 1)
				break
			}
		}
	}
	// A change verb without a predicate of its own ("switched to Neovim as
	// the main editor") gives its new value as the value.
	if c.valIdx&c.contentMask() == 0 {
		c.valIdx = c.tgtIdx
	}
	for m := c.replaceAt + 1; m < c.hi; m++ {
		if c.is(m, wordFrom) {
			c.fromIdx = c.phrase(m + 1)
			return
		}
		if c.raw(m) == "off" && m == c.replaceAt+1 && m+1 < c.hi && c.tok(m+1).content() {
			// "migrated off MySQL": off is from.
			c.fromIdx = c.phrase(m + 1)
			c.roles[rChain] |= 1 << m
			return
		}
		if c.raw(m) == "out" && c.is(m+1, wordOf) {
			// "moved sessions out of Redis into Postgres": out of is from.
			c.fromIdx = c.phrase(m + 2)
			c.valIdx &^= 1 << m
			c.roles[rVal] &^= 1 << m
			c.roles[rChain] |= 1 << m
			return
		}
	}
	if c.passive && !c.anew {
		c.fromIdx = c.roles[rSubj] // "Jenkins was replaced by ..."
	}
}

// tail is the content words of the clause and of the fragments that
// elaborate it ("Lives in Leeds, Headingley").
func (c *clause) tail() sel { return c.sel(c.coreIdx | c.st.allIdx&span(c.hi, c.end)) }

// contentMask is the bitmap of the clause's content words.
func (c *clause) contentMask() uint64 { return c.flagged(nonContent) ^ span(c.start, c.hi) }

// flagged is the bitmap of the clause's words with one of the flags.
func (c *clause) flagged(flags uint32) uint64 { return c.st.flagged(flags) & span(c.start, c.hi) }

// flagged is the bitmap of the statement's words with one of the flags.
func (st *Statement) flagged(flags uint32) uint64 {
	var m uint64
	for i := range st.toks {
		if st.toks[i].flags&flags != 0 {
			m |= 1 << i
		}
	}
	return m
}

// findSlot decides what the value is a value of: a named predicate, an "as
// the main X" phrase, an age, or a noun slot: the subject of a copula or the
// key of a note, when its head holds one value ("rent", "timeout", "main
// editor") or the value is a number or a name ("cholesterol is 210").
func (c *clause) findSlot() {
	lx := defaultLexicon()
	c.ownerIdx = c.roles[rSubj]
	switch {
	case c.asIdx != 0 && c.tok(bits.TrailingZeros64(c.asIdx)).flags&(fSingleMod|fAttr) != 0:
		// "as the main editor", "as the editor": the slot whatever the verb.
		c.pred, c.slotIdx, c.ownerIdx = lx.nounPred, c.asIdx&^c.flagged(fSingleMod), 0
	case c.age():
		c.pred = lx.agePred
	case c.pred != nil && c.pred.slot == slotResidence && c.valIdx != 0 && c.valueKind() == valueKind:
		// "lives in a studio in Lyon": the place is the value.
		for m := c.start; m+1 < c.hi; m++ {
			if c.roles[rQual]&(1<<m) != 0 && c.raw(m) == "in" {
				c.valIdx = c.phrase(m + 1)
				break
			}
		}
	case c.pred != nil && c.pred.slot == "role":
		c.roleAt()
	case c.copular && c.subjSpan != 0 && c.roleOf():
	case c.pred != nil:
	case c.copular && c.roles[rSubj] != 0 && c.valIdx != 0:
		c.nounSlot()
	}
}

// roleAt reads "works as a data analyst at Flipkart" as "works at Flipkart
// as a data analyst": the employer is the slot, the role says what as
// (see value), so that "Joined Razorpay as a senior data analyst" changes it.
func (c *clause) roleAt() {
	for m := c.verb + 1; m+1 < c.hi; m++ {
		if c.roles[rQual]&(1<<m) == 0 || !(c.raw(m) == "at" || c.is(m, wordFor)) {
			continue
		}
		if at := c.phrase(m + 1); at != 0 && c.tok(bits.TrailingZeros64(at)).flags&tCap != 0 {
			c.asIdx, c.valIdx, c.pred = c.valIdx, at, defaultLexicon().preds["work at"]
		}
		return
	}
}

// age reads "N years old" anywhere in the clause, or a bare number said of
// a person ("I'm 32", "Priya is 29", "turned 35").
func (c *clause) age() bool {
	for i := c.start + 1; i < c.hi; i++ {
		if c.tok(i).word != wordOld {
			continue
		}
		n := i - 1
		if n > c.start && c.stem(n) == "year" {
			n--
		}
		if c.tok(n).flags&tNumber != 0 {
			c.valIdx = 1 << n
			return true
		}
	}
	v := c.valIdx & c.contentMask()
	if bits.OnesCount64(v) != 1 || c.tok(bits.TrailingZeros64(v)).flags&tNumber == 0 {
		return false
	}
	if c.verb >= 0 && c.stem(c.verb) == "turn" {
		return true // "turned 35"
	}
	if n := bits.TrailingZeros64(v); !c.copular || c.valuePrep() != "" || n > c.start && c.tok(n-1).flags&(fTime|fWhen) != 0 {
		return false // "is in Year 4" is a school year
	}
	subj := c.roles[rSubj] & c.contentMask()
	return subj == 0 || bits.OnesCount64(subj) == 1 && c.tok(bits.TrailingZeros64(subj)).flags&tCap != 0 && c.tok(bits.TrailingZeros64(subj)).flags&fAttr == 0
}

// nounSlot makes the subject of a copula a slot when it holds one value.
// Its head is the last noun before a preposition ("the deploy target for
// the API"); words that only say it is the one ("main", "favourite",
// "monthly") do not name it. A head that names a predicate's slot
// ("employer", "manager", "spouse") is that slot.
func (c *clause) nounSlot() {
	head, words := -1, uint64(0)
	for m := c.roles[rSubj]; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		t := c.tok(i)
		if t.flags&fPrep != 0 && head >= 0 {
			break
		}
		if t.content() && t.flags&fSingleMod == 0 {
			head = i
			words |= 1 << i
		}
	}
	if head < 0 {
		return
	}
	h := c.tok(head)
	raw, stem := c.raw(head), c.stem(head)
	plural := stem != raw && raw[len(raw)-1] == 's' && h.flags&fAttr == 0
	one := h.flags&fAttr != 0 || c.noteKey > 0 || c.nounSubject() || c.nominalValue()
	if !one || plural && !c.numericValue() || c.noteKey == 0 && c.flagged(fSingleMod) == 0 && c.adjectival(bits.TrailingZeros64(c.valIdx)) {
		return // "the car is electric" says how it is, not which car
	}
	if slot, ok := defaultLexicon().nounSlots[stem]; ok {
		c.pred = slot
		c.ownerIdx = c.roles[rSubj] &^ (1 << head) &^ c.flagged(fSingleMod)
		return
	}
	c.pred, c.slotIdx = defaultLexicon().nounPred, c.roles[rSubj]&^c.flagged(fSingleMod)
}

// nominalValue: a number, a name or a definite description, not an
// adjective ("the API is stable") or a kind ("is a vegetarian").
func (c *clause) nominalValue() bool {
	lo := bits.TrailingZeros64(c.valIdx)
	for i := lo; i < c.hi && c.valIdx&(1<<i) != 0; i++ {
		t := c.tok(i)
		if t.flags&(tNumber|tCap) != 0 || c.raw(i) == "the" && i == lo {
			return true
		}
	}
	return c.bareName(lo)
}

// bareName: "the linter is eslint" names which one, as a capitalised name
// would: a lone word, no verb or time, after the copula of a definite
// subject, that is not adjectival.
func (c *clause) bareName(lo int) bool {
	return c.tok(c.start).flags&fDet != 0 && c.lone(lo) && !c.adjectival(lo) && c.tok(lo).flags&(fVerb|fTime|fScope) == 0 && len(c.raw(lo)) >= 3
}

// lone reports a value that is the one content word at lo.
func (c *clause) lone(lo int) bool {
	return c.valIdx&c.contentMask() == 1<<lo && lo == bits.TrailingZeros64(c.valIdx)
}

// adjectival reports a lone value word that says how the subject is rather
// than which one it is: a word of an opposite pair, or an adjective (or
// participle, or adverb) by its form ("stable", "broken", "electric").
func (c *clause) adjectival(lo int) bool {
	t := c.tok(lo)
	if !c.lone(lo) || t.flags&(tNumber|tCap) != 0 || colours[c.raw(lo)] {
		return false // a colour is a value of its own kind (see valueKind)
	}
	return t.ant != 0 || endsIn(c.raw(lo), adjectiveEndings) && !endsIn(c.raw(lo), nounEndings)
}

func endsIn(w string, suffixes []string) bool {
	return slices.ContainsFunc(suffixes, func(suffix string) bool { return strings.HasSuffix(w, suffix) })
}

// adjectiveEndings are the suffixes that make English adjectives (and
// participles and adverbs, which say how rather than which); nounEndings
// those of nouns that end like them (memory, salary, biology, security,
// latency, chemistry). -al, -ent, -ant make nouns as often as adjectives
// (hospital, student, assistant).
var adjectiveEndings, nounEndings = strings.Fields(`able ible ful less ous ive ic ish y ed en ing ly ese`),
	strings.Fields(`ory ary ogy ity ncy acy try omy phy`)

func (c *clause) numericValue() bool { return c.valIdx&c.flagged(tNumber) != 0 }

// markers sets negation parity and the change, addition and irrealis
// markers of the clause.
func (c *clause) markers() {
	neg := c.cease
	for i := c.start; i < c.hi; i++ {
		t := c.tok(i)
		f := t.flags
		w := c.raw(i)
		if f&fNeg != 0 && w != "nor" && !(t.word == wordNo && i+1 < c.hi && c.raw(i+1) == "matter") {
			neg = !neg
		}
		c.now = c.now || f&fNow != 0 || w == "these" && i+1 < c.hi && c.raw(i+1) == "days" ||
			t.word == wordAs && f&fStop != 0 && f&fPrep == 0 // "as of March" (see markTime)
		c.strong = c.strong || f&fStrong != 0
		c.addAdv = c.addAdv || f&fAddAdv != 0 || t.word == wordAs && i+1 < c.hi && c.raw(i+1) == "well"
		c.irreal = c.irreal || f&fIrreal != 0 && f&fAdv != 0
	}
	c.negated = neg
	c.irreal = c.irreal || c.underWay()
}

// underWay reports a change in the present progressive ("is migrating the
// backend to FastAPI", "they're currently moving to Leeds", a note's
// "Moving from Datadog to Grafana"): under way, not done, so the older
// value still holds, as it does against a plan.
func (c *clause) underWay() bool {
	if c.replaceAt > c.start && c.raw(c.replaceAt-1) == "being" {
		return true // "Deploy is being moved to Fly.io"
	}
	if c.replaceAt < c.start || !strings.HasSuffix(c.raw(c.replaceAt), "ing") {
		return false
	}
	if c.replaceAt == c.start {
		return true // a note, no subject before it: "Moving from Datadog to Grafana Cloud"
	}
	for i := c.replaceAt - 1; i >= c.start; i-- {
		switch f := c.tok(i).flags; {
		case f&fCopula != 0:
			return f&fPast == 0
		case f&(fAdv|fNow) == 0:
			return false
		}
	}
	return false
}

// sets computes the word sets the signals compare.
func (c *clause) sets() {
	content, r := c.contentMask(), &c.roles
	c.scopeIdx = c.flagged(fScope) & (r[rQual] | r[rChain] | r[rSubj])
	c.whenIdx = c.flagged(fWhen)
	c.subjIdx = content & r[rSubj]
	c.predIdx = content & (r[rChain] | r[rVerb] | r[rVal] | r[rQual])
	c.objIdx = content & (r[rVal] | r[rQual])
	c.coreIdx = c.subjIdx | c.predIdx
	c.valIdx &= content
	c.asIdx &= content
	c.slotIdx &= content
	c.ownerIdx &= content
	c.fromIdx &= content
	c.tgtIdx &= content
	for k := range c.alts {
		c.alts[k] &= content
	}
}

// headRoles are roles one holds at a time of a thing that has one: "Per
// Holm is CFO of Lindqvist Bygg" says who the CFO of Lindqvist Bygg is.
var headRoles = toSet(`ceo cfo cto coo cio ciso cmo chair chairman chairwoman chairperson president principal
	treasurer secretary captain mayor headmaster headmistress`)

// roleOf reads a copula whose value is a role one holds of a thing ("is
// CFO of Lindqvist Bygg", "is the chair of the board") as that role's
// slot, whose value is the subject: someone else in it is a change.
func (c *clause) roleOf() bool {
	lo := bits.TrailingZeros64(c.valIdx)
	if c.valIdx == 0 || !headRoles[c.raw(lo)] || !c.is(lo+1, wordOf) {
		return false
	}
	end := lo + 2
	for end < c.hi && c.tok(end).flags&(fPrep|fConj|fSub) == 0 && (end == lo+2 || c.tok(end).flags&tBreak == 0) {
		end++
	}
	c.pred, c.slotIdx, c.valIdx, c.ownerIdx, c.holder = defaultLexicon().nounPred, span(lo, end), c.roles[rSubj], 0, true
	return true
}
