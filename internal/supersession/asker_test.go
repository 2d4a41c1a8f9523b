package supersession

import (
	"database/sql"
	"testing"
	"time"
)

// The background asker asks about the pairs a classification adds: each
// focus attribute against its siblings, the pairs the heuristics do not
// decide, a pair of two focus attributes once; never the pairs between
// the other siblings (asked when the newer of them came), which made it
// quadratic in a large aspect.
func TestFocusPairsAreTheClassificationsOwn(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	attr := func(id, content string, h int) *Attribute {
		return &Attribute{ID: id, AgentID: "a", AspectID: "life", Kind: KindAttribute,
			Content: sql.NullString{String: content, Valid: true}, CreatedAt: at(h)}
	}
	g := &Group{AgentID: "a", AspectID: "life", Attrs: []*Attribute{
		attr("car", "Drives a 2011 Corolla", 1),
		attr("oslo", "Lives in Oslo", 2),
		attr("helmet", "Keeps a spare helmet at the office", 3),
		attr("bikes", "Bikes everywhere these days", 4),
		attr("bergen", "Lives in Bergen", 5),
	}}
	sortGroup(g)
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, semantic: true, gate: GateAspect}
	got := map[[2]string]bool{}
	for _, pp := range focusPairs(g, map[string]bool{"bikes": true, "bergen": true}, in) {
		k := [2]string{pp.old.ID, pp.new.ID}
		if got[k] {
			t.Fatalf("pair %v twice", k)
		}
		got[k] = true
	}
	want := map[[2]string]bool{
		{"car", "bikes"}: true, {"oslo", "bikes"}: true, {"helmet", "bikes"}: true,
		{"car", "bergen"}: true, {"helmet", "bergen"}: true, {"bikes", "bergen"}: true,
		// oslo → bergen is the heuristics' (a new city), not the LLM's.
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing %v", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("unexpected %v (between siblings the classification does not touch, or the heuristics')", k)
		}
	}
}
