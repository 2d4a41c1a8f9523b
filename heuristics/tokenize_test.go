package heuristics

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// newWorkspace is a workspace with heap buffers, for tests.
func newWorkspace() *workspace {
	s := new(storage)
	return &workspace{toks: s.toks[:], buf: s.buf[:]}
}

// words returns the raw and stem forms of the tokens of s.
func words(s string) (raw, stems []string) {
	st := newWorkspace()
	st.analyze(Input{Content: s}, defaultLexicon)
	for i := 0; i < st.ntok; i++ {
		raw = append(raw, string(st.raw(&st.toks[i])))
		stems = append(stems, string(st.stem(&st.toks[i])))
	}
	return raw, stems
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		raw, stem []string
	}{
		{"Lives in Toronto", []string{"lives", "in", "toronto"}, []string{"live", "in", "toronto"}},
		{"Doesn't drink coffee", []string{"doesn't", "drink", "coffee"}, []string{"doesn't", "drink", "coffe"}},
		{"Doesn’t drink", []string{"doesn't", "drink"}, []string{"doesn't", "drink"}},
		{"Rent is $1,800 a month", []string{"rent", "is", "1,800", "a", "month"}, []string{"rent", "be", "1,800", "a", "month"}},
		{"Wakes up at 7:30am", []string{"wakes", "up", "at", "7:30am"}, []string{"wake", "up", "at", "7:30am"}},
		{"Wi-Fi is on", []string{"wi-fi", "is", "on"}, []string{"wifi", "be", "on"}},
		{"Uses Node.js, C++ and C#", []string{"uses", "node.js", "c++", "and", "c#"}, []string{"use", "node.js", "c++", "and", "c#"}},
		{"Lives in São Paulo", []string{"lives", "in", "são", "paulo"}, []string{"live", "in", "são", "paulo"}},
		{"ZÜRICH", []string{"zürich"}, []string{"zürich"}},
		{"Dog's name", []string{"dog's", "name"}, []string{"dog", "name"}},
		{"studies cities", []string{"studies", "cities"}, []string{"study", "city"}},
		{"bad\xffbyte", []string{"bad", "byte"}, []string{"bad", "byt"}},
		{"'quoted' -dash- end.", []string{"quoted", "dash", "end"}, []string{"quot", "dash", "end"}},
		{"", nil, nil},
	}
	for _, tt := range tests {
		raw, stems := words(tt.in)
		if !reflect.DeepEqual(raw, tt.raw) || !reflect.DeepEqual(stems, tt.stem) {
			t.Errorf("%q: raw %q stems %q; want %q %q", tt.in, raw, stems, tt.raw, tt.stem)
		}
	}
}

func TestStemsAgree(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"lives", "living", "lived", "live"},
		{"plays", "playing", "played", "play"},
		{"stopped", "stopping", "stops", "stop"},
		{"cats", "cat"},
		{"watches", "watch"},
		{"uses", "using", "used", "use"},
	}
	for _, g := range groups {
		_, first := words(g[0])
		for _, w := range g[1:] {
			if _, s := words(w); !reflect.DeepEqual(s, first) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", g[0], first, w, s)
			}
		}
	}
}

func TestClauseBreaks(t *testing.T) {
	t.Parallel()
	st := newWorkspace()
	st.analyze(Input{Content: "Lives in Vancouver, in a two-bedroom apartment"}, defaultLexicon)
	if st.coreEnd != 3 {
		t.Errorf("core ends at %d, want 3", st.coreEnd)
	}
	st.analyze(Input{Content: "Doctor is Dr. Nguyen"}, defaultLexicon)
	if st.coreEnd != st.ntok {
		t.Errorf("abbreviation ended the clause at %d of %d", st.coreEnd, st.ntok)
	}
	st.analyze(Input{Content: "Lives in Berlin since 2019"}, defaultLexicon)
	if st.coreEnd != st.ntok {
		t.Errorf("'since 2019' ended the clause")
	}
	st.analyze(Input{Content: "Doesn't own a car since moving to Amsterdam"}, defaultLexicon)
	if st.coreEnd != 4 {
		t.Errorf("'since moving' did not end the clause: %d", st.coreEnd)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"Lives in Toronto", "Doesn't drink coffee anymore", "Rent is $1,800 a month", "7:30am",
		"Wi-Fi", "c++ c# node.js", "São Paulo", "住在东京", "\xff\xfe", "dog's'", "''''", "-.-,:",
		"studies", "İİİ", "a\u0301b", "Dr. Nguyen", "x@y.z_w",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := newWorkspace()
		st.analyze(Input{Content: s}, defaultLexicon)
		if st.ntok > maxTokens || st.nbuf > bufSize || st.coreEnd > st.ntok {
			t.Fatalf("bounds: %d tokens, %d bytes, core %d", st.ntok, st.nbuf, st.coreEnd)
		}
		for i := 0; i < st.ntok; i++ {
			tk := &st.toks[i]
			if tk.raw0 >= tk.raw1 || tk.st0 > tk.st1 || int(tk.raw1) > st.nbuf || int(tk.st1) > st.nbuf {
				t.Fatalf("token %d spans %+v, buffer %d", i, *tk, st.nbuf)
			}
			if !utf8.Valid(st.raw(tk)) && utf8.ValidString(s) {
				t.Fatalf("token %q of valid input is not UTF-8", st.raw(tk))
			}
		}
		_ = Decide(Input{Content: s}, Input{Content: "Lives in Toronto"})
		_ = Decide(Input{Content: "Doesn't drink coffee"}, Input{Content: s})
	})
}

// TestKeyHashIsFnv: a key hashes as fnv64 hashes its bytes, and so does
// every prefix of it.
func TestKeyHashIsFnv(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	for n := 1; n <= maxKey; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			k, ok := keyOf(b)
			if !ok || k.fnv() != fnv64(b) {
				t.Fatalf("key %x: hash %x, fnv64 %x", b, k.fnv(), fnv64(b))
			}
			for m := 1; m <= n; m++ {
				if p := k.prefix(m); p.fnv() != fnv64(b[:m]) {
					t.Fatalf("prefix %d of %x: hash %x, fnv64 %x", m, b, p.fnv(), fnv64(b[:m]))
				}
			}
		}
	}
	if _, ok := keyOf(make([]byte, maxKey+1)); ok {
		t.Fatal("a word longer than maxKey has a key")
	}
}

// TestASCIIRun checks the eight-bytes-at-once scan against the bytes.
func TestASCIIRun(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 2))
	alnum := func(c byte) bool { return c < utf8.RuneSelf && isASCIIAlnum(c) }
	check := func(x uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], x)
		want := 0
		for want < 8 && alnum(b[want]) {
			want++
		}
		n, lower := asciiRun(x)
		var l [8]byte
		binary.LittleEndian.PutUint64(l[:], lower)
		if n != want {
			t.Fatalf("%q: run %d, want %d", b, n, want)
		}
		for i := 0; i < n; i++ {
			if want := bytes.ToLower(b[i : i+1])[0]; l[i] != want {
				t.Fatalf("%q: byte %d lowercased to %q, want %q", b, i, l[i], want)
			}
		}
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			check(0x6161616161616161&^(0xff<<(8*pos)) | uint64(c)<<(8*pos))
		}
	}
	for range 100000 {
		x := r.Uint64()
		if r.IntN(2) == 0 {
			x &^= 0x8080808080808080
		}
		check(x)
	}
}

// TestLexiconTable: every word of the lexicon is found in the run-time
// table with its entry, and its stem as endWord derives it.
func TestLexiconTable(t *testing.T) {
	t.Parallel()
	lx := defaultLexicon
	for w, e := range lx.words {
		k, ok := keyOf([]byte(w))
		if !ok {
			t.Fatalf("%q has no key", w)
		}
		s := lx.wordTab.find(k, k.tab())
		if s == nil {
			t.Fatalf("%q is not in the table", w)
		}
		if s.flags != e.flags || s.ant != e.ant || s.kind>>2 != namedWords[w] {
			t.Errorf("%q: slot %+v, entry %+v", w, *s, e)
		}
		st := newWorkspace()
		st.tokenize(w, lx)
		if st.ntok != 1 || string(st.raw(&st.toks[0])) != w {
			continue // not a word as the tokenizer reads it ("e-mail" is, "n't" is not)
		}
		tk := &st.toks[0]
		want := w
		if e.stem != "" {
			want = e.stem
		} else if e.flags&nonContent == 0 || e.ant != 0 {
			_, s1, y := stem([]byte(w))
			want = w[:s1]
			if y {
				want += "y"
			}
		}
		if got := string(st.stem(tk)); got != want || tk.hash != fnv([]byte(want)) {
			t.Errorf("%q: stem %q hash %x, want %q %x", w, got, tk.hash, want, fnv([]byte(want)))
		}
	}
	for _, w := range []string{"toronto", "zzzzzzzz", "abcdefghijklmnop", "x"} {
		k, _ := keyOf([]byte(w))
		if lx.wordTab.find(k, k.tab()) != nil {
			t.Errorf("%q found in the lexicon", w)
		}
	}
}

// stemRule is stem as first written, rule by rule: the specification
// that stem, written for speed, must agree with.
func stemRule(w []byte) (s0, s1 int, y bool) {
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

// TestStemMatchesRules compares stem with stemRule on every word of up to
// six letters from the letters the rules look at, and on the lexicon.
func TestStemMatchesRules(t *testing.T) {
	t.Parallel()
	letters := []byte("abcdeghinsuxzy'A")
	w := make([]byte, 0, 8)
	var walk func()
	walk = func() {
		a0, a1, ay := stem(w)
		b0, b1, by := stemRule(w)
		if a0 != b0 || a1 != b1 || ay != by {
			t.Fatalf("stem(%q) = %d %d %v, the rules say %d %d %v", w, a0, a1, ay, b0, b1, by)
		}
		if len(w) == 6 {
			return
		}
		for _, c := range letters {
			w = append(w, c)
			walk()
			w = w[:len(w)-1]
		}
	}
	walk()
	for word := range defaultLexicon.words {
		for _, suf := range []string{"", "s", "es", "ing", "ed", "'s", "ies", "ied"} {
			b := []byte(word + suf)
			a0, a1, ay := stem(b)
			b0, b1, by := stemRule(b)
			if a0 != b0 || a1 != b1 || ay != by {
				t.Fatalf("stem(%q) = %d %d %v, the rules say %d %d %v", b, a0, a1, ay, b0, b1, by)
			}
		}
	}
}

// TestSmallStorageBound checks what smallStorage rests on: no rune
// lowercases to more than 1.5 times its length, and no canonical stem is
// more than one byte longer than its word. Then it analyses short
// attributes built to fill the buffers with both storages.
func TestSmallStorageBound(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if l, n := utf8.RuneLen(unicode.ToLower(r)), utf8.RuneLen(r); 2*l > 3*n {
			t.Fatalf("%U lowercases from %d to %d bytes", r, n, l)
		}
	}
	for w, e := range defaultLexicon.words {
		if len(e.stem) > len(w)+1 {
			t.Errorf("canonical stem %q of %q is longer than the word plus one byte", e.stem, w)
		}
	}
	r := rand.New(rand.NewPCG(3, 3))
	var vocab []string
	for w := range defaultLexicon.words {
		vocab = append(vocab, w)
	}
	slices.Sort(vocab)
	parts := []string{"Ⱥ", "ȺȺ", "had", "led", "shot", "studies", "flies", "a", "I", " ", ",", ".", "'s", "-", "é", "\xff"}
	for range 20000 {
		var b strings.Builder
		for b.Len() < smallInput {
			if r.IntN(2) == 0 {
				b.WriteString(parts[r.IntN(len(parts))])
			} else {
				b.WriteString(vocab[r.IntN(len(vocab))])
			}
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		in := b.String()
		for len(in) > smallInput {
			in = in[:len(in)-1]
		}
		var small smallStorage
		w := &workspace{toks: small.toks[:], buf: small.buf[:]}
		w.analyze(Input{Content: in}, defaultLexicon)
		big := newWorkspace()
		big.analyze(Input{Content: in}, defaultLexicon)
		if w.nbuf > 7*len(in)/2+1 {
			t.Fatalf("%q: %d bytes of buffer, more than the bound", in, w.nbuf)
		}
		if w.frame != big.frame || !slices.Equal(w.toks[:w.ntok], big.toks[:big.ntok]) || !bytes.Equal(w.buf[:w.nbuf], big.buf[:big.nbuf]) {
			t.Fatalf("%q: analysed differently with small buffers", in)
		}
	}
}
