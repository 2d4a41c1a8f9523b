package heuristics

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/supersessiond/supersessiond/antonyms"
)

// Word classes. A word may have several.
const (
	fStop      uint32 = 1 << iota // function word: never content
	fNeg                          // not, no, never, doesn't...
	fAux                          // auxiliary: do, does, will, can, has (before a participle)...
	fCopula                       // is, are, was...
	fPast                         // past form: was, were, had, lived...
	fVerb                         // a known verb form
	fLight                        // a verb that carries no content of its own: be, have, do, get
	fPrep                         // preposition: ends a value
	fConj                         // and, or: ends a value
	fSub                          // because, although, but...: ends the main clause
	fCease                        // quit, stopped, gave (up), left, cancelled: the newer no longer does it
	fReplace                      // switched, migrated, replaced, moved: a change of value
	fStrong                       // instead: an explicit replacement adverb
	fNow                          // now, currently, nowadays: a weak change marker
	fAddVerb                      // started, began: an addition when at the verb
	fAddAdv                       // also, too, another, additionally: an addition anywhere
	fIrreal                       // plans, wants, might, considering: not (yet) a fact
	fAdv                          // adverb skipped in the verb chain: recently, still, usually
	fScope                        // time scope: weekends, mornings, summer
	fSingleMod                    // favourite, main, primary, default: names a one-value slot
	fAttr                         // attribute noun holding one value: rent, timezone, manager
	fUsed                         // "used" (as in "used to")
	fDet                          // article or possessive
	fSelf                         // I, my, user, she, they: the one the memory is about
	fTime                         // a time noun: March, year, week, today
	fWhen                         // part of a time qualifier ("until next year"), set by the analysis
)

// nonContent are the classes that never count as content words.
const nonContent = fStop | fNeg | fAux | fCopula | fLight | fPrep | fConj | fSub | fCease | fReplace |
	fStrong | fNow | fAddVerb | fAddAdv | fIrreal | fAdv | fUsed | fDet | fSelf | fWhen

// entry is what the lexicon knows about one surface form (or stem). (Its
// fields are ordered for size: 32 bytes, two entries to a cache line.)
type entry struct {
	flags uint32
	hash  uint32 // of the stem, which compile resolves
	stem  string // canonical stem, when the algorithmic one would be wrong or a spelling variant
	ant   uint16 // index+1 into lexicon.ants
	word  uint8  // the word's name (wordTo...), for the words the analysis knows by name
	// stemInWord: the stem starts the word ("lives": "live"), so a token
	// takes it from its surface form without reading the stem's bytes.
	stemInWord bool
}

// lexicon is the read-only word table. It is built once, by newLexicon, and
// never written afterwards, so it is safe for concurrent use.
type lexicon struct {
	// index maps every word to its entry in entries. (words is the table
	// while it is built; compile indexes it. A map of small values stays in
	// cache better than one of entries: tokenizing is ~10% faster.)
	index   map[string]uint16
	table   wordTable // index, for the tokenizer
	entries []entry
	words   map[string]entry
	ants    [][]antonyms.Ref // antonym memberships, indexed by entry.ant-1
	pairs   []antonyms.Pair
	// preds maps a predicate's key ("live in", "go to bed at") to it;
	// predShapes filters the lookups of preds before any string is hashed:
	// shape m (0–3) has the bit of every verb (by its stem's hash) that
	// starts a key of m particles, shape 4 of every verb. A clear bit means
	// no such key; a set one, maybe (the map decides).
	preds      map[string]*predicate
	predShapes [5]hashBits
	// Filters in front of word sets the analysis asks about for most
	// tokens, by the hash a token of the word gets (its stem's): a clear
	// bit means the token's word is not in the set.
	labelWords, reportingWords, anchorWords hashBits
	// ruleWords are the words the endings and the plans look up by name
	// (endingWords, pendingWords...).
	ruleWords hashBits
	// Predicates that statements point to besides the table's: "be from",
	// a noun slot ("main editor is", "rent is") and an age.
	beFrom, nounPred, agePred *predicate
	// nounSlots are the nouns that name a predicate's slot: "Employer:
	// Stripe" says what "Works at Stripe" says.
	nounSlots map[string]*predicate
	// entering are the verbs that enter a predicate's slot in an aspect
	// that names it (see entryVerbs).
	entering map[*predicate][]entering
	// family maps the stem hash of a word WordNet derives from another, or
	// another from, to its family's: "allergy" and "allergic" are one
	// (antonyms.Derivations); familyWords filters the lookups.
	family      map[uint32]uint32
	familyWords hashBits
}

// Words the analysis recognises by name (token.word).
const (
	wordNone uint8 = iota
	wordTo
	wordFrom
	wordAs
	wordNo
	wordUp
	wordInto
	wordIn
	wordWith
	wordFor
	wordGoing
	wordGive // gave, give, gives, giving, given
	wordOld  // "old" in "N years old"
	wordOf
)

var namedWords = map[string]uint8{
	"to": wordTo, "from": wordFrom, "as": wordAs, "no": wordNo, "up": wordUp, "into": wordInto, "in": wordIn,
	"with": wordWith, "for": wordFor, "going": wordGoing,
	"old": wordOld, "of": wordOf, "gave": wordGive, "give": wordGive, "gives": wordGive, "giving": wordGive, "given": wordGive,
}

// letterNamed reports a number written with one capital letter glued to it
// that is no multiplier ("3D", "5G", "2FA" is not one letter): a name of
// a kind of thing ("a 3D printer"), not a quantity of days or grams. "4K",
// "5M" and "2B" stay numbers: they may be money.
func letterNamed(word string) bool {
	n := len(word) - 1
	if n < 1 || word[n] < 'A' || word[n] > 'Z' || strings.IndexByte("KMB", word[n]) >= 0 {
		return false
	}
	for i := 0; i < n; i++ {
		if !isASCIIDigit(word[i]) {
			return false
		}
	}
	return true
}

// token makes t the token of a word of the text, with the flags the text
// gives it, and appends its strings to text. The word is lowercased into
// text and looked up from there (m[string(b)] does not allocate).
func (lx *lexicon) token(t *token, word string, flags uint32, text []byte) []byte {
	if isASCIIDigit(word[0]) && !letterNamed(word) {
		flags |= tNumber
	}
	lo := len(text)
	text, h := appendLower(text, word)
	raw := text[lo:]
	*t = token{raw: str{uint16(lo), uint16(len(text))}, flags: flags}
	if i, ok := findWord(&lx.table, raw, h); ok {
		e := &lx.entries[i]
		t.hash, t.flags, t.ant, t.word = e.hash, t.flags|e.flags, e.ant, e.word
		if e.stemInWord {
			t.stem = str{t.raw.lo, t.raw.lo + uint16(len(e.stem))}
			return text
		}
		return t.withStem(text, e.stem)
	}
	s := stem(string(raw))
	hs := fnv1a(s)
	// A plural of a known noun ("timezones", "weekends") is that noun. (The
	// table is only asked about plurals: most unknown words are names.)
	if raw[len(raw)-1] == 's' && s != string(raw) {
		if i, ok := findWord(&lx.table, s, hs); ok {
			e := &lx.entries[i]
			t.hash, t.flags, t.ant = e.hash, t.flags|e.flags, e.ant
			return t.withStem(text, e.stem)
		}
	}
	t.hash = hs
	return t.withStem(text, s)
}

// appendLower appends w, lowercased, to text, and returns the fnv1a hash
// of what it appended.
func appendLower(text []byte, w string) ([]byte, uint32) {
	lo := len(text)
	h := uint32(fnvOffset)
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			lower := strings.ToLower(w) // a word of any script: rare
			return append(text[:lo], lower...), fnv1a(lower)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint32(c)) * fnvPrime
		text = append(text, c)
	}
	return text, h
}

// wordTable finds a word's entry by the word's fnv1a hash, which the
// tokenizer computes as it lowercases the word: open addressing over
// slots that hold the hash and where the word's bytes are, so that a
// lookup hashes nothing and compares bytes only when the hashes are equal.
// (A map from string was a third of tokenizing: hashing the word again,
// then probing.)
type wordTable struct {
	slots []wordSlot // a power of two, at most half full
	words string     // every word's bytes, one after another
}

type wordSlot struct {
	hash  uint32
	off   uint32 // of the word in words
	n     uint16 // the word's length
	entry uint16 // index+1 into lexicon.entries; 0: an empty slot
}

func newWordTable(index map[string]uint16) wordTable {
	size := 16
	for size < 2*len(index) {
		size *= 2
	}
	t := wordTable{slots: make([]wordSlot, size)}
	var b strings.Builder
	for w, e := range index {
		if len(w) > math.MaxUint16 {
			continue // no token is that long (maxInput)
		}
		i := t.slot(fnv1a(w))
		for t.slots[i].entry != 0 {
			i = (i + 1) & uint32(len(t.slots)-1)
		}
		t.slots[i] = wordSlot{hash: fnv1a(w), off: uint32(b.Len()), n: uint16(len(w)), entry: e + 1}
		b.WriteString(w)
	}
	t.words = b.String()
	return t
}

func (t *wordTable) slot(h uint32) uint32 { return h & uint32(len(t.slots)-1) }

// findWord returns the entry of w (bytes or a string), whose fnv1a hash
// is h.
func findWord[W []byte | string](t *wordTable, w W, h uint32) (uint16, bool) {
	for i := t.slot(h); ; i = (i + 1) & uint32(len(t.slots)-1) {
		s := &t.slots[i]
		if s.entry == 0 {
			return 0, false
		}
		if s.hash == h && int(s.n) == len(w) && t.words[s.off:s.off+uint32(s.n)] == string(w) {
			return s.entry - 1, true
		}
	}
}

// withStem gives t the stem s: a prefix of its surface form when s is one
// ("lives": "live"), else s appended to text.
func (t *token) withStem(text []byte, s string) []byte {
	if raw := text[t.raw.lo:t.raw.hi]; len(s) <= len(raw) && string(raw[:len(s)]) == s {
		t.stem = str{t.raw.lo, t.raw.lo + uint16(len(s))}
		return text
	}
	t.stem = str{uint16(len(text)), uint16(len(text) + len(s))}
	return append(text, s...)
}

// valuedness says how many values a predicate holds at once.
type valuedness uint8

const (
	multi    valuedness = iota // speaks, likes, has: different values coexist
	single                     // lives in, works at: a new value replaces the old
	usually                    // drives, attends: usually one value, not always
	category                   // prefers: one value per kind of thing (window vs aisle seat)
)

// predicate is a verb (and particles) with what it says about its values.
type predicate struct {
	display string
	// multiReason explains a multi-valued predicate's non-conflict; built
	// with the table so that deciding never concatenates it.
	multiReason string
	slot        string // predicates sharing a slot compare values (lives in / is based in)
	val         valuedness
	stative     bool // "married to", "based in": a bare participle is a state, not history
	passiveOnly bool // "is called X" names; "calls X" does not
}

// Slots are names: predicates whose slots are equal talk about the same
// thing (lives in / is based in). These are the ones the code names.
const (
	slotResidence = "residence"
	slotEmployer  = "employer"
	slotNickname  = "nickname"
	slotAge       = "age"
	slotNoun      = "noun" // named by nouns ("main editor", "rent"): compared by tokens
)

// originSlots are where something began: a later move, switch or change
// does not undo them (only a correction of the same slot does).
var originSlots = map[string]bool{"birthplace": true, "birthday": true, "hometown": true, "origin": true}

func newLexicon() *lexicon {
	lx := &lexicon{words: make(map[string]entry, 4096), preds: make(map[string]*predicate, 128)}
	for _, c := range wordClasses {
		for _, w := range strings.Fields(c.words) {
			e := lx.words[w]
			e.flags |= c.flags
			lx.words[w] = e
		}
	}
	for _, c := range canonicalStems {
		for _, w := range strings.Fields(c.words) {
			e := lx.words[w]
			e.stem = c.stem
			lx.words[w] = e
		}
	}
	lx.addVerbs()
	lx.addPredicates()
	lx.addAntonyms()
	lx.compile()
	lx.labelWords = lx.filterOf(labels)
	lx.reportingWords = lx.filterOf(reportingVerbs)
	lx.anchorWords = lx.filterOf(timeAnchorWords)
	lx.ruleWords = lx.filterOf(ruleWordSet())
	return lx
}

// wordClasses are the lexicon's word lists, by the classes their words
// belong to. A word may be in several.
var wordClasses = []struct {
	flags uint32
	words string
}{
	{fStop, `a an the this that these those it its what which who whom whose there here then than so
		very really quite just of some any every each all both either neither much many few lot lots bit
		kind sort something anything nothing everything someone anyone everyone thing things am pm per
		etc yet ever even only same own such about up down`},
	{fDet, `a an the my his her their our your its this that these those`},
	{fSelf, `i me my mine myself user users he him his himself she her hers herself they them their
		theirs themselves we us our ours you your yours`},
	{fSelf | fCopula | fLight | fStop, `i'm im you're we're they're she's he's youre theyre`},
	{fSelf | fLight | fVerb, `i've we've they've you've`},
	{fSelf | fIrreal | fStop, `i'll we'll they'll she'll he'll you'll i'd we'd they'd she'd he'd you'd`},
	{fStop | fPrep, `in at on for with as from to by of during since until till near into onto over under
		including excluding except plus via through within without after before around across
		between toward towards against among throughout beside besides behind beyond upon per about`},
	{fStop | fConj, `and or nor & plus`},
	{fStop | fSub, `because although though but while whereas unless whenever since`},
	{fNeg, `not no never nor neither n't nobody none cannot`},
	{fNeg | fAux | fStop, `don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't couldn't
		shouldn't haven't hasn't hadn't mustn't shan't ain't dont doesnt didnt isnt arent wasnt werent
		wont cant couldnt shouldnt havent hasnt hadnt`},
	{fCopula | fLight | fStop, `is are am be been being 's 're 'm`},
	{fCopula | fLight | fStop | fPast, `was were`},
	{fCopula | fLight, `isn't aren't wasn't weren't isnt arent wasnt werent ain't`},
	{fAux | fStop, `do does did will would can could shall should may might must`},
	{fLight | fVerb, `has have having had get gets got getting`},
	{fPast, `had got`},
	{fUsed, `used`},
	{tNumber, `zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty
		fifty hundred thousand half dozen`},
	{fTime, `january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec year years month months week weeks today
		tonight tomorrow yesterday`},
	{fCease, `quit quitting stopped ceased gave give gives giving given left cancelled canceled dropped
		ditched abandoned ended sold rid avoid avoids avoided avoiding`},
	{fReplace, `switched switch switches switching migrated migrate migrates migrating moved move moves
		moving changed change changes changing replaced replace replaces replacing swapped swap swaps
		traded trade trades relocated relocate relocates relocating converted convert transitioned
		upgraded downgraded ported rebuilt rebuild rebuilds rewrote rewritten rewrite rewrites`},
	{fStrong, `instead`},
	{fNow | fAdv, `now currently nowadays presently lately`},
	{fAddVerb, `started start starts starting began begin begins begun beginning added`},
	{fAddAdv | fStop, `also too additionally another addition alongside second`},
	{fIrreal, `plans plan planning planned wants want wanting wanted hopes hope hoping hoped
		might may considering consider considers thinking evaluating
		if wish wishes wished dreams dreaming intends intend intending aims aiming going will would could
		should`},
	{fIrreal | fAdv, `maybe perhaps possibly someday eventually hopefully`},
	{fAdv | fStop, `recently just still always usually often mostly generally typically really actually
		already again anymore longer finally officially mainly primarily regularly normally
		sometimes occasionally rarely seldom frequently constantly definitely probably apparently
		almost nearly about around roughly exactly fully mostly partly totally completely
		once twice weekly monthly yearly annually newly hourly honestly happily previously
		formerly originally entirely`},
	{fScope, `weekend weekends weekday weekdays monday mondays tuesday tuesdays wednesday wednesdays
		thursday thursdays friday fridays saturday saturdays sunday sundays morning mornings afternoon
		afternoons evening evenings night nights summer summers winter winters spring autumn fall
		holiday holidays vacation vacations sometimes occasionally weeknights weeknight mon tue tues wed thu thur
		thurs fri sat sun`},
	{fSingleMod, `favourite favorite main primary default preferred usual current go-to home native
		daily regular everyday`},
	{fAttr, `rent salary pay wage income budget timezone zone birthday age address email e-mail phone
		number name nickname surname manager boss supervisor landlord doctor dentist therapist
		wife husband partner spouse girlfriend boyfriend fiance fiancé fiancee fiancée title role
		position commute bedtime alarm rate weight height mortgage lead editor shell browser
		laptop car city hometown office desk password username handle team employer school major
		ip mentor coach trainer vet pediatrician gym airline bank carrier provider type
		language size timeout version teacher tutor contact license licence image firmware score date
		appointment insurance insurer target destination flight port region limit plan tier status diet
		theme os cache database queue registry runtime domain url branch price fee cost balance
		deadline capacity length duration temperature speed level count occupation job lawyer
		accountant pharmacist hairdresser isp router monitor keyboard phone`},
	{fStop | fPrep, `w`},
}

// canonicalStems are stems that the algorithmic stem would get wrong, and
// spelling variants that compare equal.
var canonicalStems = []struct{ stem, words string }{
	{"have", `i've we've they've you've`},
	{"have", `has have having had`},
	{"get", `get gets got getting`},
	{"do", `do does did`},
	{"favorit", `favourite favorite favourites favorites`},
	{"color", `colour color colours colors`},
	{"flavor", `flavour flavor flavours flavors`},
	{"neighbor", `neighbour neighbor neighbours neighbors`},
	{"theater", `theatre theater`},
	{"center", `centre center`},
	{"gray", `grey gray`},
	{"mom", `mum mom mother`},
	{"email", `email e-mail`},
	{"wifi", `wifi wi-fi`},
	{"timezone", `timezone time-zone`},
	{"organization", `organisation organization`},
	{"program", `programme program`},
	{"tv", `tv television`},
	{"street", `st street`},
	{"avenue", `ave avenue`},
	{"road", `rd road`},
	{"with", `w with`},
	// Clippings name what their full form names.
	{"repository", `repo repos repository repositories`},
	{"configuration", `config configs configuration configurations`},
	{"application", `app apps application applications`},
	{"environment", `env envs environment environments`},
	{"production", `prod production`},
	{"database", `db dbs database databases`},
	{"information", `info information`},
	{"administrator", `admin admins administrator administrators`},
	{"kubernetes", `k8s kubernetes`},
	{"postgresql", `postgres postgresql`},
	{"mongodb", `mongo mongodb`},
	{"laboratory", `lab labs laboratory laboratories`},
	{"gymnasium", `gym gyms gymnasium`},
	{"photograph", `photo photos photograph photographs`},
}

// stemOf is the stem a token of word w gets (see lexicon.token).
func (lx *lexicon) stemOf(w string) string {
	if i, ok := lx.index[w]; ok {
		return lx.entries[i].stem
	}
	return stem(w)
}

// compile resolves every word's stem (its canonical one; the word itself
// for a function word; else as stem derives it), builds the predicate trie
// and names the words the analysis knows by name.
func (lx *lexicon) compile() {
	for w, name := range namedWords {
		e := lx.words[w]
		e.word = name
		lx.words[w] = e
	}
	for w, e := range lx.words {
		switch {
		case e.stem != "":
		case e.flags&nonContent != 0 && e.ant == 0:
			e.stem = w
		default:
			e.stem = stem(w)
		}
		e.hash, e.stemInWord = fnv1a(e.stem), strings.HasPrefix(w, e.stem)
		lx.words[w] = e
	}
	if len(lx.words) > math.MaxUint16 {
		panic("heuristics: the lexicon outgrew its index")
	}
	lx.index = make(map[string]uint16, len(lx.words))
	for w, e := range lx.words {
		lx.index[w] = uint16(len(lx.entries))
		lx.entries = append(lx.entries, e)
	}
	lx.words = nil // lookups use the index from here on
	lx.table = newWordTable(lx.index)
	for k := range lx.preds {
		verb, _, _ := strings.Cut(k, " ")
		h := fnv1a(verb)
		lx.predShapes[min(strings.Count(k, " "), 3)].set(h)
		lx.predShapes[4].set(h)
	}
	lx.beFrom = lx.preds["be from"]
	lx.nounPred = &predicate{display: "", slot: slotNoun, val: single}
	lx.agePred = &predicate{display: "age", slot: slotAge, val: single}
	lx.nounSlots = map[string]*predicate{}
	for key, nouns := range map[string]string{
		"live in": "home residence city address location", "work at": "employer company employment", "work as": "role job occupation title position",
		"report to": "manager boss supervisor", "marry to": "spouse wife husband", "date": "partner girlfriend boyfriend",
		"study at": "school university college", "major in": "major", "go to bed at": "bedtime", "weigh": "weight",
		"earn": "income salary", "commute by": "commute", "bank with": "bank", "grow up in": "hometown",
		"name": "name", "go by": "nickname",
	} {
		for _, n := range strings.Fields(nouns) {
			lx.nounSlots[lx.stemOf(n)] = lx.preds[key]
		}
	}
	lx.nounSlots["age"] = lx.agePred
	lx.entering = lx.entriesOf()
	lx.family = map[uint32]uint32{}
	for _, d := range antonyms.Derivations() {
		head := fnv1a(lx.stemOf(d[0]))
		for _, w := range d {
			h := fnv1a(lx.stemOf(w))
			if _, ok := lx.family[h]; !ok {
				lx.family[h] = head
				lx.familyWords.set(h)
			}
		}
	}
}

// fam is the family of a word by its stem's hash: the hash of the word its
// family is derived from, or its own.
func (lx *lexicon) fam(h uint32) uint32 {
	if lx.familyWords.has(h) {
		if f, ok := lx.family[h]; ok {
			return f
		}
	}
	return h
}

// hashBits is a set of 32-bit hashes that may answer "maybe" for a hash
// not in it, never "no" for one in it: a filter in front of a map.
type hashBits [1 << 10]uint64

func (b *hashBits) set(h uint32) { i := bitOf(h); b[i>>6] |= 1 << (i & 63) }

func (b *hashBits) has(h uint32) bool { i := bitOf(h); return b[i>>6]&(1<<(i&63)) != 0 }

func bitOf(h uint32) uint32 { return (h * 0x9e3779b1) >> 16 }

// filterOf is the filter of a set of words: the bits of the hashes their
// tokens get.
func (lx *lexicon) filterOf(words map[string]bool) (f hashBits) {
	for w := range words {
		toks, _ := tokenize(nil, nil, w, lx)
		for _, t := range toks {
			f.set(t.hash)
		}
	}
	return f
}

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// addAntonyms records the antonym memberships of every word of the
// antonyms lexicon.
func (lx *lexicon) addAntonyms() {
	lx.pairs = antonyms.Pairs()
	refs := map[string][]antonyms.Ref{}
	var order []string
	for i, p := range lx.pairs {
		for side, words := range [2][]string{p.A, p.B} {
			for _, w := range words {
				if _, ok := refs[w]; !ok {
					order = append(order, w)
				}
				refs[w] = append(refs[w], antonyms.Ref{Pair: i, Side: side})
			}
		}
	}
	for _, w := range order {
		lx.ants = append(lx.ants, refs[w])
		e := lx.words[w]
		e.ant = uint16(len(lx.ants))
		lx.words[w] = e
	}
}

// verbs are common verbs of agent-memory facts, base forms. Inflections are
// generated; irregular forms are listed below.
const verbs = `live reside work report marry date engage study attend wake sleep go come move relocate land
	switch migrate change replace swap trade use own play speak know like love enjoy prefer hate
	dislike visit read watch listen collect follow eat drink cook grow invest subscribe learn take
	wear volunteer manage lead teach run drive ride bike walk commute fly travel bank vote support
	pay earn weigh make write code build deploy host keep store need want plan hope hold join leave
	quit stop start begin give buy sell rent lease share meet call text email send see feel think
	believe seem look avoid allow block enable disable turn open close lock unlock install uninstall
	smoke vape knit sew paint draw dance sing swim hike climb cycle ski surf skate jog exercise train
	lift practice practise meditate pray celebrate adopt raise feed clean shop order stream download
	sync track log note journal schedule book cancel mentor coach tutor help care struggle suffer
	treat recover rest nap sip brew bake grill roast commute park charge print scan message post
	blog publish edit review test debug ship release design develop program script automate
	configure set favor favour tolerate handle crave miss require lack wish dream intend consider
	expect forget remember understand lend borrow owe save spend donate receive inherit belong sit
	stand stay remain return arrive depart land shoot film record compose produce direct act
	perform compete win lose rank score finish complete fail pass graduate enroll enrol apply
	interview resign retire fire hire promote transfer settle renovate decorate garden plant
	harvest fish hunt camp sail row kayak paddle dive snorkel golf bowl box fence go do be have
	get put bring carry check try aim consume dine snack binge fast diet lift sponsor back fund
	prep prepare clean wash water walk run date name call base born employ marry divorce separate
	engage split break breakfast lunch supervise own rent mortgage insure drive sleep wake approve
	accept include exclude renew depend expose contain require trigger process serve route store
	archive merge sign encrypt mount ship cost charge listen point default expire sponsor review
	log call maintain handle stay depart arrive register pay sync succeed fail remove delete uninstall
	decommission deprecate disband expire heal cure pause terminate discontinue scrap withdraw resume restart`

// irregular lists irregular forms as "base:form form...".
const irregular = `go:went gone goes going come:came run:ran drive:drove driven ride:rode ridden
	speak:spoke spoken know:knew known eat:ate eaten drink:drank drunk grow:grew grown take:took
	taken wear:wore worn lead:led teach:taught fly:flew flown pay:paid make:made write:wrote written
	build:built keep:kept hold:held leave:left give:gave given buy:bought sell:sold meet:met
	see:saw seen feel:felt think:thought begin:began begun swim:swam swum sing:sang sung draw:drew
	drawn sit:sat stand:stood win:won lose:lost shoot:shot send:sent spend:spent lend:lent
	understand:understood forget:forgot forgotten bring:brought put:put set:set quit:quit read:read
	be:is are am was were been being have:has had having do:does did done doing get:got gotten
	sleep:slept wake:woke woken break:broke broken split:split born:born bear:bore
	fight:fought catch:caught hear:heard say:said tell:told find:found rebuild:rebuilt rewrite:rewrote
	rewritten withdraw:withdrew withdrawn`

// addVerbs adds every form of the known verbs, each with its base form as
// the canonical stem so that "uses", "using" and "used" compare equal.
func (lx *lexicon) addVerbs() {
	addForm := func(base, form string) {
		e := lx.words[form]
		e.flags |= fVerb
		if e.stem == "" {
			e.stem = base
		}
		lx.words[form] = e
	}
	for _, base := range strings.Fields(verbs) {
		for _, f := range inflect(base) {
			addForm(base, f)
		}
		// A regular past form is a past tense unless an auxiliary or copula
		// precedes it; the analysis decides that.
		for _, f := range pastForms(base) {
			e := lx.words[f]
			e.flags |= fPast
			lx.words[f] = e
		}
	}
	// "go:went gone goes": forms after the first belong to the last base.
	var base string
	for _, f := range strings.Fields(irregular) {
		if b, form, ok := strings.Cut(f, ":"); ok {
			base = b
			f = form
		}
		addForm(base, f)
		switch f {
		case "went", "came", "ran", "drove", "rode", "spoke", "knew", "ate", "drank", "grew", "took",
			"wore", "led", "taught", "flew", "paid", "made", "wrote", "built", "kept", "held", "left",
			"gave", "bought", "sold", "met", "saw", "felt", "thought", "began", "swam", "sang", "drew",
			"sat", "stood", "won", "lost", "shot", "sent", "spent", "lent", "understood", "forgot",
			"brought", "slept", "woke", "broke", "fought", "caught", "heard", "said", "told", "found":
			e := lx.words[f]
			e.flags |= fPast
			lx.words[f] = e
		}
	}
}

// inflect returns the base, third-person, past and -ing forms of a regular
// verb. Doubtful forms (doubled consonants) are included both ways: a form
// that is not a word never matches anything.
func inflect(base string) []string {
	out := []string{base}
	n := len(base)
	last := base[n-1]
	switch {
	case strings.HasSuffix(base, "s") || strings.HasSuffix(base, "sh") || strings.HasSuffix(base, "ch") ||
		strings.HasSuffix(base, "x") || strings.HasSuffix(base, "z") || strings.HasSuffix(base, "o"):
		out = append(out, base+"es")
	case last == 'y' && n > 1 && !isVowel(base[n-2]):
		out = append(out, base[:n-1]+"ies")
	default:
		out = append(out, base+"s")
	}
	out = append(out, pastForms(base)...)
	switch {
	case strings.HasSuffix(base, "ie"):
		out = append(out, base[:n-2]+"ying")
	case last == 'e' && !strings.HasSuffix(base, "ee"):
		out = append(out, base[:n-1]+"ing")
	default:
		out = append(out, base+"ing")
		if doubles(base) {
			out = append(out, base+string(last)+"ing")
		}
	}
	return out
}

func pastForms(base string) []string {
	n := len(base)
	last := base[n-1]
	switch {
	case last == 'e':
		return []string{base + "d"}
	case last == 'y' && n > 1 && !isVowel(base[n-2]):
		return []string{base[:n-1] + "ied"}
	case doubles(base):
		return []string{base + "ed", base + string(last) + "ed"}
	}
	return []string{base + "ed"}
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

// doubles reports a consonant-vowel-consonant ending whose consonant may
// double before -ed/-ing (stop → stopped).
func doubles(base string) bool {
	n := len(base)
	if n < 3 {
		return false
	}
	c, v, p := base[n-1], base[n-2], base[n-3]
	return !isVowel(c) && c != 'w' && c != 'x' && c != 'y' && isVowel(v) && !isVowel(p)
}

// addPredicates fills the predicate table. Keys are the verb's canonical
// stem followed by its particles, space-separated.
func (lx *lexicon) addPredicates() {
	p := func(key, display, slot string, val valuedness) {
		lx.preds[key] = &predicate{display: display, slot: slot, val: val, stative: strings.HasPrefix(display, "is "),
			passiveOnly: key == "call",
			multiReason: "No contradiction: different values for '" + display + "', which holds many values at once."}
	}
	for _, o := range onePredicates {
		for _, k := range strings.Split(o.keys, "|") {
			p(k, o.display, o.slot, o.val)
		}
	}
	for _, k := range multiPredicates {
		base, _, _ := strings.Cut(k, " ")
		display := k
		if e, ok := lx.words[base]; ok && e.flags&fVerb != 0 {
			display = thirdPerson(base) + strings.TrimPrefix(k, base)
		}
		p(k, display, "multi "+k, multi)
	}
}

// onePredicates hold one value at a time (or usually one, or one per kind
// of thing): keys are a verb's canonical stem and its particles, "|"
// between keys of one predicate.
var onePredicates = []struct {
	keys, display, slot string
	val                 valuedness
}{
	{"live in|live at|live on|reside in|reside at|base in|base out of|settle in|rent in", "lives in", slotResidence, single},
	{"move to", "moved to", slotResidence, single},
	{"relocate to", "relocated to", slotResidence, single},
	{"work at|work for|employ at|employ by|work full-time at|work part-time at", "works at", slotEmployer, single},
	{"work as", "works as", "role", single},
	{"marry to|marry", "is married to", "spouse", single},
	{"engage to", "is engaged to", "spouse", single},
	{"date", "is dating", "partner", single},
	{"report to|report directly to", "reports to", "manager", single},
	{"study at|go to school at", "studies at", "school", single},
	{"study", "studies", "major", usually},
	{"major in", "majors in", "major", single},
	{"wake up at|wake up|wake at|get up at", "wakes up at", "wake", single},
	{"go to bed at|go to bed|go to sleep at", "goes to bed at", "bedtime", single},
	{"weigh", "weighs", "weight", single},
	{"earn", "earns", "income", single},
	{"drive", "drives", "car", usually},
	{"commute by", "commutes by", "commute", single},
	{"bank with|bank at", "banks with", "bank", usually},
	{"vote for", "votes for", "vote", usually},
	{"born in", "was born in", "birthplace", single},
	{"born on", "was born on", "birthday", single},
	{"grow up in", "grew up in", "hometown", single},
	{"come from", "comes from", "origin", single},
	{"be from", "is from", "origin", single},
	{"name", "is named", "name", single},
	{"call", "is called", "name", single},
	{"go by", "goes by", slotNickname, single},
	{"prefer", "prefers", "prefer", category},
	{"stay at", "is staying at", "stay", single},
	{"stay in", "is staying in", "stay", single},
	{"deploy to", "is deployed to", "deploy", single},
	{"host on|host at", "is hosted on", "host", single},
	{"run on", "runs on", "platform", single},
	{"depart at", "departs at", "depart", single},
	{"depart from", "departs from", "departFrom", single},
	{"arrive at|land at", "arrives at", "arrive", single},
	{"cost", "costs", "cost", single},
	{"listen on", "listens on", "port", single},
	{"set to", "is set to", "setting", single},
	{"end on", "ends on", "end", single},
	{"expire on", "expires on", "end", single},
	{"start at", "starts at", "start", single},
	{"register with", "is registered with", "registrar", single},
	{"pay on", "gets paid on", "payday", single},
	{"store in|store on", "is stored in", "store", single},
	{"work from", "works from", "workplace", single},
}

// multiPredicates hold many values at once: listed so that explanations
// can say so.
var multiPredicates = []string{"speak", "like", "love", "enjoy", "have", "play", "know", "visit", "use", "own",
	"read", "watch", "listen to", "collect", "follow", "eat", "drink", "cook", "grow", "invest in",
	"subscribe to", "learn", "wear", "take", "volunteer at", "manage", "work with", "work on",
	"go to", "write", "support", "attend", "travel to", "fly", "ride", "teach", "build", "make",
	"practice", "practise", "want", "need", "miss", "keep", "host", "deploy"}

// role reports a word whose first antonym pair opposes roles (parent/child).
func (lx *lexicon) role(t *token) bool {
	return t.ant != 0 && lx.pairs[lx.ants[t.ant-1][0].Pair].Kind == antonyms.Role
}

func thirdPerson(base string) string {
	if base == "have" {
		return "has"
	}
	return inflect(base)[1]
}
