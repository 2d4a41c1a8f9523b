package heuristics

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Analysis limits. Agent-memory attributes are short sentences; content past
// these limits is ignored rather than analysed, so that a pathological 1 MB
// attribute costs the same as a long sentence.
const (
	maxInput  = 400 // bytes of content analysed
	maxTokens = 48  // token sets are bitmaps of 64 bits
)

// token is a word of the analysed content. Its strings are spans of its
// statement's text (Statement.raw and Statement.stem read them), so that
// tokens hold no pointers: the garbage collector need not scan the tokens
// of the statements a sweep keeps, nor zero them when they are allocated.
type token struct {
	hash      uint32 // of the stem: blocking keys are made of it
	flags     uint32 // lexicon flags, plus tBreak, tNumber, tCap
	raw, stem str    // lowercased surface form; what comparisons use
	ant       uint16 // index+1 into lexicon.ants, 0 when none
	word      uint8  // wordTo...: the word's name, when the lexicon knows it by name
	sign      uint8  // a number's sign: signMoney ($ € £ before it), signPercent (% after it)
}

// Signs of a number, written as symbols the words leave out.
const (
	signNone uint8 = iota
	signMoney
	signPercent
)

// str is the string text[lo:hi] of a statement's text.
type str struct{ lo, hi uint16 }

// The text's flags do not overlap the lexicon's.
var _ [tArrow - 2*fWhen]struct{}

// Token strings fit a str: the input is cut at maxInput bytes, and a word
// lowercased or stemmed grows by a few bytes at most.
var _ [1<<16 - 8*maxInput]struct{}

// lexiconFlags are the flags a token may get from the lexicon.
const lexiconFlags = fWhen - 1

// Flags a token gets from the text rather than the lexicon (high bits).
const (
	tBreak  uint32 = 1 << 31 // a clause break (punctuation) precedes the token
	tNumber uint32 = 1 << 30 // a number: starts with a digit, or a number word
	tCap    uint32 = 1 << 29 // starts with a capital letter in the text
	tColon  uint32 = 1 << 28 // the break is a colon ("timezone: CET")
	tFull   uint32 = 1 << 27 // the break ends a sentence (. ; ! ?)
	tArrow  uint32 = 1 << 26 // the break is an arrow ("plan: free -> pro")
)

// tokenize lowercases s and splits it into words. Letters and digits (any
// script) form words; an apostrophe between letters stays inside the word
// ("doesn't"), and . , : - @ _ between letters or digits join ("1,800",
// "7:30", "wi-fi", "node.js"). Sentence punctuation marks a clause break on
// the next word; invalid UTF-8 is a separator. The tokens are appended to
// toks (empty), their strings to text (empty).
func tokenize(toks []token, text []byte, s string, lx *lexicon) ([]token, []byte) {
	if len(s) > maxInput {
		s = s[:maxInput]
	}
	var brk uint32 // the breaks before the next word
	var sign uint8 // a currency symbol before the next word
	for i := 0; i < len(s) && len(toks) < maxTokens; {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r, size) {
			brk |= breakFlags(r)
			if r == '-' && spacedDash(s, i) {
				brk |= tBreak // "Gave up pottery - the studio shut": a dash
			}
			sign = signNone
			if strings.ContainsRune("$€£¥₹", r) {
				sign = signMoney
			}
			i += size
			continue
		}
		end, curly := wordEnd(s, i)
		flags := brk
		if unicode.IsUpper(r) {
			flags |= tCap
		}
		word := s[i:end]
		if curly {
			word = strings.NewReplacer("\u2019", "'", "\u02bc", "'").Replace(word)
		}
		var t *token
		var parts []string
		rel := false
		if strings.IndexByte(word, '_') >= 0 { // a relation name has one; most words none
			parts, rel = lx.relation(word)
		}
		if rel {
			toks, text, t = lx.relationTokens(toks, text, parts, flags)
		} else {
			toks = append(toks, token{})
			t = &toks[len(toks)-1]
			text = lx.token(t, word, flags, text)
			if flags&tCap != 0 && shouted(word) && (t.flags&lexiconFlags != 0 || t.ant != 0 || len(word) > 5) {
				t.flags &^= tCap // "USES", "PAID OFF THE LOAN": emphasis, not a name; "AWS" stays one
			}
		}
		if t == nil {
			break // no room for its words
		}
		// What ends the word: a separator, perhaps a clause break. The
		// period of "Dr. Nguyen" or "vs. Code" ends no clause.
		r, size = utf8.DecodeRuneInString(s[end:])
		if t.flags&tNumber != 0 {
			switch {
			case sign == signMoney:
				t.sign = signMoney
			case r == '%':
				t.sign = signPercent
			}
		}
		sign = signNone
		brk = 0
		if end < len(s) && !(r == '.' && abbreviations[string(text[t.raw.lo:t.raw.hi])]) {
			brk = breakFlags(r)
		}
		i = end + size
	}
	return toks, text
}

// shouted reports a word written in capitals only ("USES", "HOMEOWNERS").
func shouted(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// relation splits a relation name of a graph store's fact ("REPORTS_TO",
// "LIVES_IN", "CEO_OF", "HAS_VET") into its lowercase words: capitals
// joined by underscores, whose first word is a verb (by the lexicon or its
// form) or "has", or whose last word is a preposition. Other such names
// ("NODE_OPTIONS", "LEDGER_TEST_DSN") are names and stay one word.
func (lx *lexicon) relation(w string) ([]string, bool) {
	if !strings.Contains(w, "_") || !shouted(w) {
		return nil, false
	}
	parts := strings.Split(strings.ToLower(w), "_")
	for _, p := range parts {
		if p == "" {
			return nil, false
		}
	}
	first, last := lx.flagsOf(parts[0]), lx.flagsOf(parts[len(parts)-1])
	if first&(verbalFlags|fLight) == 0 && last&fPrep == 0 && !verbForm(parts[0]) {
		return nil, false
	}
	return parts, true
}

// afterVerb reports a verb as the last token ("Sara REMAINS CFO_OF ..."):
// a relation after it is its complement, not a clause of its own.
func afterVerb(toks []token, lx *lexicon) bool {
	return len(toks) > 0 && toks[len(toks)-1].flags&(fVerb|fCopula) != 0 && toks[len(toks)-1].flags&tNumber == 0
}

// verbForm reports a word that ends like an inflected verb ("evaluating",
// "decommissioned", "commutes").
func verbForm(w string) bool {
	return len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "es"))
}

// flagsOf is the lexicon's flags of a lowercase word, 0 when it is unknown.
func (lx *lexicon) flagsOf(w string) uint32 {
	if i, ok := findWord(&lx.table, w, fnv1a(w)); ok {
		return lx.entries[i].flags
	}
	return 0
}

// relationTokens appends the words of a relation name as tokens, read as
// the verb phrase it names: "REPORTS_TO" is "reports to"; a relation that
// starts with a noun is its copula ("CEO_OF" is "is CEO of"), and one that
// has a noun ("HAS_VET") says what that noun is ("vet is"). It returns the
// first token, which takes the break before the name.
func (lx *lexicon) relationTokens(toks []token, text []byte, parts []string, flags uint32) ([]token, []byte, *token) {
	flags &^= tCap
	first := len(toks)
	add := func(w string) {
		if len(toks) < maxTokens {
			toks = append(toks, token{})
			t := &toks[len(toks)-1]
			text = lx.token(t, w, flags, text)
			t.flags &^= fPast                          // a relation holds: "EMPLOYED_BY" is "is employed by"
			flags &^= tBreak | tFull | tColon | tArrow // the break is before the first word only
		}
	}
	switch f := lx.flagsOf(parts[0]); {
	case parts[0] == "has" && len(parts) > 1 && lx.flagsOf(parts[len(parts)-1])&fPrep == 0:
		for _, p := range parts[1:] {
			add(p)
		}
		add("is")
	case (f&(verbalFlags|fLight) == 0 && !verbForm(parts[0]) || strings.HasSuffix(parts[0], "ing")) && !afterVerb(toks, lx):
		add("is") // "CEO_OF" is "is CEO of", "RELOCATING_TO" "is relocating to"; but "REMAINS CFO_OF"
		fallthrough
	default:
		for _, p := range parts {
			add(p)
		}
	}
	if first == len(toks) {
		return toks, text, nil
	}
	return toks, text, &toks[first]
}

func isWordRune(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false // invalid UTF-8: a separator
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// wordEnd returns where the word that starts at s[i] ends, and whether it
// holds an apostrophe other than ASCII's.
func wordEnd(s string, i int) (end int, curly bool) {
	last := byte(0) // class of the last character: 'a' letter, 'd' digit, 'j' joiner
	for i < len(s) {
		if c := s[i]; isASCIIAlnum(c) { // most characters
			last = 'a'
			if isASCIIDigit(c) {
				last = 'd'
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r, size) || last != 0 && r >= utf8.RuneSelf && unicode.IsMark(r): // no ASCII character is a mark
			last = 'a'
			if unicode.IsDigit(r) {
				last = 'd'
			}
		case isApostrophe(r) && last == 'a' && i+size < len(s) && isASCIILetter(s[i+size]):
			last = 'j' // "doesn't", "dog's"
			curly = curly || r != '\''
		case r < utf8.RuneSelf && last != 'j' && i+1 < len(s) && joins(byte(r), last, s[i+1]):
			last = 'j'
		case (r == '+' || r == '#') && last == 'a' && (i+1 >= len(s) || !isASCIIAlnum(s[i+1])):
			// "c++", "c#", "f#"
		default:
			return i, curly
		}
		i += size
	}
	return i, curly
}

// isApostrophe reports the quote characters used as apostrophes.
func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' || r == '\u02bc' }

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isASCIIAlnum(c byte) bool  { return isASCIILetter(c) || isASCIIDigit(c) }

// joins reports whether the joiner c, after a character of class prev
// ('a' letter, 'd' digit), glues the word to the next byte.
func joins(c, prev, next byte) bool {
	switch c {
	case ',':
		return prev == 'd' && isASCIIDigit(next) // 1,800
	case ':':
		return isASCIIAlnum(next) // 7:30, node:18

	case '.':
		return isASCIIAlnum(next) // 4.5, node.js, example.com
	case '-', '@', '_':
		return isASCIIAlnum(next) || next >= utf8.RuneSelf // wi-fi, sam@x, new_york
	}
	return false
}

// spacedDash reports the hyphen at i written as a dash: spaces (or more
// hyphens) on both sides ("a - b", "a -- b"); not "wi-fi", "->", "-5".
func spacedDash(s string, i int) bool {
	apart := func(j int) bool { return j < 0 || j >= len(s) || s[j] == ' ' || s[j] == '-' }
	return apart(i-1) && apart(i+1) && (i > 0 && s[i-1] == ' ' || i+1 < len(s) && s[i+1] == ' ')
}

// breakFlags says how punctuation breaks a clause: not at all, as a clause
// break, a colon or the end of a sentence.
func breakFlags(r rune) uint32 {
	switch r {
	case '.', ';', '!', '?':
		return tBreak | tFull
	case ':', '=':
		return tBreak | tColon // "timezone: CET", "timezone = CET"
	case '>', '\u2192', '\u21d2':
		return tBreak | tColon | tArrow // "->", "=>", "→", "⇒"
	case ',', '(', ')', '\u2014', '\u2013', '[', ']', '"', '\u201c', '\u201d':
		return tBreak
	}
	return 0
}

// abbreviations are the words whose period is not a full stop.
var abbreviations = toSet(`dr mr mrs ms mx st jr sr prof vs etc inc ltd co corp mt ft approx dept univ ave
	rd blvd no e.g i.e`)

// stem strips English inflections from an ASCII lowercase word so that
// "lives", "living" and "lived" compare equal, and "cats" equals "cat".
// Words with non-ASCII letters, digits or apostrophes other than a
// possessive are left alone. The rules are crude on purpose: both sides of
// a comparison go through the same function, so a consistent stem matters
// more than a correct one.
func stem(w string) string {
	w = strings.TrimSuffix(w, "'s") // possessive
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	n := len(w)
	has := func(suf string) bool { return strings.HasSuffix(w, suf) }
	switch {
	case n >= 5 && (has("ies") || has("ied")):
		return w[:n-3] + "y" // studies, studied → study
	case n >= 5 && (has("sses") || has("shes") || has("ches") || has("xes") || has("zes")):
		n -= 2
	case n >= 4 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		n--
	case n >= 6 && has("ing"):
		n = undouble(w, n-3)
	case n >= 5 && w[n-1] == 'd' && w[n-2] == 'e' && w[n-3] != 'e':
		n = undouble(w, n-2)
	}
	if n >= 4 && w[n-1] == 'e' {
		n--
	}
	return w[:n]
}

// undouble drops the second of a doubled final consonant of w[:n]
// ("stopp" → "stop").
func undouble(w string, n int) int {
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return n - 1
	}
	return n
}

// fnv1a is the 32-bit FNV-1a hash of a stem.
func fnv1a(s string) uint32 {
	h := uint32(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * fnvPrime
	}
	return h
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)
