package supersession

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Remembered keys decide exactly as fresh ones: across passes over the same
// groups whose attributes are edited, added and retimed between passes, the
// plan with the cache equals the plan without, and an edit is never served
// its old keys.
func TestKeyCacheDecidesAsFreshKeys(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(5, 6))
	cache := newKeyCache(500) // small: evictions happen too
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var contents []string
	var times []time.Time
	for i := range 300 {
		contents = append(contents, stmts[r.IntN(len(stmts))])
		times = append(times, base.Add(time.Duration(i)*time.Hour))
	}
	group := func() *Group {
		g := &Group{AgentID: "a", AspectID: "asp"}
		for i := range contents {
			g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprintf("x%04d", i), AgentID: "a", AspectID: "asp", Kind: "attribute",
				Content: sql.NullString{String: contents[i], Valid: true}, CreatedAt: times[i]})
		}
		return g
	}
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}}
	for pass := range 8 {
		fresh := planGroup(group(), in)
		cached := in
		cached.keys = cache
		got := planGroup(group(), cached)
		if !slices.EqualFunc(fresh.candidates, got.candidates, func(a, b Candidate) bool {
			return a.Old.ID == b.Old.ID && a.New.ID == b.New.ID && a.Confidence == b.Confidence
		}) {
			t.Fatalf("pass %d: the cached plan differs from the fresh one", pass)
		}
		for range 20 { // edits
			contents[r.IntN(len(contents))] = stmts[r.IntN(len(stmts))]
		}
		contents = append(contents, stmts[r.IntN(len(stmts))]) // a new attribute
		times = append(times, base.Add(time.Duration(len(times))*time.Hour))
	}
	if len(cache.items) > cache.max || cache.order.Len() != len(cache.items) {
		t.Fatalf("cache holds %d items (list %d), bound %d", len(cache.items), cache.order.Len(), cache.max)
	}
}

// The cache keys on what the analysis reads, the aspect's name with it: an
// aspect renamed ("" to "job") is not served the keys of its old name. In
// an aspect about someone's job, "Joined Sutter Health" fills the employer
// slot "Works at Kaiser" holds; under no name its keys meet nothing.
func TestKeyCacheReadsTheAspectName(t *testing.T) {
	t.Parallel()
	cache := newKeyCache(100)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	group := func(name string) *Group {
		g := &Group{AgentID: "a", AspectID: "asp"}
		for i, c := range []string{"Works at Kaiser", "Joined Sutter Health"} {
			g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprintf("x%d", i), AgentID: "a", AspectID: "asp", Kind: "attribute",
				Content: sql.NullString{String: c, Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)})
		}
		g.Name(name)
		return g
	}
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, keys: cache}
	if got := planGroup(group(""), in).candidates; len(got) != 0 {
		t.Fatalf("unnamed: %d candidates, want none", len(got))
	}
	got := planGroup(group("job"), in).candidates
	if len(got) != 1 || got[0].Old.ID != "x0" || got[0].New.ID != "x1" || got[0].Confidence < 0.7 {
		t.Fatalf("named \"job\": candidates %+v, want x1 retiring x0", got)
	}
}

// Naming a group after its attributes were analysed analyses them again.
func TestNamingAGroupAnalysesItAgain(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := &Group{AgentID: "a", AspectID: "asp"}
	for i, c := range []string{"Works at Kaiser", "Joined Sutter Health"} {
		g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprintf("x%d", i), AgentID: "a", AspectID: "asp", Kind: "attribute",
			Content: sql.NullString{String: c, Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)})
	}
	th := Thresholds{Min: 0.7, Review: 0.5}
	if j := Judge(g, th); len(j.Decisions) != 0 {
		t.Fatalf("unnamed: %+v, want no decision", j.Decisions)
	}
	g.Name("job")
	if j := Judge(g, th); len(j.Decisions) != 1 || j.Decisions[0].Old.ID != "x0" {
		t.Fatalf("named \"job\": %+v, want x1 retiring x0", j.Decisions)
	}
}
