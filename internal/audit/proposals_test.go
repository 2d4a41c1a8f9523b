package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// queueFixture: two agents' contradictions swept in shadow mode, one
// proposal per pair; the map gives each proposal's id by its old attribute.
func queueFixture(t *testing.T) (*pgtest.DB, *memtest.Seeder, map[string]string) {
	t.Helper()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	pairs := []struct{ agent, aspect, old, new string }{
		{"a", "home", "Lives in Toronto", "Lives in Vancouver"},                             // value_conflict 0.9
		{"a", "theme", "Prefers dark mode in every app", "Prefers light mode in every app"}, // antonym 0.85
		{"a", "diet", "Is vegetarian", "Is no longer vegetarian"},                           // negation_polarity 0.9
		{"a", "work", "Works at Acme", "Works at Globex"},                                   // value_conflict 0.9
		{"a", "family", "Is married to Alex", "Is divorced"},                                // antonym 0.6 (review band)
		{"a", "city", "Lives in Oslo", "Lives in Bergen"},                                   // value_conflict
		{"a", "team", "Works at Initech", "Works at Hooli"},                                 // value_conflict
		{"b", "home", "Lives in Paris", "Lives in Berlin"},                                  // value_conflict, agent b
	}
	for _, p := range pairs {
		asp := s.Aspect(p.agent, "E", p.aspect)
		s.Add(memtest.Attr{ID: p.agent + "-" + p.aspect + "-1", Agent: p.agent, Aspect: asp, Content: p.old},
			memtest.Attr{ID: p.agent + "-" + p.aspect + "-2", Agent: p.agent, Aspect: asp, Content: p.new})
	}
	sweepOnce(t, db.DB, cfg(shadowOn))
	ids := map[string]string{}
	rows, err := db.Query(`SELECT metadata->>'old_attribute_id', id FROM memory_history WHERE event = 'supersession_proposal'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var old, id string
		if err := rows.Scan(&old, &id); err != nil {
			t.Fatal(err)
		}
		ids[old] = id
	}
	if len(ids) != len(pairs) {
		t.Fatalf("fixture: %d proposals for %d pairs", len(ids), len(pairs))
	}
	return db, s, ids
}

func statusOf(t *testing.T, ops *audit.Ops, id string) audit.Proposal {
	t.Helper()
	ps, err := ops.Proposals(ctx, audit.ProposalFilter{IDs: []string{id}})
	if err != nil || len(ps) != 1 {
		t.Fatalf("proposal %s: %v %v", id, ps, err)
	}
	return ps[0]
}

// Every status of SPEC §10, derived from history and the rows as they are,
// with the precedence the queue documents (undone > applied > stale >
// reviewed > pending).
func TestProposalStatusIsDerived(t *testing.T) {
	t.Parallel()
	db, s, ids := queueFixture(t)
	ops := opsOf(db.DB)
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ops.Review(ctx, ids["a-theme-1"], true, "ok"))
	must(ops.Review(ctx, ids["a-diet-1"], false, "no"))
	if r := ops.Apply(ctx, cfg(), []string{ids["a-work-1"]})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	undo := ops.Apply(ctx, cfg(), []string{ids["a-city-1"]})[0]
	must(ops.Undo(ctx, cfg(), undo.HistoryID))
	s.Exec(`UPDATE entity_attributes SET content = 'Works at Initech (part time)' WHERE id = 'a-team-1'`)
	must(ops.Review(ctx, ids["a-family-1"], true, ""))
	s.Exec(`UPDATE entity_attributes SET status = 'deleted' WHERE id = 'a-family-2'`)

	cases := []struct {
		old, status, why string
	}{
		{"a-home-1", audit.StatusPending, ""},
		{"b-home-1", audit.StatusPending, ""},
		{"a-theme-1", audit.StatusAccepted, ""},
		{"a-diet-1", audit.StatusRejected, ""},
		{"a-work-1", audit.StatusApplied, ""},
		{"a-city-1", audit.StatusUndone, ""},
		{"a-team-1", audit.StatusStale, "old attribute a-team-1's content changed since"},
		{"a-family-1", audit.StatusStale, "new attribute a-family-2 is deleted now"},
	}
	for _, c := range cases {
		p := statusOf(t, ops, ids[c.old])
		if p.Status != c.status || !strings.Contains(p.StaleReason, c.why) {
			t.Errorf("%s: status %s (%s), want %s (%s)", c.old, p.Status, p.StaleReason, c.status, c.why)
		}
	}
	if p := statusOf(t, ops, ids["a-city-1"]); p.AppliedHistoryID != undo.HistoryID || p.RevertedHistoryID == "" {
		t.Errorf("undone proposal must name its supersession and revert: %+v", p)
	}
	if p := statusOf(t, ops, ids["a-family-1"]); p.Review == nil || p.Review.Verdict != audit.StatusAccepted {
		t.Errorf("a stale proposal keeps its review: %+v", p.Review)
	}

	counts, err := ops.ProposalCounts(ctx, audit.ProposalFilter{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"pending": 1, "accepted": 1, "rejected": 1, "applied": 1, "undone": 1, "stale": 2}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("counts[%s] = %d, want %d (%v)", k, counts[k], v, counts)
		}
	}
}

func TestProposalFilters(t *testing.T) {
	t.Parallel()
	db, _, ids := queueFixture(t)
	ops := opsOf(db.DB)
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		name   string
		filter audit.ProposalFilter
		want   int
	}{
		{"all", audit.ProposalFilter{}, 8},
		{"agent", audit.ProposalFilter{Agent: "b"}, 1},
		{"status", audit.ProposalFilter{Status: audit.StatusPending}, 8},
		{"signal", audit.ProposalFilter{Signal: "antonym"}, 2},
		{"signal and agent", audit.ProposalFilter{Signal: "value_conflict", Agent: "a"}, 5},
		{"min confidence", audit.ProposalFilter{MinConfidence: f(0.7)}, 7},
		{"max confidence", audit.ProposalFilter{MaxConfidence: f(0.6)}, 1},
		{"range", audit.ProposalFilter{MinConfidence: f(0.8), MaxConfidence: f(0.85)}, 1},
		{"ids", audit.ProposalFilter{IDs: []string{ids["a-home-1"], ids["b-home-1"]}}, 2},
		{"limit", audit.ProposalFilter{Limit: 3}, 3},
	}
	for _, c := range cases {
		ps, err := ops.Proposals(ctx, c.filter)
		if err != nil || len(ps) != c.want {
			t.Errorf("%s: %d proposals (%v), want %d", c.name, len(ps), err, c.want)
		}
	}
	// Paging newest first by (created_at, id) visits each proposal once.
	seen := map[string]bool{}
	page := audit.ProposalFilter{Limit: 3}
	for {
		ps, err := ops.Proposals(ctx, page)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		for _, p := range ps {
			if seen[p.ID] {
				t.Fatalf("page repeats %s", p.ID)
			}
			seen[p.ID] = true
		}
		page.Before = ps[len(ps)-1].ID
	}
	if len(seen) != 8 {
		t.Fatalf("paging saw %d of 8", len(seen))
	}
	if _, err := ops.Proposals(ctx, audit.ProposalFilter{Status: "maybe"}); err == nil {
		t.Fatal("an unknown status must be an error")
	}

	var tb, js bytes.Buffer
	all, _ := ops.Proposals(ctx, audit.ProposalFilter{Agent: "b"})
	if err := audit.WriteProposalsTable(&tb, all); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"STATUS", "pending", "Lives in Paris → Lives in Berlin", ids["b-home-1"]} {
		if !strings.Contains(tb.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, tb.String())
		}
	}
	if err := audit.WriteProposalsJSON(&js, all); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil || obj["id"] != ids["b-home-1"] || obj["status"] != "pending" {
		t.Fatalf("json: %v %v", obj, err)
	}
}

func TestReviewAll(t *testing.T) {
	t.Parallel()
	db, s, ids := queueFixture(t)
	ops := opsOf(db.DB)
	reviews := func() int {
		return s.Count(`SELECT count(*) FROM memory_history WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')`)
	}
	if _, err := ops.Review(ctx, ids["a-work-1"], true, "by hand"); err != nil {
		t.Fatal(err)
	}
	sel := audit.ProposalFilter{Signal: "value_conflict", Agent: "a"}

	dry, err := ops.ReviewAll(ctx, audit.BulkReview{Filter: sel, DryRun: true, Batch: 2})
	if err != nil || len(dry.Decided) != 4 || reviews() != 1 {
		t.Fatalf("dry run: %d selected, %d reviews, %v", len(dry.Decided), reviews(), err)
	}
	res, err := ops.ReviewAll(ctx, audit.BulkReview{Filter: sel, Note: "bulk", Batch: 2})
	if err != nil || len(res.Decided) != 4 || len(res.Skipped) != 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal_rejected'
		AND metadata->>'note' = 'bulk' AND metadata->>'agent_id' = 'a' AND changed_by = 'supersessiond:cli'`); n != 4 {
		t.Fatalf("%d rejection rows with note, agent and actor", n)
	}
	again, err := ops.ReviewAll(ctx, audit.BulkReview{Filter: sel})
	if err != nil || len(again.Decided) != 0 || reviews() != 5 {
		t.Fatalf("second run must decide nothing: %+v %v", again, err)
	}
	// Rejected pairs are vetoed: a live sweep leaves them alone and applies
	// the rest.
	sweepOnce(t, db.DB, cfg())
	if st, _ := s.Status("a-home-1"); st != "active" {
		t.Fatal("a bulk-rejected pair must not be applied by the sweep")
	}
	if st, _ := s.Status("b-home-1"); st != "superseded" {
		t.Fatal("agent b's proposal was not selected and is applied live")
	}
	// Reviews are bookkeeping: the brake does not stop them.
	res, err = ops.ReviewAll(ctx, audit.BulkReview{Filter: audit.ProposalFilter{Signal: "antonym"}, Accept: true})
	if err != nil || len(res.Decided) == 0 {
		t.Fatalf("frozen or not, reviews are recorded: %+v %v", res, err)
	}
}

func TestApplyAll(t *testing.T) {
	t.Parallel()
	db, s, ids := queueFixture(t)
	ops := opsOf(db.DB)
	for _, old := range []string{"a-home-1", "a-theme-1", "b-home-1"} {
		if _, err := ops.Review(ctx, ids[old], true, ""); err != nil {
			t.Fatal(err)
		}
	}
	s.Exec(`UPDATE entity_attributes SET protected = true WHERE id = 'b-home-1'`)

	_, err := ops.ApplyAll(ctx, cfg(frozenOn), audit.BulkApply{})
	refused(t, err, "mutationsFrozen")
	dry, err := ops.ApplyAll(ctx, cfg(), audit.BulkApply{DryRun: true})
	if err != nil || len(dry.Selected) != 3 || s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`) != 0 {
		t.Fatalf("dry: %+v %v", dry, err)
	}
	res, err := ops.ApplyAll(ctx, cfg(shadowOn), audit.BulkApply{Batch: 1})
	if err != nil || len(res.Results) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	for _, r := range res.Results {
		if r.ProposalID == ids["b-home-1"] {
			refused(t, r.Err, "protected")
		} else if r.Err != nil {
			t.Fatalf("%s: %v", r.ProposalID, r.Err)
		}
	}
	if st, _ := s.Status("a-home-1"); st != "superseded" {
		t.Fatal("accepted proposals are applied")
	}
	if st, _ := s.Status("a-diet-1"); st != "active" {
		t.Fatal("pending proposals are not applied by default")
	}
	// --status pending applies the pending ones: applying is the decision.
	res, err = ops.ApplyAll(ctx, cfg(), audit.BulkApply{Filter: audit.ProposalFilter{Status: audit.StatusPending, Agent: "a"}})
	if err != nil || len(res.Results) != 5 {
		t.Fatalf("pending: %+v %v", res, err)
	}
	undone, err := ops.UndoAll(ctx, cfg(), audit.ProposalFilter{Agent: "a", Signal: "negation_polarity"})
	if err != nil || len(undone) != 1 || undone[0].Err != nil {
		t.Fatalf("undo all: %+v %v", undone, err)
	}
	if p := statusOf(t, ops, ids["a-diet-1"]); p.Status != audit.StatusUndone {
		t.Fatalf("undone: %s", p.Status)
	}
}

// Bulk decisions are safe against everything else that writes at the same
// time: a live sweep, and other operators doing the same or the opposite.
// Each proposal is decided once, a rejected pair is never applied, and
// nothing is applied twice.
func TestBulkDecisionsUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Moves("a", "m", 60, "Toronto", "Vancouver")
	sweepOnce(t, db.DB, cfg(shadowOn))
	const proposals = 60
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`); n != proposals {
		t.Fatalf("%d proposals", n)
	}
	var wg sync.WaitGroup
	decided := make([]int, 3)
	errs := make(chan error, 8)
	for i := range decided {
		wg.Go(func() {
			res, err := opsOf(db.DB).ReviewAll(ctx, audit.BulkReview{Accept: i == 2, Batch: 7})
			if err != nil {
				errs <- err
				return
			}
			decided[i] = len(res.Decided)
		})
	}
	wg.Go(func() { liveSweep(t, db) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	reviews := s.Count(`SELECT count(*) FROM memory_history WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')`)
	if reviews != decided[0]+decided[1]+decided[2] {
		t.Fatalf("%d review rows, runs report %v", reviews, decided)
	}
	if n := s.Count(`SELECT count(DISTINCT metadata->>'proposal_id') FROM memory_history
		WHERE event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')`); n != reviews {
		t.Fatalf("a proposal was decided twice: %d distinct of %d", n, reviews)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history r JOIN memory_history x
		ON x.event = 'attribute_superseded' AND x.metadata->>'old_attribute_id' = r.metadata->>'old_attribute_id'
		AND x.metadata->>'new_attribute_id' = r.metadata->>'new_attribute_id'
		WHERE r.event = 'supersession_proposal_rejected'`); n != 0 {
		t.Fatalf("%d rejected pairs were applied anyway", n)
	}
	swept := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`)
	if reviews+swept < proposals {
		t.Fatalf("every proposal is either reviewed or superseded by the sweep: %d + %d < %d", reviews, swept, proposals)
	}
	// Whatever was accepted, three operators and a sweep apply once.
	applied := make([]int, 3)
	for i := range applied {
		wg.Go(func() {
			res, err := opsOf(db.DB).ApplyAll(ctx, cfg(), audit.BulkApply{Batch: 5})
			if err != nil {
				t.Error(err)
				return
			}
			for _, r := range res.Results {
				if r.Err == nil {
					applied[i]++
				}
			}
		})
	}
	wg.Go(func() { liveSweep(t, db) })
	wg.Wait()
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded' AND metadata ? 'proposal_id'`); n != applied[0]+applied[1]+applied[2] {
		t.Fatalf("%d applications recorded, runs report %v", n, applied)
	}
	if n := s.Count(`SELECT count(*) FROM (SELECT metadata->>'old_attribute_id' FROM memory_history
		WHERE event = 'attribute_superseded' GROUP BY 1 HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d attributes superseded twice", n)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	db, _, ids := queueFixture(t)
	ops := opsOf(db.DB)
	// value_conflict: home accepted+applied (right), work applied without
	// review then undone (wrong), city rejected (wrong), team accepted
	// (right), b-home pending. antonym: theme rejected, family pending.
	for old, accept := range map[string]bool{"a-home-1": true, "a-city-1": false, "a-team-1": true, "a-theme-1": false} {
		if _, err := ops.Review(ctx, ids[old], accept, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range ops.Apply(ctx, cfg(), []string{ids["a-home-1"], ids["a-work-1"]}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.ProposalID == ids["a-work-1"] {
			if _, err := ops.Undo(ctx, cfg(), r.HistoryID); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := ops.Stats(ctx, audit.StatsFilter{}, audit.Enforcement{})
	if err != nil {
		t.Fatal(err)
	}
	slice := func(ss []audit.Slice, name string) audit.Counts {
		for _, s := range ss {
			if s.Name == name {
				return s.Counts
			}
		}
		t.Fatalf("no slice %s in %+v", name, ss)
		return audit.Counts{}
	}
	vc := slice(st.BySignal, "value_conflict")
	// value_conflict: home, work, city, team (a), b-home, theme (it
	// carries both) = 6; decided: home (acc), work (applied unreviewed),
	// city (rej), team (acc), theme (rej) = 5; right: home, team = 2.
	got := fmt.Sprintf("%d %d %d %d %d %d %d %s", vc.Proposals, vc.Accepted, vc.Rejected, vc.Applied, vc.Undone, vc.Decided, vc.Pending,
		audit.FormatPrecision(vc.Precision))
	if want := "6 2 2 2 1 5 1 0.40"; got != want {
		t.Errorf("value_conflict: %s, want %s", got, want)
	}
	neg := slice(st.BySignal, "negation_polarity")
	if neg.Proposals != 1 || neg.Pending != 1 || neg.Precision != nil {
		t.Errorf("negation_polarity: %+v", neg)
	}
	if h := slice(st.ByMethod, "heuristic"); h.Proposals != 8 {
		t.Errorf("heuristic: %+v", h)
	}
	if st.Total.Proposals != 8 || st.Pending != 3 {
		t.Errorf("total %d pending %d", st.Total.Proposals, st.Pending)
	}
	if b := slice(st.ByConfidence, "0.6"); b.Proposals != 1 {
		t.Errorf("band 0.6: %+v", b)
	}
	onlyB, _ := ops.Stats(ctx, audit.StatsFilter{Agent: "b"}, audit.Enforcement{})
	if onlyB.Total.Proposals != 1 {
		t.Errorf("agent b: %+v", onlyB.Total)
	}
	var js, tb bytes.Buffer
	if err := audit.WriteStatsJSON(&js, st); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil || obj["by_signal"] == nil || obj["pending"] != float64(3) {
		t.Fatalf("json: %s %v", js.String(), err)
	}
	if err := audit.WriteStatsTable(&tb, st); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"SIGNAL", "value_conflict", "0.40", "3 pending", "METHOD", "heuristic", "CONFIDENCE"} {
		if !strings.Contains(tb.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, tb.String())
		}
	}
}

func TestProposalDetail(t *testing.T) {
	t.Parallel()
	db, s, ids := queueFixture(t)
	ops := opsOf(db.DB)
	asp := "a:E:home"
	s.Add(memtest.Attr{ID: "a-home-3", Agent: "a", Aspect: asp, Content: "Lives in Vancouver, near the park"})
	r := ops.Apply(ctx, cfg(), []string{ids["a-home-1"]})[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	d, err := ops.ProposalDetail(ctx, ids["a-home-1"])
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != audit.StatusApplied || d.Old == nil || d.Old.Status != "superseded" || d.New == nil || d.New.Content != "Lives in Vancouver" {
		t.Fatalf("detail: %+v old %+v new %+v", d.Proposal, d.Old, d.New)
	}
	if len(d.Siblings) != 1 || d.Siblings[0].ID != "a-home-3" {
		t.Fatalf("siblings: %+v", d.Siblings)
	}
	if len(d.Chain) != 2 || d.Chain[1].ID != "a-home-2" {
		t.Fatalf("chain: %+v", d.Chain)
	}
	var events []string
	for _, e := range d.History {
		events = append(events, e.Event)
	}
	if strings.Join(events, ",") != "supersession_proposal,attribute_superseded" {
		t.Fatalf("history: %v", events)
	}
	if _, err := ops.ProposalDetail(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown id: %v", err)
	}
}

// liveSweep is a live sweep run beside the test's goroutine: it reports
// with t.Error, which any goroutine may call.
func liveSweep(t *testing.T, db *pgtest.DB) {
	log := slog.New(slog.DiscardHandler)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: log})
	if _, err := sweep.New(jobs.Deps{DB: db.DB, Logger: log}, engine).Once(ctx, daemon.SettingsOf(cfg()).Sweep, sweep.Options{}); err != nil {
		t.Error(err)
	}
}
