package heuristics

import (
	"strings"
)

// Token roles within a clause, as bitmaps of the statement's tokens.
const (
	rSubj  = iota // before the verb: who or what the clause is about
	rChain        // auxiliaries, negation, markers, particles of the predicate
	rVerb         // the main verb
	rVal          // the value: the object up to the first preposition
	rQual         // the rest of the clause: qualifiers
	nRoles
)

// clause is one assertion of a statement, read as a frame: subject, verb
// chain, predicate, value and slot, with the markers the signals need. Its
// word sets are bitmaps of the statement's tokens.
type clause struct {
	st                *Statement
	start, hi, end    int // the clause is [start, hi), its fragments [hi, end)
	roles             [nRoles]uint64
	subjSpan          uint64 // the subject as written; 0 when the clause has none of its own
	verb, replaceAt   int    // the main verb and the change verb ("switched"), -1 when none
	pred              *predicate
	valIdx, asIdx     uint64 // content words of the value and of an "as ..." phrase
	slotIdx, ownerIdx uint64 // a noun slot's words; whose slot it is (the subject, or "Marco" of "Marco's wife")
	fromIdx, tgtIdx   uint64 // a change's old and new values ("from X to Y")
	alts              []uint64
	copular, passive  bool
	linking           bool   // the main verb is a linking verb (see linkingVerbs)
	implicit          bool   // a passive without an agent: anyone may be the subject of its active
	negated, cease    bool   // an odd number of negations; one of them a cessation (quit, used to)
	past, irreal      bool   // history ("lived in"); a plan or a wish
	perfect           bool   // the chain has "have" before a participle ("has lived")
	addAdv, addVerb   bool   // "also", "too"; "started"
	now, strong       bool   // "now", "currently"; "instead" (or an arrow)
	arrow             bool   // the value changes by an arrow ("free -> pro")
	anew              bool   // the change makes its subject anew ("was rewritten in Go"): it is not what changes
	person            uint8  // the person of a subject pronoun: personFirst ("i"), personThird ("she"), personNone
	holder            bool   // the value is the subject, who holds a role of a thing ("is CFO of Acme", see roleOf)
	subjIdx, predIdx  uint64 // content words of the subject and of the rest of the clause
	objIdx, coreIdx   uint64 // the value and qualifiers; subject and predicate
	scopeIdx, whenIdx uint64 // recurring scopes ("on Fridays"); the time anchor ("until next year")
	noteKey           int    // where the value of a "key: value" note starts, 0 when the clause is no note
}

// readClause reads the segment as a clause into c, or returns false for a
// fragment without a verb (the first segment of a statement is a clause
// whatever it holds: "Vegetarian since 2015").
func (st *Statement) readClause(c *clause, seg segment, first bool) bool {
	*c = clause{st: st, start: seg.lo, hi: seg.hi, end: seg.end, verb: -1, replaceAt: -1}
	j, copula, aux := 0, false, false
	if seg.note {
		// "timezone: CET" is "timezone is CET".
		c.roles[rSubj] = span(seg.lo, seg.kv)
		c.subjSpan = c.roles[rSubj]
		c.noteKey = seg.kv
		j, copula = seg.kv, true
		j, _, aux = c.chain(j, true)
	} else {
		i := c.findSubject()
		if i < 0 {
			if !first || !st.hasContent(seg.lo, seg.hi) {
				return false
			}
			i = seg.lo // no verb at all ("Vegetarian since 2015"): all object
		}
		j, copula, aux = c.chain(i, false)
	}
	c.copular = copula && c.verb < 0
	c.findFrame(j, copula, aux)
	c.markers()
	return true
}

func (c *clause) tok(i int) *token { return &c.st.toks[i] }

// raw and stem are the strings of token i (see token).
func (c *clause) raw(i int) string  { return c.st.raw(c.tok(i)) }
func (c *clause) stem(i int) string { return c.st.stem(c.tok(i)) }

// is reports whether token i of the clause is the named word w (wordTo...).
func (c *clause) is(i int, w uint8) bool { return i >= c.start && i < c.hi && c.tok(i).word == w }

// findSubject marks the tokens before the verb chain as the subject and
// returns where the chain starts, or -1 when the clause has no verb.
func (c *clause) findSubject() int {
	st := c.st
	i := c.start
	for i < c.hi && !st.verbal(i, c.hi) {
		i++
	}
	if i == c.hi {
		i = c.verbByForm(c.start+1, c.hi)
		if i < 0 {
			return -1
		}
	} else if st.toks[i].flags&verbalFlags == fVerb && strings.HasSuffix(c.raw(i), "ed") && c.verbByForm(i-1, i) == i-1 {
		i-- // "The service retries failed requests": "failed" says which requests
	}
	c.roles[rSubj] = span(c.start, i)
	for k := c.start; k < i; k++ {
		if st.toks[k].content() || st.toks[k].flags&fSelf != 0 {
			c.subjSpan = c.roles[rSubj]
		}
	}
	return i
}

// verbByForm finds the verb of a clause whose verb the lexicon does not
// know, by its form: an -s word after a subject that starts like a noun
// phrase, before its object ("The manager approves...", "Sam reviews...",
// "The service retries failed requests") or ending a clause of three words
// or more ("The cluster autoscales").
//
// It looks at tokens [lo, hi) and marks the verb it finds.
func (c *clause) verbByForm(lo, hi int) int {
	first := c.tok(c.start)
	if first.flags&(fDet|fSelf|tCap) == 0 || lo <= c.start {
		return -1
	}
	for k := lo; k < hi && k < c.start+5; k++ {
		t := c.tok(k)
		if t.flags&(fPrep|fConj) != 0 {
			return -1
		}
		r := c.raw(k)
		if t.flags&nonContent == 0 && t.flags&tNumber == 0 && len(r) > 3 && strings.HasSuffix(r, "s") &&
			!strings.HasSuffix(r, "ss") && !strings.HasSuffix(r, "us") && !strings.HasSuffix(r, "is") &&
			(k > c.start+1 || first.flags&fDet == 0) && (k+1 < c.hi && c.tok(k+1).flags&(fConj|fSub|tBreak) == 0 || k+1 == c.hi && k > c.start+1) {
			t.flags |= fVerb
			return k
		}
	}
	return -1
}

// verbalFlags start the verb chain.
const verbalFlags = fVerb | fCopula | fAux | fNeg | fCease | fReplace | fAddVerb | fIrreal | fUsed | fNow | fStrong | fAdv

// verbal reports whether token i is part of a verb chain (that ends before
// end). A verb form that is really a noun ("Email is...", "Team lead
// is...", "Commute takes...") is not: it is followed, across nouns, by a
// copula or auxiliary, or it names an attribute and a verb follows.
func (st *Statement) verbal(i, end int) bool {
	f := st.toks[i].flags
	if f&verbalFlags == 0 {
		return false
	}
	if f&(verbalFlags&^fVerb) != 0 {
		if f&(fAdv|fNow) != 0 && f&(fNeg|fIrreal) == 0 && i+1 < end && !st.verbal(i+1, end) {
			return false // "about", "around", "nowadays I", "monthly report": not a verb chain
		}
		return true
	}
	// A plain verb form: noun reading? After an article or a preposition
	// it is a noun ("with work", "the plan"); before a copula or an
	// auxiliary, across nouns, too ("Email is", "Code review is"); and a
	// noun that names an attribute, or a base form that starts the clause,
	// is one before an inflected verb ("Commute takes", "Lease ends on").
	if i > 0 && st.toks[i-1].flags&(fDet|fPrep) != 0 && st.toks[i-1].word != wordTo {
		return false
	}
	t := &st.toks[i]
	for k := i + 1; k < end && k <= i+3; k++ {
		n := &st.toks[k]
		inflected := st.raw(n) != st.stem(n) && (strings.HasSuffix(st.raw(n), "s") || n.flags&fPast != 0)
		switch {
		case n.flags&(fCopula|fAux|fReplace|fCease) != 0:
			return false // "Email provider changed", "Email stopped"
		case k <= i+2 && inflected && n.content() && (f&fAttr != 0 || st.raw(t) == st.stem(t) && (i == 0 || t.flags&tBreak != 0) && k+1 < end && st.toks[k+1].flags&(fPrep|fDet|tNumber) != 0):
			return false
		case !n.content() || n.flags&fVerb != 0 && st.raw(n) != st.stem(n):
			return true
		}
	}
	return true
}

// chain walks the verb chain from i: auxiliaries, negation, markers and
// change or cessation verbs, up to the main verb. It returns the first
// token after the chain (the object, or the main verb's next token), and
// whether a copula or an auxiliary was seen.
func (c *clause) chain(i int, copula bool) (next int, cop, aux bool) {
	// After the copula of a noun slot's frame ("Favourite movie is ...",
	// "Timezone is ..."), the value comes whatever the class of its words:
	// "Favourite sport is cycling", "Favourite movie is Her" or "Ran".
	slot := c.nounSubject()
	j := i
	for ; j < c.hi; j++ {
		t := c.tok(j)
		if slot && copula && !aux && t.flags&tCap != 0 {
			// A capitalised word there is a name, a title: not a
			// function word ("Her", "May", "No Country for Old Men").
			t.flags &^= nonContent | fTime
			t.word = wordNone
			return j, copula, aux
		}
		if n, ok := c.chainWord(j, &copula, &aux); ok {
			j += n
			continue
		}
		if t.flags&fReplace != 0 {
			c.replaceAt, c.verb = j, j
			c.roles[rVerb] |= 1 << j
			c.passive = copula && c.st.participle(j) ||
				// A headline's passive: "Prisma replaced by Drizzle".
				!copula && !aux && j > c.start && c.st.participle(j) && (c.is(j+1, wordWith) || c.raw(min(j+1, c.hi-1)) == "by")
			return j + 1, copula, aux
		}
		if t.flags&(fVerb|fCease) != 0 || copula && t.flags&nonContent == 0 && strings.HasSuffix(c.raw(j), "ed") && j+1 < c.hi && c.tok(j+1).flags&fPrep != 0 {
			t.flags |= fVerb // a participle the lexicon does not know: "is forwarded to"
			if slot && copula && !aux && !(j+1 < c.hi && c.tok(j+1).flags&fPrep != 0) {
				// "Favourite sport is golf": not a verb but the value
				// ("Office is based in Berlin" keeps its predicate).
				return j, copula, aux
			}
			c.verb = j
			c.roles[rVerb] |= 1 << j
			c.passive = copula && c.st.participle(j)
			t.flags &^= fUsed // "is used on every device": the verb, not "used to"
			return j + 1, copula, aux
		}
		break
	}
	return j, copula, aux
}

// chainWord takes token j into the verb chain when it belongs there, and
// returns how many tokens besides it it took.
func (c *clause) chainWord(j int, copula, aux *bool) (int, bool) {
	t := c.tok(j)
	f := t.flags
	take := func(n int) (int, bool) {
		c.roles[rChain] |= span(j, j+n+1)
		return n, true
	}
	switch {
	case f&fNeg != 0:
		*copula = *copula || f&fCopula != 0
		return take(0)
	case f&fUsed != 0 && c.is(j+1, wordTo):
		c.cease = true
		return take(1)
	case f&fCease != 0 && t.word == wordGive:
		if c.is(j+1, wordUp) {
			c.cease = true
			return take(1)
		}
		return 0, false // an ordinary "give"
	case f&fCease != 0 && !(c.is(j+1, wordTo) && j+2 < c.hi && c.tok(j+2).flags&tNumber != 0):
		c.cease = true // but "dropped to 10" is a quantity (see quantityChange)
		return take(0)
	case f&fAddVerb != 0 && !(j+1 < c.hi && c.tok(j+1).flags&fPrep != 0):
		c.addVerb = true // but "school starts at 8:15" is a verb with its slot
		return take(0)
	case f&fIrreal != 0 && f&fAdv == 0 && !(t.word == wordGoing && !(c.is(j+1, wordTo) && j+2 < c.hi && c.tok(j+2).flags&fVerb != 0)):
		c.irreal = true
		return take(0)
	case f&fCopula != 0:
		*copula = true
		c.past = c.past || f&fPast != 0
		return take(0)
	case f&fAux != 0:
		*aux = true
		return take(0)
	case f&(fAdv|fNow|fStrong|fAddAdv|fWhen) != 0 || t.word == wordTo:
		return take(0)
	case c.irreal && (t.word == wordOf || c.raw(j) == "about") && j+1 < c.hi && c.tok(j+1).flags&(fVerb|fReplace|fCease) != 0:
		return take(0) // "thinking of switching", "thinking about selling": the plan's verb follows
	case f&fLight != 0 && j+1 < c.hi && c.st.participle(j+1):
		*aux = true // "has been", "had given up", "got engaged"
		c.perfect = c.perfect || haveForms[c.raw(j)]
		return take(0)
	}
	return 0, false
}

// nounSubject reports whether the subject names a one-value noun slot
// ("favourite movie", "rent", "manager").
func (c *clause) nounSubject() bool { return c.roles[rSubj]&c.flagged(fAttr|fSingleMod) != 0 }

// participle reports a past participle or "been" after have/get.
func (st *Statement) participle(i int) bool {
	t := &st.toks[i]
	if t.flags&fCopula != 0 {
		return true
	}
	if t.flags&(fVerb|fCease) == 0 {
		return false
	}
	r := st.raw(t)
	return t.flags&fPast != 0 || r != st.stem(t) && len(r) > 3 && (strings.HasSuffix(r, "ed") || strings.HasSuffix(r, "en"))
}
