package antonyms

import (
	"slices"
	"strings"
	"testing"
)

func TestTableShape(t *testing.T) {
	t.Parallel()
	pairs := Pairs()
	if len(pairs) < 30 {
		t.Fatalf("want at least 30 pairs, have %d", len(pairs))
	}
	kinds := map[Kind]int{}
	sources := map[Source]int{}
	for i, p := range pairs {
		kinds[p.Kind]++
		sources[p.Source]++
		if len(p.A) == 0 || len(p.B) == 0 {
			t.Errorf("pair %d (%v) has an empty side", i, p)
		}
		a := map[string]bool{}
		for _, w := range p.A {
			a[w] = true
		}
		for _, w := range p.B {
			if a[w] {
				t.Errorf("pair %s: %q is on both sides", name(p), w)
			}
		}
		for _, side := range [][]string{p.A, p.B} {
			for _, w := range side {
				if w == "" {
					t.Errorf("pair %s has an empty word", name(p))
				}
				for _, r := range w {
					if r >= 'A' && r <= 'Z' {
						t.Errorf("pair %s: %q is not lowercase", name(p), w)
					}
				}
			}
		}
	}
	for _, k := range []Kind{Toggle, Relationship, Preference, State, Direction, Role} {
		if kinds[k] == 0 {
			t.Errorf("no pair of kind %s", k)
		}
	}
	// The lexicon comes from WordNet; the hand-written pairs fill its gaps.
	if sources[WordNet] < 500 || sources[Morphological] < 50 || sources[Hand] > sources[WordNet]/5 {
		t.Errorf("pairs by source: %v", sources)
	}
	t.Logf("%d pairs: %v", len(pairs), sources)
}

func TestOpposite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
		kind Kind
	}{
		{"enabled", "disabled", true, Toggle},
		{"Disabled", "enabled", true, Toggle},
		{"on", "off", true, Toggle},
		{"married", "single", true, Relationship},
		{"married", "divorced", true, Relationship},
		{"engaged", "married", false, ""},
		{"likes", "hates", true, Preference},
		{"likes", "loves", false, ""},
		{"full-time", "part-time", true, State},
		{"up", "down", true, Direction},
		{"tea", "coffee", false, ""},
		{"", "off", false, ""},
		// From WordNet, and its morphological negations.
		{"succeeded", "failed", true, State},
		{"correct", "incorrect", true, State},
		{"safe", "dangerous", true, State},
		{"winner", "loser", true, Role},
		{"comfortable", "uncomfortable", true, State},
		{"clean", "unclean", true, State},
		// Written by hand where WordNet lacks the pair or splits it.
		{"together", "apart", true, Relationship},
		{"required", "optional", true, Toggle},
		{"recommended", "deprecated", true, Toggle},
		{"uses", "avoids", true, Preference},
		{"works", "fails", true, State},
		{"accepted", "denied", true, Direction},
	}
	for _, tt := range tests {
		p, ok := opposite(tt.a, tt.b)
		if ok != tt.want || (ok && p.Kind != tt.kind) {
			t.Errorf("Opposite(%q, %q) = %v, %v; want %v, %s", tt.a, tt.b, p, ok, tt.want, tt.kind)
		}
	}
}

func TestPairsIsACopy(t *testing.T) {
	t.Parallel()
	p := Pairs()
	p[0].A[0] = "changed"
	if Pairs()[0].A[0] == "changed" {
		t.Fatal("Pairs exposes the table")
	}
}

// name is a short label for a pair: the first word of each side.
func name(p Pair) string { return p.A[0] + "/" + p.B[0] }

// opposite reports whether a and b (in any case) are on opposite sides of
// some pair, and which pair.
func opposite(a, b string) (Pair, bool) {
	a, b = strings.ToLower(a), strings.ToLower(b)
	for _, p := range Pairs() {
		if slices.Contains(p.A, a) && slices.Contains(p.B, b) || slices.Contains(p.B, a) && slices.Contains(p.A, b) {
			return p, true
		}
	}
	return Pair{}, false
}

func TestNegatedBase(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]string{
		"unencrypted": "encrypted", "nonrefundable": "refundable", "non-profit": "profit", "dislike": "like",
		"inaccessible": "accessible", "impossible": "possible", "irregular": "regular", "illegal": "legal",
		"unfit": "fit", "stateless": "stateful", "careless": "careful",
		// Not negations: a false friend, an assimilation that does not fit
		// its letter, too little left.
		"invaluable": "", "inflammable": "", "discover": "", "imbalance": "balance", "inbox": "", "irate": "", "undo": "",
	} {
		got, ok := NegatedBase(w)
		if want == "" && ok || want != "" && got != want {
			t.Errorf("NegatedBase(%q) = %q, %v; want %q", w, got, ok, want)
		}
	}
}
