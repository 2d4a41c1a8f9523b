package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/earned"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// standing finds a rule's standing in stats.
func standing(t *testing.T, st *audit.Stats, rule string) earned.Standing {
	t.Helper()
	for _, r := range st.Rules {
		if r.Rule == rule {
			return r
		}
	}
	t.Fatalf("no rule %s in %+v", rule, st.Rules)
	return earned.Standing{}
}

func describe(s earned.Standing) string {
	return fmt.Sprintf("%s %d/%d need %d", s.State, s.Correct, s.Decided, s.ReviewsNeeded)
}

// A rule earns auto-apply from its reviews: 35 accepted value_conflict
// proposals and no rejection earn it at the 0.9 target; a rule with a
// rejection, or with too few reviews, is on probation with the reviews it
// still needs; the LLM judge is a rule per model; an undo of an applied
// proposal, and an undo of a supersession a rule applied on its own, send
// it back to probation.
func TestRuleStandingsFromReviews(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Moves("a", "m", 35, "Toronto", "Ottawa")
	for i := range 2 {
		asp := s.Aspect("a", fmt.Sprintf("d%d", i), "diet")
		s.Add(memtest.Attr{ID: fmt.Sprintf("d%d-1", i), Agent: "a", Aspect: asp, Content: "Is vegetarian"},
			memtest.Attr{ID: fmt.Sprintf("d%d-2", i), Agent: "a", Aspect: asp, Content: "Is no longer vegetarian"})
	}
	asp := s.Aspect("a", "car", "getting around")
	s.Add(memtest.Attr{ID: "car-1", Agent: "a", Aspect: asp, Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: "car-2", Agent: "a", Aspect: asp, Content: "Bikes everywhere now"})
	sweepOnce(t, db.DB, cfg(shadowOn))
	// What the LLM judge of one model proposed (phase 2 writes these; the
	// row is what it will write: method semantic, the model named).
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, old_content, new_content, changed_by, reason, metadata)
		VALUES ('sem-1', 'car-1', 'supersession_proposal', 'Drives a 2011 Corolla', 'Bikes everywhere now', 'supersessiond:sweep', 'LLM',
		jsonb_build_object('agent_id', 'a', 'old_attribute_id', 'car-1', 'new_attribute_id', 'car-2', 'aspect_id', $1::text,
			'method', 'semantic', 'model', 'qwen3:8b', 'confidence', 0.85, 'mode', 'shadow',
			'signals', jsonb_build_array(jsonb_build_object('name', 'semantic_contradiction', 'confidence', 0.85, 'detail', 'sold it'))))`, asp)
	ops := opsOf(db.DB)
	if r, err := ops.ReviewAll(ctx, audit.BulkReview{Filter: audit.ProposalFilter{Signal: "value_conflict"}, Accept: true}); err != nil || len(r.Decided) != 35 {
		t.Fatalf("accept value_conflict: %v %+v", err, r)
	}
	var diet []string
	if err := db.Select(&diet, `SELECT id FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'old_attribute_id' LIKE 'd%' ORDER BY 1`); err != nil || len(diet) != 2 {
		t.Fatalf("diet proposals %v %v", diet, err)
	}
	for i, id := range append(diet, "sem-1") {
		if _, err := ops.Review(ctx, id, i != 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	earnedMode := audit.Enforcement{Mode: "earned", TargetPrecision: 0.9}
	stats := func() *audit.Stats {
		t.Helper()
		st, err := ops.Stats(ctx, audit.StatsFilter{}, earnedMode)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := stats()
	for rule, want := range map[string]string{
		"value_conflict":    "earned 35/35 need 0",
		"negation_polarity": fmt.Sprintf("probation 1/2 need %d", earned.ReviewsNeeded(1, 2, 0.9)),
		"llm:qwen3:8b":      "probation 1/1 need 34",
	} {
		if got := describe(standing(t, st, rule)); got != want {
			t.Errorf("%s: %s, want %s", rule, got, want)
		}
	}
	if b := standing(t, st, "value_conflict").Bound; b < 0.9 || b > 0.902 {
		t.Errorf("value_conflict bound %.4f, want 0.9011", b)
	}

	// An undo of an applied proposal: 34 right of 35.
	var m0 string
	if err := db.Get(&m0, `SELECT id FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'old_attribute_id' = 'm0-1'`); err != nil {
		t.Fatal(err)
	}
	applied := ops.Apply(ctx, cfg(), []string{m0})[0]
	if applied.Err != nil {
		t.Fatal(applied.Err)
	}
	if _, err := ops.Undo(ctx, cfg(), applied.HistoryID); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(standing(t, stats(), "value_conflict")), fmt.Sprintf("probation 34/35 need %d", earned.ReviewsNeeded(34, 35, 0.9)); got != want {
		t.Errorf("after an undo of an applied proposal: %s, want %s", got, want)
	}

	// A supersession the rule applied on its own (live, no proposal),
	// undone: one more wrong decision.
	s.Moves("a", "live", 1, "Rome", "Milan")
	sweepOnce(t, db.DB, cfg())
	var live string
	if err := db.Get(&live, `SELECT id FROM memory_history WHERE event = 'attribute_superseded' AND metadata->>'old_attribute_id' = 'live0-1'
		AND NOT metadata ? 'proposal_id'`); err != nil {
		t.Fatal(err)
	}
	if got := describe(standing(t, stats(), "value_conflict")); !strings.HasPrefix(got, "probation 34/35") {
		t.Errorf("a live supersession not undone is no evidence: %s", got)
	}
	if _, err := ops.Undo(ctx, cfg(), live); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(standing(t, stats(), "value_conflict")), fmt.Sprintf("probation 34/36 need %d", earned.ReviewsNeeded(34, 36, 0.9)); got != want {
		t.Errorf("after an undo of a live supersession: %s, want %s", got, want)
	}

	// Filters apply to the rules too; the output says each rule's state.
	if onlyB, err := ops.Stats(ctx, audit.StatsFilter{Agent: "b"}, earnedMode); err != nil || len(onlyB.Rules) != 0 {
		t.Errorf("agent b: %+v %v", onlyB.Rules, err)
	}
	var js, tb bytes.Buffer
	if err := audit.WriteStatsJSON(&js, st); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Enforcement audit.Enforcement `json:"enforcement"`
		Rules       []map[string]any  `json:"rules"`
	}
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil || obj.Enforcement.Mode != "earned" || len(obj.Rules) != 3 ||
		obj.Rules[2]["rule"] != "value_conflict" || obj.Rules[2]["state"] != "earned" || obj.Rules[2]["bound"] == nil || obj.Rules[2]["reviews_needed"] != float64(0) {
		t.Fatalf("json: %s (%v)", js.String(), err)
	}
	if err := audit.WriteStatsTable(&tb, st); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"maintenance.enforcement.mode earned, targetPrecision 0.9", "RULE", "REVIEWS NEEDED", "llm:qwen3:8b"} {
		if !strings.Contains(tb.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, tb.String())
		}
	}
	var rows []string
	for _, line := range strings.Split(tb.String(), "\n") {
		if f := strings.Fields(line); len(f) == 7 && (f[1] == "earned" || f[1] == "probation") {
			rows = append(rows, strings.Join(f, " "))
		}
	}
	if want := []string{"llm:qwen3:8b probation 0.207 1 1 1.00 34", fmt.Sprintf("negation_polarity probation 0.095 2 1 0.50 %d", earned.ReviewsNeeded(1, 2, 0.9)),
		"value_conflict earned 0.901 35 35 1.00 -"}; strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rule rows %q, want %q", rows, want)
	}
}
