package heuristics

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

// words returns the raw and stem forms of the tokens of s.
func words(s string) (raw, stems []string) {
	var st workspace
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
	var st workspace
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
		var st workspace
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

func TestHashSpanIsFnv(t *testing.T) {
	t.Parallel()
	var st workspace
	copy(st.buf[:], "abcdefghijklmnopqrstuvwxyz0123456789")
	for i := 0; i < 20; i++ {
		for j := i + 1; j <= 36; j++ {
			if st.hashSpan(i, j) != fnv(st.buf[i:j]) {
				t.Fatalf("hashSpan(%d, %d) differs from fnv", i, j)
			}
		}
	}
	if st.hashSpan(len(st.buf)-3, len(st.buf)) != fnv(st.buf[len(st.buf)-3:]) {
		t.Fatal("hashSpan at the end of the buffer")
	}
}
