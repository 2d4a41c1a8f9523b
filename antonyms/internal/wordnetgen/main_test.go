package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent regenerates the tables from the WordNet files
// when they are installed (Debian: wordnet-base) and compares them with the
// committed wordnet.go, so that a change to the generator is never left
// ungenerated.
func TestGeneratedFileIsCurrent(t *testing.T) {
	const dir = "/usr/share/wordnet"
	if _, err := os.Stat(dir + "/data.adj"); err != nil {
		t.Skip("WordNet is not installed:", err)
	}
	got, err := generate(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../wordnet.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("antonyms/wordnet.go is stale: run go generate ./antonyms")
	}
}

func TestForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		got, want string
	}{
		{thirdPerson("watch"), "watches"}, {thirdPerson("carry"), "carries"}, {thirdPerson("play"), "plays"},
		{pastForm("like"), "liked"}, {pastForm("carry"), "carried"}, {gerund("tie"), "tying"},
		{gerund("make"), "making"}, {gerund("agree"), "agreeing"}, {comparative("late", "er"), "later"},
		{comparative("happy", "est"), "happiest"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestDerivedPair: what derivations keep of WordNet's derivational links.
func TestDerivedPair(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pos  byte
		w    string
		tpos byte
		tw   string
		a, b string
		keep bool
	}{
		{'a', "allergic", 'n', "allergy", "allergic", "allergy", true},
		{'n', "contribution", 'v', "contribute", "contribute", "contribution", true},
		{'v', "retire", 'n', "retirement", "retire", "retirement", true},
		{'v', "employ", 'n', "employer", "", "", false},   // a doer
		{'a', "bright", 'n', "brightness", "", "", false}, // how, not what
		{'v', "walk", 'n', "walking", "", "", false},      // an inflection
		{'v', "run", 'v', "race", "", "", false},          // no noun
	} {
		p, ok := derivedPair(tt.pos, tt.w, tt.tpos, tt.tw)
		if ok != tt.keep || ok && (p.a != tt.a || p.b != tt.b) {
			t.Errorf("%s/%s: %+v %v, want %s/%s %v", tt.w, tt.tw, p, ok, tt.a, tt.b, tt.keep)
		}
	}
}
