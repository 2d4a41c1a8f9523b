package heuristics

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// Analysis limits. Agent-memory attributes are short sentences; content past
// these limits is ignored rather than analysed, so that a pathological 1 MB
// attribute costs the same as a long sentence.
const (
	maxInput  = 400 // bytes of content analysed
	maxTokens = 48
	bufSize   = 640 // lowercased text plus the stems that are not prefixes of it
)

// token is a word of the analysed content. Spans index Statement.buf, so a
// statement holds no pointers besides its own storage.
type token struct {
	raw0, raw1 uint16 // lowercased surface form
	st0, st1   uint16 // stem: what comparisons use
	hash       uint32 // FNV-1a of the stem
	flags      uint32 // lexicon flags, plus tBreak
	ant        uint16 // index+1 into lexicon.antRefs lists, 0 when none
	role       uint8
	_          uint8
}

// tokenizer state flags kept on tokens (high bits, above lexicon flags).
const (
	tBreak  uint32 = 1 << 31 // a clause break (punctuation) precedes the token
	tNumber uint32 = 1 << 30 // starts with a digit
)

// isApostrophe reports the quote characters used as apostrophes.
func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' || r == '\u02bc' }

// tokenize lowercases s into st.buf and splits it into tokens. It never
// allocates: tokens are spans, stems are written after the text when they are
// not a prefix of it. Letters and digits (any script) form words; an
// apostrophe between letters stays inside the word ("doesn't"), and . , : -
// @ _ between letters or digits join ("1,800", "7:30", "wi-fi", "node.js").
// Sentence punctuation marks a clause break on the next token; invalid UTF-8
// is a separator.
func (st *workspace) tokenize(s string, lx *lexicon) {
	if len(s) > maxInput {
		s = s[:maxInput]
	}
	st.nbuf = 0
	st.ntok = 0
	pendingBreak := false
	inWord := false
	var start int
	var lastClass byte // class of the last byte written to the current word: 'a' letter, 'd' digit, 'j' joiner
	i := 0
	for i < len(s) {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				// Invalid byte: a separator.
				if inWord {
					st.endWord(start, lx, pendingBreak)
					pendingBreak = false
					inWord = false
				}
				i++
				continue
			}
		}
		switch {
		case c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'):
			if !inWord {
				if st.ntok >= maxTokens {
					return
				}
				inWord = true
				start = st.nbuf
			}
			// Copy the whole ASCII run at once: most text is this loop.
			limit := len(st.buf) - maxStemGrowth
			n := st.nbuf
			j := i
			for ; j < len(s) && n < limit; j++ {
				c = s[j]
				switch {
				case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				case c >= 'A' && c <= 'Z':
					c += 'a' - 'A'
				default:
					goto done
				}
				st.buf[n] = c
				n++
			}
		done:
			st.nbuf = n
			lastClass = 'a'
			if l := st.buf[n-1]; l >= '0' && l <= '9' {
				lastClass = 'd'
			}
			if n >= limit {
				st.endWord(start, lx, pendingBreak)
				return
			}
			i = j
			continue
		case c >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && unicode.IsMark(r))):
			if !inWord {
				if st.ntok >= maxTokens {
					return
				}
				inWord = true
				start = st.nbuf
			}
			lr := unicode.ToLower(r)
			if st.nbuf+utf8.RuneLen(lr) > len(st.buf)-maxStemGrowth {
				st.endWord(start, lx, pendingBreak)
				return
			}
			st.nbuf += utf8.EncodeRune(st.buf[st.nbuf:], lr)
			lastClass = 'a'
			if unicode.IsDigit(r) {
				lastClass = 'd'
			}
		case isApostrophe(r):
			// Inside a word, followed by a letter: part of the word.
			if inWord && lastClass == 'a' && i+size < len(s) && isASCIILetter(s[i+size]) {
				if !st.put('\'') {
					st.endWord(start, lx, pendingBreak)
					return
				}
				lastClass = 'j'
			} else if inWord {
				st.endWord(start, lx, pendingBreak)
				pendingBreak = false
				inWord = false
			}
		case inWord && lastClass != 'j' && isJoiner(c) && i+1 < len(s) && joins(c, lastClass, s[i+1]):
			if !st.put(c) {
				st.endWord(start, lx, pendingBreak)
				return
			}
			lastClass = 'j'
		case inWord && (c == '+' || c == '#') && lastClass == 'a' && (i+1 >= len(s) || !isASCIIAlnum(s[i+1])):
			// "c++", "c#", "f#".
			if !st.put(c) {
				st.endWord(start, lx, pendingBreak)
				return
			}
		default:
			wordBefore := inWord
			if inWord {
				st.endWord(start, lx, pendingBreak)
				pendingBreak = false
				inWord = false
			}
			// The period of "Dr. Nguyen" or "vs. Code" ends no clause.
			if isBreak(r) && !(c == '.' && wordBefore && st.ntok > 0 && isAbbrev(st.raw(&st.toks[st.ntok-1]))) {
				pendingBreak = true
			}
		}
		i += size
	}
	if inWord {
		st.endWord(start, lx, pendingBreak)
	}
}

// maxStemGrowth is room kept at the end of buf for a stem that is not a
// prefix of its word (at most the word itself plus one byte).
const maxStemGrowth = 64

func (st *workspace) put(c byte) bool {
	if st.nbuf >= len(st.buf)-maxStemGrowth {
		return false
	}
	st.buf[st.nbuf] = c
	st.nbuf++
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isASCIIAlnum(c byte) bool  { return isASCIILetter(c) || isASCIIDigit(c) }

func isJoiner(c byte) bool {
	switch c {
	case '-', '.', ',', ':', '@', '_':
		return true
	}
	return false
}

// joins reports whether joiner c, after a character of class prev, glues the
// word to the next byte.
func joins(c, prev, next byte) bool {
	switch c {
	case ',', ':':
		return prev == 'd' && isASCIIDigit(next) // 1,800 and 7:30
	case '.':
		return isASCIIAlnum(next) // 4.5, node.js, example.com
	default:
		return isASCIIAlnum(next) || next >= utf8.RuneSelf // wi-fi, sam@x, new_york
	}
}

// isBreak is punctuation that ends a clause.
func isBreak(r rune) bool {
	switch r {
	case ',', ';', '.', '!', '?', '(', ')', ':', '\u2014', '\u2013', '[', ']', '"', '\u201c', '\u201d':
		return true
	}
	return false
}

// endWord finishes the word written at buf[start:nbuf]: stems it, hashes the
// stem and looks it up in the lexicon.
func (st *workspace) endWord(start int, lx *lexicon, brk bool) {
	end := st.nbuf
	// A trailing joiner cannot happen (joins looks ahead) but an apostrophe
	// form like "dogs'" can: drop it.
	for end > start && st.buf[end-1] == '\'' {
		end--
	}
	if end <= start {
		st.nbuf = start
		return
	}
	st.nbuf = end
	t := &st.toks[st.ntok]
	*t = token{raw0: uint16(start), raw1: uint16(end)}
	if brk {
		t.flags |= tBreak
	}
	if isASCIIDigit(st.buf[start]) {
		t.flags |= tNumber
	}
	raw := st.buf[start:end]
	rh := st.hashSpan(start, end)
	e, ok := lx.lookup(rh, raw)
	t.hash = rh
	switch {
	case ok && e.stem != "":
		st.setStem(t, e)
	case ok && e.flags&nonContent != 0 && e.ant == 0:
		// A function word: never compared by stem.
		t.st0, t.st1 = t.raw0, t.raw1
	default:
		s0, s1, ydone := stem(raw)
		if ydone && st.nbuf+(s1-s0)+1 <= len(st.buf) {
			// ies/ied → y: write the stem after the text.
			n := s1 - s0
			p := st.nbuf
			copy(st.buf[p:], raw[:n])
			st.buf[p+n] = 'y'
			t.st0, t.st1 = uint16(p), uint16(p+n+1)
			st.nbuf = p + n + 1
		} else {
			if ydone {
				s1 += 3 // no room for the stem: compare the whole word
			}
			t.st0, t.st1 = uint16(start+s0), uint16(start+s1)
		}
		if t.st1-t.st0 != t.raw1-t.raw0 {
			t.hash = fnv(st.buf[t.st0:t.st1])
			// A plural of a known noun ("timezones", "weekends"): look
			// the stem up. Other misses are content words; looking up
			// their stems would cost a probe for nothing.
			if !ok && raw[len(raw)-1] == 's' {
				e, ok = lx.lookup(t.hash, st.buf[t.st0:t.st1])
				if ok && e.stem != "" {
					st.setStem(t, e)
				}
			}
		}
	}
	if ok {
		t.flags |= e.flags
		t.ant = e.ant
	}
	st.ntok++
}

// setStem writes the canonical stem of e after the text, and sets the
// token's hash to the stem's.
func (st *workspace) setStem(t *token, e *entry) {
	p := st.nbuf
	if p+len(e.stem) > len(st.buf) {
		t.st0, t.st1 = t.raw0, t.raw1
		t.hash = fnv(st.buf[t.st0:t.st1])
		return
	}
	copy(st.buf[p:], e.stem)
	t.st0, t.st1 = uint16(p), uint16(p+len(e.stem))
	t.hash = e.stemHash
	st.nbuf = p + len(e.stem)
}

// fnv hashes a word for the lexicon tables and the stem masks. Despite the
// name it is not FNV any more: words are hashed eight bytes at a time with a
// multiply-xorshift mix, which is several times faster on short words and
// spreads them as well.
func fnv(b []byte) uint32 {
	h := uint64(len(b)) * 0x9E3779B97F4A7C15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xff51afd7ed558ccd
		h ^= h >> 32
		b = b[8:]
	}
	var tail uint64
	if n := len(b); n > 0 && cap(b) >= 8 {
		// Load eight bytes and mask: the bytes past len are within cap,
		// so this reads the word's own storage only.
		tail = binary.LittleEndian.Uint64(b[:8]) & (1<<(8*uint(n)) - 1)
	} else {
		for i := 0; i < len(b); i++ {
			tail |= uint64(b[i]) << (8 * i)
		}
	}
	h = (h ^ tail) * 0xc4ceb9fe1a85ec53
	h ^= h >> 29
	return uint32(h >> 32)
}

// stem strips English inflections from an ASCII lowercase word so that
// "lives", "living" and "lived" compare equal, and "cats" equals "cat". It
// returns the stem as w[s0:s1], or, when y is true, as w[s0:s1] followed by
// 'y' ("studies" → "study"). Words with non-ASCII letters, digits or
// apostrophes other than a possessive are left alone. The rules are crude on
// purpose: both sides of a comparison go through the same function, so a
// consistent stem matters more than a correct one.
func stem(w []byte) (s0, s1 int, y bool) {
	n := len(w)
	if n >= 3 && w[n-2] == '\'' && w[n-1] == 's' {
		n -= 2 // possessive
	}
	for i := 0; i < n; i++ {
		if !(w[i] >= 'a' && w[i] <= 'z') {
			return 0, n, false
		}
	}
	has := func(suf string) bool { return hasSuffix(w[:n], suf) }
	switch {
	case n >= 5 && (has("ies") || has("ied")):
		return 0, n - 3, true
	case n >= 5 && (has("sses") || has("shes") || has("ches") || has("xes") || has("zes")):
		n -= 2
	case n >= 4 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		n--
	case n >= 6 && has("ing"):
		n -= 3
		n = undouble(w, n)
	case n >= 5 && w[n-1] == 'd' && w[n-2] == 'e' && w[n-3] != 'e':
		n -= 2
		n = undouble(w, n)
	}
	if n >= 4 && w[n-1] == 'e' {
		n--
	}
	return 0, n, false
}

// hashSpan is fnv(st.buf[i:j]); the capacity left after the word lets fnv
// load its last bytes in one go.
func (st *workspace) hashSpan(i, j int) uint32 { return fnv(st.buf[i:j]) }

func hasSuffix(w []byte, suf string) bool {
	return len(w) >= len(suf) && string(w[len(w)-len(suf):]) == suf
}

// undouble drops the second of a doubled final consonant ("stopp" → "stop").
func undouble(w []byte, n int) int {
	if n >= 3 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'a', 'e', 'i', 'o', 'u', 'l', 's', 'z':
			return n
		}
		return n - 1
	}
	return n
}

// isAbbrev reports abbreviations whose period is not a full stop.
func isAbbrev(w []byte) bool {
	switch string(w) {
	case "dr", "mr", "mrs", "ms", "mx", "st", "jr", "sr", "prof", "vs", "etc", "inc", "ltd", "co",
		"corp", "mt", "ft", "approx", "dept", "univ", "ave", "rd", "blvd", "no", "e.g", "i.e":
		return true
	}
	return false
}
