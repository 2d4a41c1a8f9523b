package heuristics

import (
	"strings"
	"testing"
)

// broken returns the analysis of content with its first clause reaching
// past the statement's words: the shape a bug in the analysis would leave,
// on which reading the clause panics.
func broken(content string) *Statement {
	st := Analyze(Input{Content: content})
	st.clauses[0].hi = len(st.toks) + 8
	st.clauses[0].valIdx |= 1 << (len(st.toks) + 4)
	return st
}

// TestFailuresAreContained: a panic of the heuristics on one statement (a
// bug some content reaches) blocks that statement's decisions and gives it
// no keys; it neither stops the caller nor decides anything, and the
// statement says why.
func TestFailuresAreContained(t *testing.T) {
	t.Parallel()
	good := Analyze(Input{Content: "Lives in Toronto"})

	// A decision that panics is blocked, in either order.
	for _, pair := range [][2]*Statement{{broken("Lives in Vancouver"), good}, {good, broken("Moved to Vancouver")}} {
		d := DecideAnalyzed(pair[0], pair[1])
		if d.Blocked != BlockedFailure || d.Confidence != 0 || d.Method != "" || len(d.Signals) != 0 {
			t.Fatalf("decision on a failing pair = %+v, want blocked as %q", d, BlockedFailure)
		}
		if !strings.Contains(d.Reason, "heuristics failed") {
			t.Fatalf("reason %q does not say the heuristics failed", d.Reason)
		}
	}

	// Keys that panic are none, and the statement is failed from then on:
	// every decision with it is blocked without being tried.
	st := broken("Lives in Vancouver")
	anchors, probes := st.BlockKeys([]Key{1}, []Key{2})
	if len(anchors) != 1 || anchors[0] != 1 || len(probes) != 1 || probes[0] != 2 {
		t.Fatalf("keys of a failing statement = %v, %v: want the caller's slices untouched", anchors, probes)
	}
	if st.Failure() == "" {
		t.Fatal("a statement whose keys panicked reports no failure")
	}
	if d := DecideAnalyzed(good, st); d.Blocked != BlockedFailure {
		t.Fatalf("decision with a failed statement = %+v", d)
	}
	if a, p := st.BlockKeys(nil, nil); len(a)+len(p) != 0 {
		t.Fatalf("a failed statement has keys %v %v", a, p)
	}

	// The good statement is unharmed, and the analysis of the same content
	// afresh decides as before.
	if good.Failure() != "" || Analyze(Input{Content: "Lives in Vancouver"}).Failure() != "" {
		t.Fatal("a good statement reports a failure")
	}
	if d := DecideAnalyzed(good, Analyze(Input{Content: "Lives in Vancouver"})); d.Confidence < 0.7 {
		t.Fatalf("decision after a contained failure = %+v", d)
	}
}

// TestContainRecovers: the analysis's recovery hands over what panicked.
func TestContainRecovers(t *testing.T) {
	t.Parallel()
	var got string
	func() {
		defer contain(func(why string) { got = why })
		var toks []token
		_ = toks[3]
	}()
	if !strings.Contains(got, "heuristics failed") || !strings.Contains(got, "index out of range") {
		t.Fatalf("contained %q", got)
	}
}
