package heuristics

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// words returns the raw and stem forms of the tokens of s.
func words(s string) (raw, stems []string) {
	st := Analyze(Input{Content: s})
	for i := range st.toks {
		raw = append(raw, st.raw(&st.toks[i]))
		stems = append(stems, st.stem(&st.toks[i]))
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
		{"Ana REPORTS_TO Bo", []string{"ana", "reports", "to", "bo"}, []string{"ana", "report", "to", "bo"}},
		{"Ana CTO_OF Acme", []string{"ana", "is", "cto", "of", "acme"}, []string{"ana", "be", "cto", "of", "acm"}},
		{"Ana HAS_VET Dr. Lee", []string{"ana", "vet", "is", "dr", "lee"}, []string{"ana", "vet", "be", "dr", "lee"}},
		{"Set NODE_OPTIONS first", []string{"set", "node_options", "first"}, []string{"set", "node_options", "first"}},
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

// TestClauses: where a statement's clauses start and end.
func TestClauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		starts []int // the first token of each clause
		hi     int   // where the first clause ends (before its fragments); -1: the end
	}{
		{"Lives in Vancouver, in a two-bedroom apartment", []int{0}, 3},
		{"Doctor is Dr. Nguyen", []int{0}, -1},
		{"Lives in Berlin since 2019", []int{0}, -1},
		{"Doesn't own a car since moving to Amsterdam", []int{0}, 4},
		{"Left Acme in March and joined Globex", []int{0, 4}, 4},
		{"Likes chess and sushi", []int{0}, -1},
		{"Actually, I work from home now", []int{0}, -1},
		{"Quit dairy and now eats a vegan diet", []int{0, 2}, 2},
		{"The user quit the band; too busy with work", []int{0}, 5},
		{"timezone: CET", []int{0}, -1},
		{"One of my cats died, so I have one cat now", []int{0, 5}, 5},
		{"Said she smokes", []int{1}, -1},
		{"The doctor told me that the knee is fine", []int{5}, -1},
		{"plan: free -> pro", []int{0}, -1},
		{"Update: timezone = EST", []int{1}, -1},
		{"As of March, the user drives a Corolla", []int{0}, -1},
	}
	for _, tt := range tests {
		st := Analyze(Input{Content: tt.in})
		var starts []int
		for _, c := range st.clauses {
			starts = append(starts, c.start)
		}
		hi := tt.hi
		if hi < 0 {
			hi = len(st.toks)
		}
		if !reflect.DeepEqual(starts, tt.starts) || len(st.clauses) == 0 || st.clauses[0].hi != hi {
			t.Errorf("%q: clauses start at %v, want %v; first ends at %d, want %d", tt.in, starts, tt.starts, st.clauses[0].hi, hi)
		}
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
		st := Analyze(Input{Content: s})
		if len(st.toks) > maxTokens {
			t.Fatalf("bounds: %d tokens", len(st.toks))
		}
		for _, c := range st.clauses {
			if c.start > c.hi || c.hi > c.end || c.end > len(st.toks) {
				t.Fatalf("clause [%d, %d, %d) of %d tokens", c.start, c.hi, c.end, len(st.toks))
			}
		}
		for i := range st.toks {
			raw, stem := st.raw(&st.toks[i]), st.stem(&st.toks[i])
			if raw == "" || len(stem) > len(raw)+maxStemGrowth {
				t.Fatalf("token %d: %q %q", i, raw, stem)
			}
			if !utf8.ValidString(raw) && utf8.ValidString(s) {
				t.Fatalf("token %q of valid input is not UTF-8", raw)
			}
		}
		_ = Decide(Input{Content: s}, Input{Content: "Lives in Toronto"})
		_ = Decide(Input{Content: "Doesn't drink coffee"}, Input{Content: s})
	})
}

// maxStemGrowth bounds how much longer a stem is than its word: a canonical
// stem or a y ("studies" → "study").
const maxStemGrowth = 8

func TestStem(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"lives": "liv", "living": "liv", "lived": "liv", "cats": "cat", "watches": "watch", "stopped": "stop",
		"stopping": "stop", "studies": "study", "classes": "class", "bus": "bus", "dog's": "dog", "tea": "tea",
		"coffee": "coffe", "agreed": "agreed", "café": "café", "4x4s": "4x4s", "falling": "fall", "buzzes": "buzz",
	}
	for w, want := range tests {
		if got := stem(w); got != want {
			t.Errorf("stem(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestWordTableFindsExactlyTheIndexedWords: the tokenizer's table answers
// as the lexicon's map does, for every word in it (each with its own
// entry), for the word's prefixes and extensions, and for words not in it.
func TestWordTableFindsExactlyTheIndexedWords(t *testing.T) {
	lx := defaultLexicon()
	ask := func(w string) {
		want, wantOK := lx.index[w]
		got, ok := findWord(&lx.table, w, fnv1a(w))
		gotB, okB := findWord(&lx.table, []byte(w), fnv1a(w))
		if ok != wantOK || got != want || okB != ok || gotB != got {
			t.Fatalf("%q: table %d %v / %d %v, map %d %v", w, got, ok, gotB, okB, want, wantOK)
		}
	}
	for w := range lx.index {
		ask(w)
		ask(w[:len(w)-1])
		ask(w + "s")
		ask(w + "zq")
	}
	for _, w := range []string{"", "amari", "zzz", "kubernetesz", "über"} {
		ask(w)
	}
	if text, h := appendLower(nil, "Ünïcode"); h != fnv1a(string(text)) {
		t.Fatalf("appendLower's hash %d is not the hash of %q", h, text)
	}
	if text, h := appendLower([]byte("x"), "MiXeD"); string(text) != "xmixed" || h != fnv1a("mixed") {
		t.Fatalf("appendLower: %q %d", text, h)
	}
}

// TestPredicateFiltersPassEveryKey: the filters in front of the predicate
// table pass every verb of every key, in the shape of its particle count:
// a filter that dropped one would silently lose that predicate.
func TestPredicateFiltersPassEveryKey(t *testing.T) {
	lx := defaultLexicon()
	for k := range lx.preds {
		verb, _, _ := strings.Cut(k, " ")
		m := strings.Count(k, " ")
		if m > 3 {
			continue // lookupPred reads at most three particles
		}
		if h := fnv1a(verb); !lx.predShapes[4].has(h) || !lx.predShapes[m].has(h) {
			t.Errorf("predicate %q: the filters refuse its verb %q", k, verb)
		}
	}
	var b hashBits
	b.set(7)
	if !b.has(7) {
		t.Fatal("a set bit is not had")
	}
}

// The filters in front of the analysis's word sets pass every word of their
// set however the text writes it (capitalised, in capitals), so that a
// filter never hides a word the set holds: the token's hash is its stem's,
// not the raw word's ("stated" and "states" are tokens of "state").
func TestWordFiltersPassTheirWords(t *testing.T) {
	lx := defaultLexicon()
	for _, f := range []struct {
		name   string
		words  map[string]bool
		filter *hashBits
	}{
		{"labels", labels, &lx.labelWords},
		{"reporting verbs", reportingVerbs, &lx.reportingWords},
		{"time anchors", timeAnchorWords, &lx.anchorWords},
	} {
		for w := range f.words {
			for _, form := range []string{w, strings.ToUpper(w[:1]) + w[1:], strings.ToUpper(w)} {
				toks, _ := tokenize(nil, nil, "Then "+form+" it", lx)
				if len(toks) != 3 || !f.filter.has(toks[1].hash) {
					t.Errorf("%s: the filter refuses %q", f.name, form)
				}
			}
		}
	}
}
