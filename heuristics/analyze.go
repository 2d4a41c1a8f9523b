package heuristics

import (
	"math/bits"
	"strings"
	"time"
)

// Input is one attribute as the heuristics see it.
type Input struct {
	Content   string
	CreatedAt time.Time // zero when unknown
	Kind      string    // "attribute" (also when empty) or "constraint"
}

// Token roles within a statement. Analysis gives each token one role at
// most, and keeps them as a bitmap of tokens per role.
const (
	rSubj  = iota // before the verb: who or what the statement is about
	rChain        // auxiliaries, negation, markers, particles of the predicate
	rVerb         // the main verb
	rVal          // the value: the object up to the first preposition
	rQual         // the rest of the main clause: qualifiers
	nRoles
)

// Statement is an analysed attribute: tokens with their roles, the frame
// (subject, predicate, value) and the markers the signals need. It is
// immutable once Analyze returns and safe for concurrent use.
type Statement struct {
	created time.Time
	toks    []token
	roles   [nRoles]uint64 // the tokens of each role (the tail's are [coreEnd, len(toks)))

	// Token sets the signals compare (see sets.go), as bitmaps of token
	// indexes.
	subjIdx, predIdx, objIdx, coreIdx, allIdx, scopeIdx uint64

	pred       *predicate // when hasPred
	coreEnd    int        // tokens [0, coreEnd) are the main clause
	verb       int        // main verb, -1 when none
	val0, val1 int        // value tokens
	as0, as1   int        // "as ..." phrase after the value
	from0      int        // tokens after "from" in a change ("switched from X to Y"), -1 when none
	from1      int
	slot0      int // tokens naming a noun slot (subject or "as the main editor")
	slot1      int
	replaceAt  int // index of a change verb (switched, moved), -1 when none
	tgt0, tgt1 int // the new value of a change ("switched to Y", "traded X for Y")

	constraint bool
	hasPred    bool
	negated    bool // an odd number of negations, cessations and "used to"
	cease      bool // the negation is a cessation (quit, stopped, gave up, used to)
	past       bool // past tense: history, not a current fact
	irreal     bool // plans, wants, might: not a fact yet
	addAdv     bool // also, too, another, as well
	addVerb    bool // started, began
	now        bool // now, currently
	strong     bool // instead
	hasAnt     bool // an antonym word in the main clause
}

// Token indexes fit a bitmap.
var _ [64 - maxTokens]struct{}

// Analyze prepares an attribute for many decisions. The result does not
// refer to in.Content.
func Analyze(in Input) *Statement {
	lx := defaultLexicon
	st := &Statement{created: in.CreatedAt, constraint: isConstraint(in.Kind), verb: -1, replaceAt: -1, from0: -1, from1: -1}
	st.toks = tokenize(in.Content, lx)
	if len(st.toks) > 0 {
		st.findCore()
		i := st.findSubject()
		j, copula, aux := st.chain(i)
		st.findFrame(j, copula, aux, lx)
		st.markers()
		st.sets()
	}
	return st
}

// defaultLexicon is the read-only word table shared by every analysis. It is
// built once at package initialisation from literals and never modified.
var defaultLexicon = newLexicon()

func isConstraint(kind string) bool {
	switch kind {
	case "", "attribute":
		return false
	case "constraint":
		return true
	}
	return strings.EqualFold(strings.TrimSpace(kind), "constraint")
}

// sets computes the token sets of the statement (see sets.go).
func (st *Statement) sets() {
	var content, ants, scopes uint64
	for k := range st.toks {
		t := &st.toks[k]
		if t.content() {
			content |= 1 << k
		}
		if t.ant != 0 {
			ants |= 1 << k
		}
		if t.flags&fScope != 0 {
			scopes |= 1 << k
		}
	}
	head := span(0, st.coreEnd)
	r := &st.roles
	st.hasAnt = ants&head != 0
	st.scopeIdx = scopes & head & (r[rQual] | r[rChain] | r[rSubj])
	st.allIdx = content
	st.coreIdx = content & head
	st.subjIdx = content & r[rSubj]
	st.predIdx = content & (r[rChain] | r[rVerb] | r[rVal] | r[rQual])
	st.objIdx = content & (r[rVal] | r[rQual])
}

func (t *token) content() bool { return t.flags&nonContent == 0 }

func (st *Statement) rawIs(i int, w string) bool {
	return i >= 0 && i < len(st.toks) && st.toks[i].raw == w
}

// is reports whether token i is the named word w (wordTo...).
func (st *Statement) is(i int, w uint8) bool {
	return i >= 0 && i < len(st.toks) && st.toks[i].word == w
}

// findCore ends the main clause at the first clause break: punctuation, or a
// subordinating word ("because", "but", "since moving"). "since 2019" is a
// preposition, not a clause.
func (st *Statement) findCore() {
	st.coreEnd = len(st.toks)
	for i := 1; i < len(st.toks); i++ {
		t := &st.toks[i]
		if t.flags&tBreak != 0 {
			st.coreEnd = i
			break
		}
		if t.flags&fSub != 0 {
			if t.flags&fPrep != 0 && i+1 < len(st.toks) && st.toks[i+1].flags&tNumber != 0 {
				continue
			}
			st.coreEnd = i
			break
		}
	}

}

// verbalFlags start the verb chain.
const verbalFlags = fVerb | fCopula | fAux | fNeg | fCease | fReplace | fAddVerb | fIrreal | fUsed | fNow | fStrong | fAdv

// findSubject marks the tokens before the verb chain as the subject and
// returns where the chain starts.
func (st *Statement) findSubject() int {
	i := 0
	for i < st.coreEnd && !st.verbal(i) {
		i++
	}
	if i == st.coreEnd {
		// No verb at all ("Vegetarian since 2015"): no subject, all object.
		return 0
	}
	st.roles[rSubj] = span(0, i)
	return i
}

// verbal reports whether token i is part of a verb chain. A verb form that
// is really a noun ("Email is...", "Team lead is...", "Commute takes...") is
// not: it is followed, across nouns, by a copula or auxiliary, or it names an
// attribute and a verb follows.
func (st *Statement) verbal(i int) bool {
	t := &st.toks[i]
	f := t.flags
	if f&verbalFlags == 0 {
		return false
	}
	if f&(verbalFlags&^(fVerb)) != 0 {
		if f&fAdv != 0 && f&fStop != 0 && f&(fNow|fNeg|fIrreal) == 0 && i+1 < st.coreEnd && !st.verbalPlain(i+1) {
			// "about", "around" at the start: not a verb chain.
			return st.toks[i+1].flags&verbalFlags != 0
		}
		return true
	}
	// A plain verb form: noun reading?
	for k := i + 1; k < st.coreEnd && k <= i+3; k++ {
		n := st.toks[k].flags
		if n&(fCopula|fAux) != 0 {
			return false
		}
		if n&fVerb != 0 && n&(fLight|fCopula|fAux) == 0 && f&fAttr != 0 && k == i+1 {
			return false // "commute takes"
		}
		if !st.toks[k].content() || n&fVerb != 0 {
			break
		}
	}
	return true
}

func (st *Statement) verbalPlain(i int) bool { return st.toks[i].flags&verbalFlags != 0 }

// chain walks the verb chain from i: auxiliaries, negation, markers and
// change or cessation verbs, up to the main verb. It returns the first token
// after the chain (the object, or the main verb's next token), and whether a
// copula or an auxiliary was seen.
func (st *Statement) chain(i int) (next int, copula, aux bool) {
	// After the copula of a noun slot's frame ("Favourite movie is ...",
	// "Timezone is ..."), the value comes whatever the class of its words:
	// "Favourite sport is cycling", "Favourite movie is Her" or "Ran".
	slot := st.nounSubject(i)
	j := i
	for ; j < st.coreEnd; j++ {
		t := &st.toks[j]
		if slot && copula && !aux && t.flags&tCap != 0 {
			// A capitalised word there is a name, a title: not a
			// function word ("Her", "May", "No Country for Old Men").
			t.flags &^= nonContent
			t.word = wordNone
			return j, copula, aux
		}
		f := t.flags
		switch {
		case f&fNeg != 0:
			st.roles[rChain] |= 1 << uint(j)
			if f&fCopula != 0 {
				copula = true
			}
			continue
		case f&fUsed != 0 && st.is(j+1, wordTo):
			st.roles[rChain] |= 3 << uint(j)
			st.cease = true
			j++
			continue
		case f&fCease != 0:
			if t.word == wordGive {
				if st.is(j+1, wordUp) {
					st.roles[rChain] |= 3 << uint(j)
					st.cease = true
					j++
					continue
				}
				break // an ordinary "give"
			}
			st.roles[rChain] |= 1 << uint(j)
			st.cease = true
			continue
		case f&fReplace != 0:
			st.replaceAt = j
			st.verb = j
			st.roles[rVerb] |= 1 << uint(j)
			return j + 1, copula, aux
		case f&fAddVerb != 0:
			st.roles[rChain] |= 1 << uint(j)
			st.addVerb = true
			continue
		case f&fIrreal != 0 && f&fAdv == 0 && !(t.word == wordGoing && !(st.is(j+1, wordTo) && j+2 < st.coreEnd && st.toks[j+2].flags&fVerb != 0)):
			st.roles[rChain] |= 1 << uint(j)
			st.irreal = true
			continue
		case f&fCopula != 0:
			st.roles[rChain] |= 1 << uint(j)
			copula = true
			if f&fPast != 0 {
				st.past = true
			}
			continue
		case f&fAux != 0:
			st.roles[rChain] |= 1 << uint(j)
			aux = true
			continue
		case f&(fAdv|fNow|fStrong|fAddAdv) != 0:
			st.roles[rChain] |= 1 << uint(j)
			continue
		case t.word == wordTo:
			st.roles[rChain] |= 1 << uint(j)
			continue
		case f&fLight != 0 && j+1 < st.coreEnd && st.participle(j+1):
			st.roles[rChain] |= 1 << uint(j) // "has been", "had given up", "got engaged"
			aux = true
			continue
		}
		if f&fVerb != 0 {
			if slot && copula && !aux && !(j+1 < st.coreEnd && st.toks[j+1].flags&fPrep != 0) {
				// "Favourite sport is golf": not a verb but the value
				// ("Office is based in Berlin" keeps its predicate).
				return j, copula, aux
			}
			st.verb = j
			st.roles[rVerb] |= 1 << uint(j)
			return j + 1, copula, aux
		}
		break
	}
	return j, copula, aux
}

// nounSubject reports whether the subject, tokens [0, i), names a one-value
// noun slot ("favourite movie", "rent", "manager"), as findSlot reads it.
func (st *Statement) nounSubject(i int) bool {
	for k := 0; k < i; k++ {
		if st.toks[k].flags&(fAttr|fSingleMod) != 0 {
			return true
		}
	}
	return false
}

// participle reports a past participle or "been" after have/get.
func (st *Statement) participle(i int) bool {
	t := &st.toks[i]
	if t.flags&fCopula != 0 {
		return true
	}
	if t.flags&(fVerb|fCease) == 0 {
		return false
	}
	r := t.raw
	return t.flags&fPast != 0 || len(r) > 3 && (strings.HasSuffix(r, "ed") || strings.HasSuffix(r, "en"))
}

// findFrame finds the predicate, the value and the slot, starting after the
// verb chain at j.
func (st *Statement) findFrame(j int, copula, aux bool, lx *lexicon) {
	k := j
	pastCopula := st.past
	if st.verb >= 0 {
		vt := &st.toks[st.verb]
		// Past tense only without auxiliary or copula ("is married" is a
		// state; "lived in" is history), and never for change verbs (a move
		// is news) or "born" (a birthplace does not expire).
		st.past = false
		if st.replaceAt < 0 && vt.stem != "born" {
			if copula || aux {
				st.past = pastCopula
			} else {
				st.past = vt.flags&fPast != 0
			}
		}
		if p, n, ok := st.lookupPred(lx, st.verb); ok {
			st.pred, st.hasPred = p, true
			for m := 1; m < n; m++ {
				st.roles[rChain] |= 1 << uint(st.verb+m)
			}
			k = st.verb + n
		}
	} else if copula && j < st.coreEnd && st.is(j, wordFrom) {
		st.pred, st.hasPred = lx.beFrom, true
		st.roles[rChain] |= 1 << uint(j)
		k = j + 1
	}
	// The value: skip articles, negation and (after a copula) a leading
	// preposition, then read up to the first preposition or conjunction.
	for k < st.coreEnd {
		f := st.toks[k].flags
		if f&(fDet|fNeg) != 0 || (f&fStop != 0 && f&(fPrep|fConj) == 0) || (copula && st.verb < 0 && f&fPrep != 0 && k == j) {
			st.roles[rChain] |= 1 << uint(k)
			k++
			continue
		}
		break
	}
	st.val0 = k
	for k < st.coreEnd && st.toks[k].flags&(fPrep|fConj|fSub) == 0 {
		k++
	}
	st.val1 = k
	st.roles[rVal] |= span(st.val0, k)
	st.roles[rQual] |= span(k, st.coreEnd)
	// "as (the) main editor", "as a backend engineer".
	for m := k; m < st.coreEnd; m++ {
		if !st.is(m, wordAs) || st.rawIs(m+1, "well") {
			continue
		}
		a := m + 1
		for a < st.coreEnd && st.toks[a].flags&fDet != 0 {
			a++
		}
		b := a
		for b < st.coreEnd && st.toks[b].flags&(fPrep|fConj) == 0 {
			b++
		}
		st.as0, st.as1 = a, b
		break
	}
	// The new value of a change: after the last "to", "for", "with" or
	// "into" ("switched from X to Y", "traded X for Y"), else the value.
	st.tgt0, st.tgt1 = st.val0, st.val1
	if st.replaceAt >= 0 {
		into := [2]uint8{wordTo, wordInto}
		switch st.toks[st.replaceAt].stem {
		case "replace", "swap", "trade":
			into = [2]uint8{wordWith, wordFor}
		}
		for m := st.coreEnd - 1; m > st.replaceAt; m-- {
			if st.is(m, into[0]) || st.is(m, into[1]) {
				a := m + 1
				b := a
				for b < st.coreEnd && st.toks[b].flags&(fPrep|fConj) == 0 {
					b++
				}
				st.tgt0, st.tgt1 = a, b
				break
			}
		}
	}
	// A change verb without a predicate of its own ("switched to Neovim as
	// the main editor") gives its new value as the value.
	if st.replaceAt >= 0 && st.val0 == st.val1 {
		st.val0, st.val1 = st.tgt0, st.tgt1
	}
	// "from X (to Y)" after a change verb.
	if st.replaceAt >= 0 {
		for m := st.replaceAt + 1; m < st.coreEnd; m++ {
			if st.is(m, wordFrom) {
				a := m + 1
				b := a
				for b < st.coreEnd && st.toks[b].flags&(fPrep|fConj) == 0 {
					b++
				}
				st.from0, st.from1 = a, b
				break
			}
		}
	}
	st.findSlot(lx)
}

// lookupPred finds the longest predicate key at verb v: its canonical stem
// followed by up to three words. It returns the number of tokens used.
func (st *Statement) lookupPred(lx *lexicon, v int) (*predicate, int, bool) {
	node := lx.predRoots[st.toks[v].stem]
	var best *predicate
	bestN := 0
	for m := 0; node != nil; m++ {
		if node.pred != nil {
			best, bestN = node.pred, m+1
		}
		if m == 3 || v+m+1 >= st.coreEnd {
			break
		}
		node = node.next[st.toks[v+m+1].raw]
	}
	return best, bestN, bestN > 0
}

// findSlot decides what the value is a value of: a named predicate, an
// "as the main X" phrase, an attribute noun in the subject ("rent is"), or an
// age ("is 34 years old").
func (st *Statement) findSlot(lx *lexicon) {
	// "as the main editor" names the slot whatever the verb.
	if st.as0 < st.as1 && st.toks[st.as0].flags&fSingleMod != 0 {
		st.pred, st.hasPred = lx.nounPred, true
		st.slot0, st.slot1 = st.as0, st.as1
		return
	}
	// Age: "N years old" anywhere in the main clause.
	for i := 0; i < st.coreEnd; i++ {
		if st.toks[i].flags&fAge != 0 && i > 0 {
			n := i - 1
			if n > 0 && (st.toks[n].stem == "year") {
				n--
			}
			if st.toks[n].flags&tNumber != 0 {
				st.pred, st.hasPred = lx.agePred, true
				st.val0, st.val1 = n, n+1
				st.slot0, st.slot1 = 0, st.subjectEnd()
				return
			}
		}
	}
	if st.hasPred && st.pred.val != multi {
		st.slot0, st.slot1 = 0, st.subjectEnd()
		return
	}
	// An attribute noun or a one-value modifier in the subject.
	end := st.subjectEnd()
	for i := 0; i < end; i++ {
		if st.toks[i].flags&(fAttr|fSingleMod) != 0 {
			st.pred, st.hasPred = lx.nounPred, true
			st.slot0, st.slot1 = 0, end
			return
		}
	}
	st.slot0, st.slot1 = 0, end
}

func (st *Statement) subjectEnd() int {
	return min(bits.TrailingZeros64(^st.roles[rSubj]), st.coreEnd)
}

// markers sets negation parity and the change, addition and irrealis
// markers of the main clause.
func (st *Statement) markers() {
	neg := st.cease
	for i := 0; i < st.coreEnd; i++ {
		t := &st.toks[i]
		f := t.flags
		if f&fNeg != 0 {
			if t.word == wordNo && st.rawIs(i+1, "matter") {
				continue
			}
			neg = !neg
		}
		if f&fNow != 0 {
			st.now = true
		}
		if f&fStrong != 0 {
			st.strong = true
		}
		if f&fAddAdv != 0 {
			st.addAdv = true
		}
		if f&fIrreal != 0 && f&fAdv != 0 {
			st.irreal = true
		}
		if t.word == wordAs && st.rawIs(i+1, "well") {
			st.addAdv = true
		}
	}
	st.negated = neg
}
