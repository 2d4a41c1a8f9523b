package heuristics

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Input is one attribute as the heuristics see it.
type Input struct {
	Content   string
	CreatedAt time.Time // zero when unknown
	Kind      string    // "attribute" (also when empty) or "constraint"
	// Aspect is the name of the aspect the agent's classifier put the
	// attribute in ("home city", "hobbies"), "" when unknown: what the
	// statements are about, and whether that holds one value or many.
	Aspect string
}

// Statement is an analysed attribute: its words and the clauses they make.
// It is immutable once Analyze returns and safe for concurrent use.
type Statement struct {
	created    time.Time
	asp        aspect // what its aspect's name says (see aspect)
	constraint bool
	failed     string // why the analysis failed (see Failure), "" when it did not
	text       string // the strings of the tokens
	toks       []token
	clauses    []clause
	allIdx     uint64 // every content word, clauses and fragments alike
	// logKey and logDate: a note keyed by a record and its date
	// ("restore test 2024-06-10: ..."), the key's other words and the
	// date; "" when it is none (see datedRecords).
	logKey, logDate string
	// first is room for the first clause: most statements have one, which
	// then costs no allocation of its own (a second moves them out).
	first [1]clause
}

// Token indexes fit a bitmap.
var _ [64 - maxTokens]struct{}

// defaultLexicon is the read-only word table shared by every analysis. It is
// built once, on first use (a command that decides nothing does not pay
// for it), from literals, and never modified.
var defaultLexicon = sync.OnceValue(newLexicon)

// scratch is the working memory of an analysis, reused through scratchPool
// (so analyses may run concurrently, each with its own): a statement's
// tokens are read into it and copied out at their exact size once the
// analysis has marked them, and BlockKeys collects its keys in it.
type scratch struct {
	toks            [maxTokens]token
	text            []byte
	segs            []segment
	anchors, probes []Key
	seen            [256]seenKey // appendDistinct's set
	gen             uint32
	// The last aspect's name read, and what it says: a sweep analyses
	// the statements of one aspect one after another.
	aspectName string
	aspect     aspect
}

// seenKey is a slot of appendDistinct's set: a key, current when its
// generation is the scratch's.
type seenKey struct {
	key Key
	gen uint32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Prepare builds the word tables every analysis reads, which the first
// analysis otherwise builds (some tens of milliseconds): a caller about to
// read what it will analyse starts it alongside (go Prepare()).
func Prepare() { defaultLexicon() }

// Analyze prepares an attribute for many decisions.
func Analyze(in Input) *Statement {
	return Reanalyze(nil, in)
}

// Reanalyze is Analyze in the memory of st, a statement that its caller
// no longer uses (nil: new memory). What st's analysis gave before (its
// keys, its decisions) stays valid; st itself becomes the new statement.
// A pass that analyses a million attributes for their blocking keys, and
// drops each analysis once it has them, reuses one statement per goroutine.
func Reanalyze(st *Statement, in Input) *Statement {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	var toks []token
	if st == nil {
		st = new(Statement)
	} else {
		toks = st.toks[:0]
	}
	defer contain(func(why string) {
		*st = Statement{created: in.CreatedAt, constraint: isConstraint(in.Kind), failed: why}
	})
	if in.Aspect != sc.aspectName {
		sc.aspectName, sc.aspect = in.Aspect, defaultLexicon().readAspect(in.Aspect)
	}
	*st = Statement{created: in.CreatedAt, constraint: isConstraint(in.Kind), asp: sc.aspect}
	st.toks, sc.text = tokenize(sc.toks[:0], sc.text[:0], in.Content, defaultLexicon())
	st.text = string(sc.text)
	sc.segs = st.read(sc.segs[:0])
	// The statement keeps its tokens, not the scratch's (make and copy:
	// one allocation of the exact size, not zeroed first).
	if cap(toks) >= len(st.toks) {
		toks = toks[:len(st.toks)]
	} else {
		toks = make([]token, len(st.toks))
	}
	copy(toks, st.toks)
	st.toks = toks
	st.logKey, st.logDate = st.logEntry()
	return st
}

// Failure says why the analysis of the statement failed, or "" when it did
// not. A failure is a bug in this package that some content reaches: the
// statement then reads as nothing, its keys meet no other statement's, and
// every decision with it is blocked (BlockedFailure), so that one statement
// never stops a pass nor decides anything.
func (st *Statement) Failure() string { return st.failed }

// contain recovers a panic of the analysis or a decision and hands failed
// what it was; it must be deferred directly.
func contain(failed func(why string)) {
	if p := recover(); p != nil {
		failed(fmt.Sprintf("heuristics failed: %v", p))
	}
}

// read marks the statement's tokens and reads its clauses; segs is room for
// its segments, returned for reuse.
func (st *Statement) read(segs []segment) []segment {
	st.markTime()
	st.nounReadings()
	var subj uint64 // the subject a clause without one shares with the clause before
	segs = st.segments(segs, st.reported())
	st.clauses = st.first[:0]
	for i, seg := range segs {
		// A clause is read in the place it is kept (a clause is 248 bytes:
		// no copies); a fragment is dropped again.
		st.clauses = append(st.clauses, clause{})
		c := &st.clauses[len(st.clauses)-1]
		if !st.readClause(c, seg, i == 0) {
			st.clauses = st.clauses[:len(st.clauses)-1]
			continue
		}
		c.sets()
		prev := len(st.clauses) > 1 // a clause before this one
		if c.subjSpan == 0 && c.start > 0 && prev && st.toks[c.start].flags&tFull == 0 {
			// "Left Acme and joined Globex": the subject carries over.
			c.subjIdx = subj
			c.coreIdx |= subj
			if c.slotIdx == 0 {
				c.ownerIdx = subj
			}
		}
		if prev && c.strong && c.fromIdx == 0 {
			// "Stopped wearing the Apple Watch; uses a Garmin instead":
			// instead of what the clause before ended, also under a
			// report ("shared that she stopped using Duolingo; ...").
			c.fromIdx = st.clauses[len(st.clauses)-2].ended()
		}
		c.person = c.subjectPerson()
		subj = c.subjIdx
	}
	for i := range st.toks {
		if st.toks[i].content() {
			st.allIdx |= 1 << i
		}
	}
	return segs
}

// raw and stem are token t's lowercased surface form and its stem.
func (st *Statement) raw(t *token) string  { return st.text[t.raw.lo:t.raw.hi] }
func (st *Statement) stem(t *token) string { return st.text[t.stem.lo:t.stem.hi] }

func isConstraint(kind string) bool {
	switch kind {
	case "", "attribute":
		return false
	case "constraint":
		return true
	}
	return strings.EqualFold(strings.TrimSpace(kind), "constraint")
}

func (t *token) content() bool { return t.flags&nonContent == 0 }

// segment is a run of tokens that may be a clause: [lo, hi), then a tail of
// fragments that elaborate it but are not compared ("Lives in Berlin, near
// Tempelhof"). note is set for a "key: value" note, whose key ends at kv.
type segment struct {
	lo, hi, end int
	note        bool
	kv          int
}

// segments splits the statement into clauses: at sentence punctuation; at
// a comma, a coordinator (and, but, so, then) or a subordinator (because,
// although) when a verb follows; a run without a verb after a comma is a
// fragment of the clause before, and a subordinate clause is left out. A
// leading "key:" makes the statement a note ("timezone: CET").
//
// The statement starts at lo: the words before a reported clause are left
// out (see reported).
func (st *Statement) segments(out []segment, lo int) []segment {
	n := len(st.toks)
	if n == 0 {
		return out
	}
	cur := segment{lo: lo, kv: st.noteKey(lo)}
	cur.note = cur.kv > 0
	for i := lo + 1; i < n; i++ {
		t := &st.toks[i]
		if !st.boundary(i, cur) {
			continue
		}
		switch {
		case t.flags&fSub != 0 && !st.isPrepSince(i):
			if cur.hi == 0 {
				cur.hi = i
			}
			i = st.sentenceEnd(i) - 1 // the reason is left out
		case cur.hi == 0 && !st.hasContent(cur.lo, i) && t.flags&tFull == 0:
			// "Actually, ...": markers join the clause they introduce.
		case st.startsClause(i) && !st.coordinatedSubject(cur.lo, i):
			out = append(out, cur.closed(i))
			cur = segment{lo: i}
		case t.flags&tBreak == 0:
			// "chess and sushi": one clause.
		case cur.hi == 0:
			cur.hi = i // a fragment elaborates the clause
		}
	}
	return append(out, cur.closed(n))
}

// closed is the segment ended at token i.
func (s segment) closed(i int) segment {
	if s.hi == 0 {
		s.hi = i
	}
	s.end = i
	return s
}

// boundary reports whether a new clause may start at token i.
func (st *Statement) boundary(i int, cur segment) bool {
	t := &st.toks[i]
	if cur.note && i == cur.kv || t.flags&tArrow != 0 {
		return false // an arrow changes a value within its clause (see readChange)
	}
	w := st.raw(t)
	return t.flags&(tBreak|fSub) != 0 || t.flags&fConj != 0 && (w == "and" || w == "or") ||
		w == "but" || w == "so" || w == "then"
}

// startsClause reports whether the tokens from i (after a coordinator and
// markers) hold a verb within the next few words: a clause, not a list.
func (st *Statement) startsClause(i int) bool {
	if st.toks[i].flags&tFull != 0 {
		return true
	}
	for k := i; k < len(st.toks) && k < i+6; k++ {
		t := &st.toks[k]
		if k > i && t.flags&(tBreak|fConj) != 0 && st.raw(t) != "then" {
			return false
		}
		if st.verbal(k, len(st.toks)) && t.flags&(fAdv|fNow|fStrong|fAddAdv) == 0 {
			return true
		}
	}
	return false
}

// isPrepSince: "since 2019", "since March" are time qualifiers, not reasons.
func (st *Statement) isPrepSince(i int) bool {
	return st.raw(&st.toks[i]) == "since" && i+1 < len(st.toks) && st.toks[i+1].flags&(tNumber|fTime) != 0
}

func (st *Statement) sentenceEnd(i int) int {
	for k := i + 1; k < len(st.toks); k++ {
		if st.toks[k].flags&tFull != 0 {
			return k
		}
	}
	return len(st.toks)
}

func (st *Statement) hasContent(lo, hi int) bool {
	for k := lo; k < hi; k++ {
		if st.toks[k].content() {
			return true
		}
	}
	return false
}

// reportingVerbs introduce what someone said (or found: "turns out"): the
// statement is what they said.
var reportingVerbs = toSet(`said says mentioned mentions told tells noted reported reports explained
	explains confirmed confirms stated states claimed claims replied turns turned`)

// reported returns where the clause reported by a leading reporting verb
// starts ("Said she smokes", "The doctor told me that the knee is fine"),
// or the statement after a label ("Update: ..."), and marks the words
// before it as function words; 0 when the statement does not open so. The
// reporting verb may follow a short subject and take a listener and
// "that"; what follows must be a clause.
func (st *Statement) reported() int {
	n := len(st.toks)
	lx := defaultLexicon()
	if n > 1 && lx.labelWords.has(st.toks[0].hash) && labels[st.raw(&st.toks[0])] {
		st.leaveOut(0, 1) // "Update: timezone = EST", "Note - ..."
		return 1
	}
	for i := 0; i < n && i < 4; i++ {
		if i > 0 && st.toks[i].flags&tBreak != 0 {
			return 0
		}
		if !lx.reportingWords.has(st.toks[i].hash) || !reportingVerbs[st.raw(&st.toks[i])] {
			if st.verbal(i, n) {
				return 0
			}
			continue
		}
		k := i + 1
		if k+1 < n && listeners[st.raw(&st.toks[k])] && (st.raw(&st.toks[k+1]) == "that" || st.toks[k+1].flags&(fSelf|fDet|tCap) != 0) {
			k++ // "told me (that) she", but not "said her knee"
		}
		that := k < n && st.raw(&st.toks[k]) == "that"
		if that {
			k++
		}
		// What follows is a clause with a subject of its own ("she",
		// "the build", "Priya"), not an object ("writes code in Go").
		if k >= n || !that && st.toks[k].flags&(fSelf|fDet|tCap) == 0 || !st.startsClause(k) {
			return 0
		}
		st.leaveOut(0, k)
		return k
	}
	return 0
}

// listeners (and the particle of "turns out") come between a reporting
// verb and its clause.
var listeners = toSet(`me us him her them you out`)

// labels head a note without saying anything themselves.
var labels = toSet(`update note fyi correction edit reminder ps nb btw`)

// noteKey returns where the value of a "key: value" note starts: after a
// colon that follows one to four words, when no verb starts the value
// ("Update: lives in Berlin" is a statement); an arrow is always a note's.
func (st *Statement) noteKey(lo int) int {
	if t := &st.toks[lo]; t.flags&(fReplace|fCease) != 0 && t.flags&tArrow == 0 ||
		t.flags&fVerb != 0 && t.flags&fAttr == 0 && st.raw(t) != st.stem(t) && strings.HasSuffix(st.raw(t), "s") {
		return 0 // "Manages three reports: Tom, Wei and Sofia", "Switched yarn -> pnpm" are clauses
	}
	for k := lo + 1; k < len(st.toks) && k <= lo+4; k++ {
		if t := &st.toks[k]; t.flags&tColon != 0 {
			if t.flags&tArrow == 0 && (t.flags&(verbalFlags&^(fVerb|fAdv)) != 0 || t.flags&fVerb != 0 && !st.participle(k) && st.verbal(k, len(st.toks))) {
				return 0 // "Update: lives in Berlin"; but "Status: employed", "language -> go"
			}
			return k
		}
		if st.toks[k].flags&tBreak != 0 {
			return 0
		}
	}
	return 0
}

// markTime marks the time qualifiers that anchor a statement in time
// ("until next year", "in March", "these days", "for now", "two weeks
// ago"): they are not content, and two statements whose anchors differ are
// about different times. Recurring scopes (on Fridays, in the summer) are
// content and stay.
//
// "As of March" is no anchor: it says the statement holds now; its words
// are left out and the clause reads it as a change marker (see markers).
func (st *Statement) markTime() {
	for i := 0; i < len(st.toks); i++ {
		if n := st.asOf(i); n > 0 {
			st.leaveOut(i, i+n)
			i += n - 1
			continue
		}
		n := st.timeAnchor(i)
		for k := i; k < i+n; k++ {
			st.toks[k].flags |= fWhen
		}
	}
}

// asOf returns the number of tokens of "as of" and the time that follows it
// ("as of March 2025", "as of this spring", "as of today"), 0 when token i
// does not start one.
func (st *Statement) asOf(i int) int {
	if i+1 >= len(st.toks) || st.toks[i].word != wordAs || st.raw(&st.toks[i+1]) != "of" || st.toks[i+1].flags&tBreak != 0 {
		return 0
	}
	k := i + 2
	for k < len(st.toks) && st.toks[k].flags&tBreak == 0 && (st.toks[k].flags&(tNumber|fTime|fScope) != 0 || k == i+2 && asOfWords[st.raw(&st.toks[k])]) {
		k++
	}
	return k - i
}

// timeAnchorWords are the words timeAnchor's switch names.
var timeAnchorWords = toSet(`next last this coming past these for right at by since until till in anymore nowadays lately any`)

// edgeWords say which part of a time: "at the end of May".
var edgeWords = toSet(`end start beginning middle`)

var asOfWords = toSet(`this last early late mid the now today`)

// leaveOut makes tokens [lo, hi) function words: they are neither content
// nor part of a verb chain.
func (st *Statement) leaveOut(lo, hi int) {
	for k := lo; k < hi; k++ {
		st.toks[k].flags = fStop | st.toks[k].flags&(tBreak|tFull|tCap)
	}
}

// timeAnchor returns the number of tokens of the time qualifier that starts
// at token i, 0 when none does. A filter of the words the switch names
// dismisses most tokens before their strings are compared.
func (st *Statement) timeAnchor(i int) int {
	t, next := &st.toks[i], func(k int) *token {
		if i+k < len(st.toks) {
			return &st.toks[i+k]
		}
		return &token{}
	}
	// (A word added to the switch goes into timeAnchorWords too.)
	if defaultLexicon().anchorWords.has(t.hash) { // most tokens are not
		switch w := st.raw(t); w {
		case "next", "last", "this", "coming", "past":
			if next(1).flags&(fTime|fScope) != 0 {
				return 2
			}
		case "these", "for", "right":
			if w == "these" && st.raw(next(1)) == "days" || w != "these" && st.raw(next(1)) == "now" {
				return 2
			}
		case "at", "by":
			if w == "at" && st.raw(next(1)) == "the" && st.raw(next(2)) == "moment" {
				return 3
			}
			if st.raw(next(1)) == "the" && edgeWords[st.raw(next(2))] && st.raw(next(3)) == "of" &&
				(st.isYear(next(4)) || next(4).flags&fTime != 0 && next(4).flags&tNumber == 0) {
				return 5 // "at the end of May", "by the start of 2027"
			}
		case "since", "until", "till", "in":
			if st.isYear(next(1)) || next(1).flags&fTime != 0 && next(1).flags&tNumber == 0 {
				return 2
			}
		case "anymore", "nowadays", "lately":
			return 1
		case "any":
			if st.raw(next(1)) == "more" {
				return 2 // "any more", as "anymore"
			}
		}
	}
	if t.flags&tNumber != 0 && next(1).flags&fTime != 0 && st.raw(next(2)) == "ago" {
		return 3 // no word above is a number
	}
	return 0
}

// nounReadings: a word the lexicon knows as a plan or a wish is a noun
// after an article or another word, unless "to" follows ("the Free plan",
// "a backup plan", but "Sam plans to move").
func (st *Statement) nounReadings() {
	for i := 1; i < len(st.toks); i++ {
		t, prev := &st.toks[i], &st.toks[i-1]
		if t.flags&fIrreal == 0 || t.flags&(fAdv|fAux|tBreak) != 0 || t.word == wordGoing {
			continue
		}
		if (prev.flags&fDet != 0 || prev.content() && prev.flags&fVerb == 0) && !(i+1 < len(st.toks) && st.toks[i+1].word == wordTo) {
			t.flags &^= nonContent
		}
	}
}

func (st *Statement) isYear(t *token) bool {
	w := st.raw(t)
	return t.flags&tNumber != 0 && len(w) == 4 && (strings.HasPrefix(w, "19") || strings.HasPrefix(w, "20"))
}

// coordinatedSubject reports an "and" or "or" at i after a name or two
// and no verb: "ESLint and Prettier replaced by Biome" has one clause,
// whose subject they both are.
func (st *Statement) coordinatedSubject(lo, i int) bool {
	if w := st.raw(&st.toks[i]); (w != "and" && w != "or") || st.toks[i].flags&tBreak != 0 {
		return false
	}
	if i-lo > 3 {
		return false
	}
	name := false
	for k := lo; k < i; k++ {
		t := &st.toks[k]
		if st.verbal(k, i) || t.flags&tBreak != 0 && k > lo || t.flags&(fSelf|fDet) != 0 {
			return false // "Hurt my knee and don't enjoy running": two clauses
		}
		name = name || named(st, t)
	}
	return name
}
