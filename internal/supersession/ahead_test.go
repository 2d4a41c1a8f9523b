package supersession

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A batch planned ahead on the analysing goroutines, several groups at
// once, holds for each group the plan Process would make: the same
// decisions, pairs, skips and digest.
func TestPlannedAheadIsTheGroupsPlan(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(7, 8))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true}
	for round := range 20 {
		var batch []*Group
		for k := range 1 + r.IntN(12) {
			g := &Group{AgentID: "a", AspectID: fmt.Sprintf("asp%d-%d", round, k)}
			for i := range 2 + r.IntN(200) {
				a := &Attribute{ID: fmt.Sprintf("r%d-%d-%04d", round, k, i), AgentID: "a", AspectID: g.AspectID, Kind: KindAttribute,
					Content: sql.NullString{String: stmts[r.IntN(len(stmts))], Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)}
				a.Protected = r.IntN(30) == 0
				g.Attrs = append(g.Attrs, a)
			}
			batch = append(batch, g)
		}
		Analyze(batch, 2)
		newAhead(in).plan(batch, 3)
		for _, g := range batch {
			ahead := g.ahead
			p := g.takeAhead(in)
			if p == nil || p.ahead == nil || ahead == nil {
				t.Fatalf("round %d: group %s has no plan made ahead", round, g.AspectID)
			}
			keys := g.Keys
			want := planGroup(g, in)
			got := *p.ahead
			if got.pairs != want.pairs || len(got.candidates) != len(want.candidates) || fmt.Sprint(got.skips) != fmt.Sprint(want.skips) {
				t.Fatalf("round %d, %s: ahead %d pairs, %d decisions, skips %v; Process %d, %d, %v", round, g.AspectID,
					got.pairs, len(got.candidates), got.skips, want.pairs, len(want.candidates), want.skips)
			}
			for i := range want.candidates {
				w, h := want.candidates[i], got.candidates[i]
				if w.Old != h.Old || w.New != h.New || w.Confidence != h.Confidence || w.Mode != h.Mode {
					t.Fatalf("round %d: %s→%s (%v) planned ahead, Process plans %s→%s (%v)", round, h.Old.ID, h.New.ID, h.Confidence, w.Old.ID, w.New.ID, w.Confidence)
				}
			}
			if !bytes.Equal(keys, g.Keys) {
				t.Fatalf("round %d: the digest made ahead differs from Process's", round)
			}
		}
	}
}

// A plan made ahead is used only by a Process planning with the same
// inputs; it is forgotten either way.
func TestPlanMadeAheadWithOtherInputsIsNotUsed(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}}
	for name, other := range map[string]planInput{
		"thresholds": {thresholds: Thresholds{Min: 0.8, Review: 0.5}},
		"shadow":     {thresholds: in.thresholds, shadow: true},
		"digests":    {thresholds: in.thresholds, digests: true},
		"vetoes":     {thresholds: in.thresholds, vetoed: &Vetoes{pairs: map[[2]string]bool{{"o", "n"}: true}}},
		"focus":      {thresholds: in.thresholds, focus: map[string]bool{"o": true}},
		"semantic":   {thresholds: in.thresholds, semantic: true},
	} {
		g := &Group{AgentID: "a", AspectID: "asp", Attrs: []*Attribute{
			{ID: "o", Kind: KindAttribute, Content: sql.NullString{String: "Lives in Oslo", Valid: true}, CreatedAt: base},
			{ID: "n", Kind: KindAttribute, Content: sql.NullString{String: "Lives in Bergen", Valid: true}, CreatedAt: base.Add(time.Hour)},
		}}
		newAhead(in).plan([]*Group{g}, 2)
		if p := g.takeAhead(other); p != nil {
			t.Errorf("%s: a plan made ahead with other inputs was taken", name)
		}
		if g.ahead != nil {
			t.Errorf("%s: the plan made ahead was kept", name)
		}
	}
}
