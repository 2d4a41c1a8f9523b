package supersession

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
)

// corpusStatements reads every statement of the labelled corpora.
func corpusStatements(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"../../testdata/pairs.jsonl", "../../testdata/pairs_holdout.jsonl"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var p struct{ Older, Newer string }
			if json.Unmarshal(sc.Bytes(), &p) == nil {
				out = append(out, p.Older, p.Newer)
			}
		}
		fh.Close()
	}
	return out
}

// bruteForce is the rule without blocking: every newer sibling, newest
// first. With a focus, the old attributes decided are the focus and those a
// newer focus attribute contradicts (at review confidence or above), each
// by the full rule. The blocked plan must find exactly what it finds.
func bruteForce(g *Group, in planInput) []Candidate {
	var out []Candidate
	for i, old := range g.Attrs {
		if o, _, _ := eligibility(old); !o {
			continue
		}
		if in.focus != nil && !in.focus[old.ID] && !focusContradicts(g, i, in) {
			continue
		}
		var apply, review *Candidate
		for j := len(g.Attrs) - 1; j > i; j-- {
			nw := g.Attrs[j]
			if _, n, _ := eligibility(nw); !n {
				continue
			}
			c, _, _ := decide(old, nw, in)
			if c == nil {
				continue
			}
			if c.Confidence >= in.thresholds.Min {
				apply = c
				break
			}
			if c.Confidence >= in.thresholds.Review && review == nil {
				review = c
			}
		}
		switch {
		case apply != nil:
			out = append(out, *apply)
		case review != nil:
			out = append(out, *review)
		}
	}
	return out
}

func focusContradicts(g *Group, i int, in planInput) bool {
	for j := i + 1; j < len(g.Attrs); j++ {
		nw := g.Attrs[j]
		if _, n, _ := eligibility(nw); !n || !in.focus[nw.ID] {
			continue
		}
		if c, _, _ := decide(g.Attrs[i], nw, in); c != nil && c.Confidence >= in.thresholds.Review {
			return true
		}
	}
	return false
}

func planGroup(g *Group, in planInput) planOutput { return plan(prepare(g, in), in) }

// Blocking changes how many pairs are decided, never what is decided: on
// groups drawn from the labelled corpora (hundreds of statements about the
// same aspect, shuffled in time), the blocked plan's supersessions and
// proposals equal the all-pairs plan's.
// TestBlockedPlanEqualsAllPairs: the blocked plan finds what deciding every
// pair finds, with keys made on first use or by Analyze beforehand.
func TestBlockedPlanEqualsAllPairs(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(1, 2))
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	totalPairs, blockedPairs := 0, 0
	for round := range 40 {
		n := 20 + r.IntN(300)
		g := &Group{AgentID: "a", AspectID: "asp"}
		for i := range n {
			a := &Attribute{ID: fmt.Sprintf("r%d-%04d", round, i), AgentID: "a", AspectID: "asp", Kind: "attribute",
				Content: sql.NullString{String: stmts[r.IntN(len(stmts))], Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)}
			if r.IntN(25) == 0 {
				a.Kind = "constraint"
			}
			if r.IntN(30) == 0 {
				a.Protected = true
			}
			g.Attrs = append(g.Attrs, a)
		}
		if round%2 == 1 {
			Analyze([]*Group{g}, 2) // the sweep's way: reused analyses, keys in shared blocks
		}
		want := bruteForce(g, in)
		got := planGroup(g, in)
		totalPairs += n * (n - 1) / 2
		blockedPairs += got.pairs
		if len(got.candidates) != len(want) {
			t.Fatalf("round %d: blocked plan found %d candidates, all pairs %d", round, len(got.candidates), len(want))
		}
		for k := range want {
			w, gc := want[k], got.candidates[k]
			if w.Old.ID != gc.Old.ID || w.New.ID != gc.New.ID || w.Confidence != gc.Confidence {
				t.Fatalf("round %d: %s→%s (%.2f) vs %s→%s (%.2f)", round, w.Old.ID, w.New.ID, w.Confidence, gc.Old.ID, gc.New.ID, gc.Confidence)
			}
		}
	}
	t.Logf("decided %d of %d pairs (%.1f%%)", blockedPairs, totalPairs, 100*float64(blockedPairs)/float64(totalPairs))
}

// With a focus (the inline hook), the narrowed plan decides exactly the old
// attributes the focus can change the fate of, each as the all-pairs plan
// would: an older sibling that a focus attribute contradicts goes to the
// newest sibling that contradicts it, focus or not.
func TestFocusedPlanEqualsAllPairsOnFocus(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 40 {
		n := 20 + r.IntN(200)
		g := &Group{AgentID: "a", AspectID: "asp"}
		focus := map[string]bool{}
		for i := range n {
			a := &Attribute{ID: fmt.Sprintf("f%d-%04d", round, i), AgentID: "a", AspectID: "asp", Kind: "attribute",
				Content: sql.NullString{String: stmts[r.IntN(len(stmts))], Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)}
			g.Attrs = append(g.Attrs, a)
			if r.IntN(15) == 0 {
				focus[a.ID] = true
			}
		}
		in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, focus: focus}
		want := bruteForce(g, in)
		got := planGroup(g, in).candidates
		if len(got) != len(want) {
			t.Fatalf("round %d: focused plan found %d candidates, all pairs %d", round, len(got), len(want))
		}
		for k := range want {
			if want[k].Old.ID != got[k].Old.ID || want[k].New.ID != got[k].New.ID {
				t.Fatalf("round %d: %s→%s vs %s→%s", round, want[k].Old.ID, want[k].New.ID, got[k].Old.ID, got[k].New.ID)
			}
		}
	}
}

// homeAttr is an attribute of agent "a"'s aspect "home", created on the
// first of month m of 2026.
func homeAttr(id, content string, m time.Month) *Attribute {
	return &Attribute{ID: id, AgentID: "a", AspectID: "home", Kind: "attribute",
		Content: sql.NullString{String: content, Valid: true}, CreatedAt: time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC)}
}

// A late classification must not make an older sibling lose to it when a
// newer sibling contradicts that sibling too (issue: "Lives in Oslo",
// created in February but classified after "Lives in Rome" of March, took
// "Lives in Paris" of January).
func TestFocusedPlanPicksTheNewestContradictingSibling(t *testing.T) {
	t.Parallel()
	g := &Group{AgentID: "a", AspectID: "home", Attrs: []*Attribute{
		homeAttr("paris", "Lives in Paris", time.January),
		homeAttr("oslo", "Lives in Oslo", time.February),
		homeAttr("rome", "Lives in Rome", time.March),
	}}
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, focus: map[string]bool{"oslo": true}}
	got := map[string]string{}
	for _, c := range planGroup(g, in).candidates {
		got[c.Old.ID] = c.New.ID
	}
	if got["paris"] != "rome" || got["oslo"] != "rome" || len(got) != 2 {
		t.Fatalf("decisions = %v, want paris→rome and oslo→rome", got)
	}
}

// TestAnAttributeTheHeuristicsFailOnIsLeftAlone: an attribute whose
// analysis failed (heuristics.Statement.Failure: no keys, every decision
// with it blocked) is counted as heuristics_failed and reported once, takes
// part in no pair, and its siblings are decided as if it were not there.
func TestAnAttributeTheHeuristicsFailOnIsLeftAlone(t *testing.T) {
	t.Parallel()
	failed := homeAttr("oslo", "Lives in Oslo", time.February)
	failed.keyed, failed.failure = true, "heuristics failed: index out of range" // as the analysis leaves it
	g := &Group{AgentID: "a", AspectID: "home", Attrs: []*Attribute{
		homeAttr("paris", "Lives in Paris", time.January),
		failed,
		homeAttr("rome", "Lives in Rome", time.March),
	}}
	out := planGroup(g, planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}})
	got := map[string]string{}
	for _, c := range out.candidates {
		got[c.Old.ID] = c.New.ID
	}
	if len(got) != 1 || got["paris"] != "rome" {
		t.Fatalf("decisions = %v, want only paris→rome", got)
	}
	if out.skips[SkipHeuristicsFailed] != 1 || len(out.failures) != 1 || out.failures[0].old != failed || out.failures[0].new != nil {
		t.Fatalf("skips %v, failures %+v: want the failed attribute once", out.skips, out.failures)
	}
}

// TestKeySlab: the key lists a slab hands out are copies that appending to
// cannot spill into the next one, across blocks.
func TestKeySlab(t *testing.T) {
	var s keySlab
	var got [][]heuristics.Key
	for i := range 3 * keySlabBlock / 5 {
		keys := make([]heuristics.Key, i%7)
		for j := range keys {
			keys[j] = heuristics.Key(i*10 + j)
		}
		c := s.take(keys)
		if len(keys) == 0 && c != nil {
			t.Fatalf("no keys: got %v, want nil", c)
		}
		clear(keys) // the caller reuses its buffer
		got = append(got, c)
		if i > 0 {
			_ = append(got[i-1], 42) // must not write into c
		}
	}
	for i, c := range got {
		if len(c) != i%7 {
			t.Fatalf("list %d: %d keys, want %d", i, len(c), i%7)
		}
		for j, k := range c {
			if k != heuristics.Key(i*10+j) {
				t.Fatalf("list %d: key %d is %d, want %d", i, j, k, i*10+j)
			}
		}
	}
}

// TestRecycledKeyIndexHoldsOnlyItsKeys: a table handed back by release and
// taken again, larger or smaller, holds the new group's keys and none of the
// previous group's (release empties only the slots it took).
func TestRecycledKeyIndexHoldsOnlyItsKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for round := range 200 {
		n := 1 + r.IntN(300)
		keys := make([][]heuristics.Key, n)
		include := make([]bool, n)
		want := map[heuristics.Key][]int32{}
		for i := range keys {
			include[i] = r.IntN(5) > 0
			for range r.IntN(6) {
				k := heuristics.Key(r.Uint64N(uint64(4 * n))) // repeated keys, colliding slots
				keys[i] = append(keys[i], k)
				if include[i] {
					want[k] = append([]int32{int32(i)}, want[k]...) // newest first
				}
			}
		}
		ix := newKeyIndex(keys, include)
		for k := range heuristics.Key(4 * n) {
			var got []int32
			ix.newer(k, -1, func(j int32) { got = append(got, j) })
			if fmt.Sprint(got) != fmt.Sprint(want[k]) {
				t.Fatalf("round %d, key %d: attributes %v, want %v", round, k, got, want[k])
			}
		}
		ix.release()
	}
}

// Each kind of attribute gets its own answer, the same when asked again
// (the answer is kept on the attribute).
func TestEligibilityOfEachKind(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := func(f func(a *Attribute)) *Attribute {
		a := &Attribute{ID: "x", Kind: KindAttribute, Content: sql.NullString{String: "Lives in Oslo", Valid: true}, CreatedAt: now}
		f(a)
		return a
	}
	for _, tc := range []struct {
		a        *Attribute
		old, new bool
		reason   string
	}{
		{ok(func(*Attribute) {}), true, true, ""},
		{ok(func(a *Attribute) { a.Protected = true }), false, true, SkipProtected},
		{ok(func(a *Attribute) { a.Kind = KindConstraint }), false, false, SkipConstraint},
		{ok(func(a *Attribute) { a.Kind = "fact" }), false, false, SkipUnknownKind},
		{ok(func(a *Attribute) { a.BadTime = true }), false, false, SkipBadTime},
		{ok(func(a *Attribute) { a.Content.String = " \t" }), false, false, SkipEmptyContent},
		{ok(func(a *Attribute) { a.Content.Valid = false }), false, false, SkipEmptyContent},
		{ok(func(a *Attribute) { a.Content.String = "Lives in \xff" }), false, false, SkipInvalidUTF8},
		{ok(func(a *Attribute) { a.Content.String = strings.Repeat("a", MaxContentBytes+1) }), false, false, SkipTooLong},
	} {
		for range 2 {
			old, nw, reason := eligibility(tc.a)
			if old != tc.old || nw != tc.new || reason != tc.reason {
				t.Errorf("%+v: got (%v, %v, %q), want (%v, %v, %q)", tc.a.Content, old, nw, reason, tc.old, tc.new, tc.reason)
			}
		}
	}
}
