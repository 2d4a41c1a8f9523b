package heuristics

import (
	"encoding/binary"
	"math/bits"
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
	word       uint8  // wordTo...: the word's name, when the analysis knows it by name
	root       uint8  // the stem's root in the predicate trie: rootUnknown, rootNone or an index+rootIndex
}

// tokenizer state flags kept on tokens (high bits, above lexicon flags).
const (
	tBreak  uint32 = 1 << 31 // a clause break (punctuation) precedes the token
	tNumber uint32 = 1 << 30 // starts with a digit
	tCap    uint32 = 1 << 29 // starts with a capital letter in the text
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
	st.flagsOr, st.named = 0, 0
	brk := false // a clause break precedes the next word
	for i := 0; i < len(s); {
		// Eight bytes from i, zero padded past the end: most words are
		// fewer than eight ASCII letters or digits, then a space or the
		// end, and are read from these.
		var x uint64
		if i+8 <= len(s) {
			w := s[i : i+8]
			x = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		} else {
			x = loadTail(s, i)
		}
		run, lower := asciiRun(x)
		capital := byte(x)-'A' <= 'Z'-'A'
		if run == 0 {
			// Between words: separators, of which some break the
			// clause, or a word that starts with a non-ASCII letter.
			c := s[i]
			if c < utf8.RuneSelf {
				if isBreak(rune(c)) {
					brk = true
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				// Invalid UTF-8 decodes as RuneError, size 1: a separator.
				if isBreak(r) {
					brk = true
				}
				i += size
				continue
			}
			capital = unicode.IsUpper(r)
		}
		if st.ntok >= maxTokens {
			return
		}
		var pre uint32 // flags the word's token gets from what precedes it
		if brk {
			pre = tBreak
		}
		if capital {
			pre |= tCap
		}
		// A word of fewer than sixteen ASCII letters or digits, then a
		// space or the end: its key is the bytes loaded, lowercased.
		k := key{k0: lower & (1<<(8*uint(run)) - 1), n: run}
		if run == 8 {
			if i+16 <= len(s) {
				w := s[i+8 : i+16]
				x = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
					uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
			} else {
				x = loadTail(s, i+8)
			}
			run2, hi := asciiRun(x)
			k = key{k0: lower, k1: hi & (1<<(8*uint(run2)) - 1), n: 8 + run2}
		}
		if j := i + k.n; run > 0 && k.n < maxKey && (j == len(s) || s[j] == ' ') {
			if start := st.nbuf; start+maxKey < len(st.buf)-maxStemGrowth {
				binary.LittleEndian.PutUint64(st.buf[start:start+8], k.k0)
				binary.LittleEndian.PutUint64(st.buf[start+8:start+16], k.k1)
				end := start + k.n
				st.nbuf = end
				i, brk = j+1, false // past the end when j is: the loop ends
				if isASCIIDigit(byte(k.k0)) {
					pre |= tNumber
				}
				t := &st.toks[st.ntok]
				st.ntok++
				t.raw0, t.raw1 = uint16(start), uint16(end)
				e := lx.wordTab.find(k, k.tab())
				if e == nil {
					// Not in the lexicon: stemmed and hashed (as
					// addToken does).
					t.flags, t.ant, t.word, t.root = pre, 0, wordNone, rootUnknown
					st.unknownWord(t, uint32(k.fnv()>>32), k, lx)
					st.flagsOr |= t.flags
					continue
				}
				// A word of the lexicon, which knows everything about
				// it (knownWord, written out here: most words are
				// this, and a call costs as much).
				flags := pre | e.flags
				st.flagsOr |= flags
				st.named |= 1 << (e.kind >> 2)
				t.st0, t.st1 = uint16(start), uint16(end)
				t.hash, t.flags, t.ant, t.word, t.root = e.hash, flags, e.ant, e.kind>>2, e.root
				switch e.kind & 3 {
				case stemPrefix:
					t.st1 = uint16(start) + uint16(e.cut)
				case stemCanon:
					// The stem is written after the word, where there
					// is room for maxKey bytes (start+maxKey is below
					// the limit, which keeps maxStemGrowth bytes free).
					stem := lx.stems[e.stem0 : int(e.stem0)+maxKey]
					binary.LittleEndian.PutUint64(st.buf[end:end+8], binary.LittleEndian.Uint64(stem[:8]))
					binary.LittleEndian.PutUint64(st.buf[end+8:end+16], binary.LittleEndian.Uint64(stem[8:16]))
					t.st0, t.st1 = uint16(end), uint16(end+int(e.cut))
					st.nbuf = end + int(e.cut)
				case stemY:
					if !st.writeY(t, int(e.cut)) {
						t.hash = fnv(st.stem(t))
						t.root = rootUnknown
					}
				}
				continue
			}
		}
		var more bool
		if i, brk, more = st.word(s, i, lx, pre); !more {
			return
		}
	}
}

// word reads the word that starts at s[i] (a letter or a digit) into buf
// and adds its token, with the flags pre (tBreak, tCap). It
// returns where reading goes on, whether the character that ended the word
// breaks the clause, and false when buf is full (the rest of s is then
// ignored).
func (st *workspace) word(s string, i int, lx *lexicon, pre uint32) (int, bool, bool) {
	start := st.nbuf
	limit := len(st.buf) - maxStemGrowth
	// The key of the word while it is one ASCII run of at most eight
	// bytes (most words), so that endWord need not load it back.
	var fast key
	var lastClass byte // class of the last byte written: 'a' letter, 'd' digit, 'j' joiner
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf && isASCIIAlnum(c) {
			// Copy the whole ASCII run at once, eight bytes at a time:
			// most text is this loop. The bytes stored past the run are
			// overwritten by whatever comes next.
			n := st.nbuf
			var last byte
			for i < len(s) && n < limit {
				// Eight bytes from i, zero padded past the end (written
				// out here: a function would not be inlined).
				var x uint64
				if i+8 <= len(s) {
					w := s[i : i+8]
					x = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
						uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
				} else {
					x = loadTail(s, i)
				}
				run, lower := asciiRun(x)
				binary.LittleEndian.PutUint64(st.buf[n:n+8], lower)
				run = min(run, limit-n)
				if n == start {
					fast = key{k0: lower & (1<<(8*uint(run)) - 1), n: run}
					if run == 8 {
						fast.k0 = lower
					}
				}
				if run > 0 {
					last = byte(lower >> (8 * uint(run-1)))
				}
				n += run
				i += run
				if run < 8 {
					break
				}
			}
			st.nbuf = n
			if n >= limit {
				st.endWord(start, lx, pre, fast)
				return i, false, false
			}
			lastClass = 'a'
			if isASCIIDigit(last) {
				lastClass = 'd'
			}
			continue
		}
		if c == ' ' {
			st.endWord(start, lx, pre, fast)
			return i + 1, false, true
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				// Invalid byte: a separator.
				st.endWord(start, lx, pre, fast)
				return i + 1, false, true
			}
			if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
				lr := unicode.ToLower(r)
				if st.nbuf+utf8.RuneLen(lr) > limit {
					st.endWord(start, lx, pre, fast)
					return i, false, false
				}
				st.nbuf += utf8.EncodeRune(st.buf[st.nbuf:], lr)
				lastClass = 'a'
				if unicode.IsDigit(r) {
					lastClass = 'd'
				}
				i += size
				continue
			}
		}
		switch {
		case isApostrophe(r):
			// Followed by a letter: part of the word.
			if lastClass == 'a' && i+size < len(s) && isASCIILetter(s[i+size]) {
				if !st.put('\'') {
					st.endWord(start, lx, pre, fast)
					return i, false, false
				}
				lastClass = 'j'
				i += size
				continue
			}
			st.endWord(start, lx, pre, fast)
			return i + size, false, true
		case lastClass != 'j' && isJoiner(c) && i+1 < len(s) && joins(c, lastClass, s[i+1]):
			if !st.put(c) {
				st.endWord(start, lx, pre, fast)
				return i, false, false
			}
			lastClass = 'j'
			i++
			continue
		case (c == '+' || c == '#') && lastClass == 'a' && (i+1 >= len(s) || !isASCIIAlnum(s[i+1])):
			// "c++", "c#", "f#".
			if !st.put(c) {
				st.endWord(start, lx, pre, fast)
				return i, false, false
			}
			i++
			continue
		}
		st.endWord(start, lx, pre, fast)
		// The period of "Dr. Nguyen" or "vs. Code" ends no clause.
		brk := isBreak(r) && !(c == '.' && st.ntok > 0 && isAbbrev(st.raw(&st.toks[st.ntok-1])))
		return i + size, brk, true
	}
	st.endWord(start, lx, pre, fast)
	return i, false, true
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

// endWord finishes the word written at buf[start:nbuf], whose token gets
// the flags pre: looks it up in the lexicon, which knows the stem and its
// hash of every word it holds, or stems and hashes it. fast is the word's
// key when it is one ASCII run of at most eight bytes.
func (st *workspace) endWord(start int, lx *lexicon, pre uint32, fast key) {
	end := st.nbuf
	k := fast
	if fast.n == 0 || end-start != fast.n {
		// A trailing joiner cannot happen (joins looks ahead) but an
		// apostrophe form like "dogs'" can: drop it.
		for end > start && st.buf[end-1] == '\'' {
			end--
		}
		if end <= start {
			st.nbuf = start
			return
		}
		st.nbuf = end
		k.n = 0
		if n := end - start; n <= maxKey {
			// A word ends at most maxStemGrowth bytes before the end of
			// buf, so its key loads in place (masked to its length).
			k = key{k0: binary.LittleEndian.Uint64(st.buf[start : start+8]), k1: binary.LittleEndian.Uint64(st.buf[start+8 : start+16]), n: n}.prefix(n)
		}
	}
	st.addToken(start, end, lx, pre, k)
}

// addToken adds the token of the word buf[start:end], whose key is k (k.n
// is 0 when the word is longer than a key), with the flags pre.
func (st *workspace) addToken(start, end int, lx *lexicon, pre uint32, k key) {
	flags := pre
	if isASCIIDigit(byte(k.k0)) || k.n == 0 && isASCIIDigit(st.buf[start]) {
		flags |= tNumber
	}
	t := &st.toks[st.ntok]
	st.ntok++
	t.raw0, t.raw1 = uint16(start), uint16(end)
	if k.n != 0 {
		if e := lx.wordTab.find(k, k.tab()); e != nil {
			st.knownWord(t, e, flags, lx)
			return
		}
	}
	// The token's fields are stored one by one: a composite literal is
	// built on the stack and copied with wide loads that stall on its
	// narrow stores.
	t.flags, t.ant, t.word, t.root = flags, 0, wordNone, rootUnknown
	if k.n == 0 {
		st.unknownWord(t, fnv(st.buf[start:end]), k, lx)
	} else {
		st.unknownWord(t, uint32(k.fnv()>>32), k, lx)
	}
	st.flagsOr |= t.flags
}

// knownWord gives t, a word of the lexicon whose slot is e, what the
// lexicon knows of it, and flags.
func (st *workspace) knownWord(t *token, e *lexSlot, flags uint32, lx *lexicon) {
	flags |= e.flags
	st.flagsOr |= flags
	st.named |= 1 << (e.kind >> 2)
	t.st0, t.st1 = t.raw0, t.raw1
	t.hash, t.flags, t.ant, t.word, t.root = e.hash, flags, e.ant, e.kind>>2, e.root
	switch e.kind & 3 {
	case stemCanon:
		if !st.setStem(t, lx.stems[e.stem0:int(e.stem0)+maxKey], int(e.cut), e.hash) {
			t.root = rootUnknown
		}
	case stemPrefix:
		t.st1 = t.raw0 + uint16(e.cut)
	case stemY:
		if !st.writeY(t, int(e.cut)) {
			t.hash = fnv(st.stem(t))
			t.root = rootUnknown
		}
	}
}

// unknownWord stems a word the lexicon does not hold. rh is the hash of
// the word, k its key when it has one.
func (st *workspace) unknownWord(t *token, rh uint32, k key, lx *lexicon) {
	raw := st.buf[t.raw0:t.raw1]
	t.hash = rh
	s0, s1, ydone := stem(raw)
	if ydone {
		st.writeY(t, s1)
	} else {
		t.st0, t.st1 = t.raw0+uint16(s0), t.raw0+uint16(s1)
	}
	if t.st1-t.st0 == t.raw1-t.raw0 {
		return
	}
	if !ydone && k.n > 0 {
		sk := k.prefix(s1)
		t.hash = uint32(sk.fnv() >> 32)
		// A plural of a known noun ("timezones", "weekends"): look the stem
		// up. Other misses are content words; looking up their stems would
		// cost a probe for nothing.
		if raw[len(raw)-1] == 's' {
			st.pluralOf(t, sk, lx)
		}
		return
	}
	stem := st.stem(t)
	t.hash = fnv(stem)
	if raw[len(raw)-1] == 's' {
		if sk, ok := keyOf(stem); ok {
			st.pluralOf(t, sk, lx)
		}
	}
}

// pluralOf gives t, whose stem has key sk, what the lexicon knows of its
// stem.
func (st *workspace) pluralOf(t *token, sk key, lx *lexicon) {
	e := lx.wordTab.find(sk, sk.tab())
	if e == nil {
		return
	}
	if e.kind&3 == stemCanon {
		st.setStem(t, lx.stems[e.stem0:int(e.stem0)+maxKey], int(e.cut), e.hash)
	}
	t.flags |= e.flags
	t.ant = e.ant
}

// writeY sets the stem of t to the first cut bytes of the word followed by
// a y ("studies" → "study"), written after the text, and reports whether it
// did; without room for it, the stem is the word up to the y's suffix.
func (st *workspace) writeY(t *token, cut int) bool {
	p := st.nbuf
	if p+cut+1 > len(st.buf) {
		t.st0, t.st1 = t.raw0, t.raw0+uint16(cut+3)
		return false
	}
	copy(st.buf[p:], st.buf[t.raw0:int(t.raw0)+cut])
	st.buf[p+cut] = 'y'
	t.st0, t.st1 = uint16(p), uint16(p+cut+1)
	st.nbuf = p + cut + 1
	return true
}

// setStem writes a canonical stem, stem[:n], whose hash is h, after the
// text, and reports whether it did; without room for it, the stem is the
// word. stem has maxKey bytes, which are copied at once when there is room.
func (st *workspace) setStem(t *token, stem []byte, n int, h uint32) bool {
	p := st.nbuf
	switch {
	case p+maxKey <= len(st.buf):
		binary.LittleEndian.PutUint64(st.buf[p:p+8], binary.LittleEndian.Uint64(stem[:8]))
		binary.LittleEndian.PutUint64(st.buf[p+8:p+16], binary.LittleEndian.Uint64(stem[8:16]))
	case p+n <= len(st.buf):
		copy(st.buf[p:], stem[:n])
	default:
		t.st0, t.st1 = t.raw0, t.raw1
		t.hash = fnv(st.buf[t.st0:t.st1])
		return false
	}
	t.st0, t.st1 = uint16(p), uint16(p+n)
	t.hash = h
	st.nbuf = p + n
	return true
}

// loadTail returns the bytes of s from i (fewer than eight), little-endian,
// zero padded.
func loadTail(s string, i int) uint64 {
	if n := len(s); n >= 8 {
		// The last eight bytes, shifted past the ones before i.
		w := s[n-8:]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		return x >> (8 * uint(i+8-n))
	}
	var x uint64
	for k := len(s) - 1; k >= i; k-- {
		x = x<<8 | uint64(s[k])
	}
	return x
}

// asciiRun returns how many of the eight bytes of x (from the lowest) are
// ASCII letters or digits before any other byte, and x with its letters
// lowercased. Each byte is compared with the bounds of its class by adding
// a constant that carries into its top bit exactly when the byte is at
// least the bound; no byte carries into the next, since the top bits are
// cleared first.
func asciiRun(x uint64) (int, uint64) {
	const (
		ones = 0x0101010101010101
		tops = 0x8080808080808080
	)
	x7 := x &^ tops
	lc := x7 | 0x20*ones
	letter := (lc + (0x80-'a')*ones) &^ (lc + (0x7f-'z')*ones)
	digit := (x7 + (0x80-'0')*ones) &^ (x7 + (0x7f-'9')*ones)
	ok := (letter | digit) & tops &^ x
	return bits.TrailingZeros64(^ok&tops) >> 3, x | (letter&ok)>>2
}

// fnv hashes a word for the lexicon tables and the stem masks. Despite the
// name it is not FNV any more: words are hashed eight bytes at a time with a
// multiply-xorshift mix, which is several times faster on short words and
// spreads them as well. Tokens keep the high 32 bits (fnv); the tables use
// all 64 (fnv64, or key.hash for a word of at most 16 bytes).
func fnv(b []byte) uint32 { return uint32(fnv64(b) >> 32) }

const (
	fnvSeed  = 0x9E3779B97F4A7C15
	fnvRound = 0xff51afd7ed558ccd
	fnvFinal = 0xc4ceb9fe1a85ec53
)

func fnv64(b []byte) uint64 {
	h := uint64(len(b)) * fnvSeed
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * fnvRound
		h ^= h >> 32
		b = b[8:]
	}
	var tail uint64
	for i := 0; i < len(b); i++ {
		tail |= uint64(b[i]) << (8 * i)
	}
	h = (h ^ tail) * fnvFinal
	return h ^ h>>29
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
	for _, c := range w[:n] {
		if c-'a' > 'z'-'a' {
			return 0, n, false
		}
	}
	if n < 4 {
		return 0, n, false
	}
	// The rules in order (each needs the length it says): -ies/-ied → y;
	// -sses/-shes/-ches/-xes/-zes lose -es; another -s loses it unless
	// after s, u or i; -ing goes, then -ed unless after e, and either
	// undoubles a final consonant; then a final e goes.
	switch a, b, c := w[n-1], w[n-2], w[n-3]; {
	case n >= 5 && (a == 's' || a == 'd') && b == 'e' && c == 'i':
		return 0, n - 3, true
	case a == 's':
		switch {
		case n >= 5 && b == 'e' && (c == 'x' || c == 'z' || (c == 's' || c == 'h') && (w[n-4] == 's' || c == 'h' && w[n-4] == 'c')):
			n -= 2
		case b != 's' && b != 'u' && b != 'i':
			n--
		}
	case a == 'g':
		if n >= 6 && b == 'n' && c == 'i' {
			n = undouble(w, n-3)
		}
	case a == 'd':
		if n >= 5 && b == 'e' && c != 'e' {
			n = undouble(w, n-2)
		}
	}
	if n >= 4 && w[n-1] == 'e' {
		n--
	}
	return 0, n, false
}

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
