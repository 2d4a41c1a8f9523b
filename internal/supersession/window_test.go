package supersession

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/llm"
)

var aspectGate = Thresholds{Min: 0.7, Review: 0.5}

// dayAttr is an attribute of agent "a"'s aspect asp, created d days into 2025.
func dayAttr(id, content string, d int) *Attribute {
	return &Attribute{ID: id, AgentID: "a", AspectID: "asp", Kind: KindAttribute,
		Content: sql.NullString{String: content, Valid: true}, CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d)}
}

func pendingOf(out planOutput) []pendingPair {
	var ps []pendingPair
	for _, p := range out.pending {
		ps = append(ps, p)
	}
	return ps
}

// Under the aspect gate a pair that shares no content word, which no
// heuristic reads, reaches the LLM; under Signet's overlap rule it never does.
func TestAspectGateAsksAPairSharingNoWord(t *testing.T) {
	t.Parallel()
	mk := func() *Group {
		return &Group{AgentID: "a", AspectID: "asp", AspectName: "getting around", Attrs: []*Attribute{
			dayAttr("o", "Drives a 2011 Corolla", 0),
			dayAttr("n", "Bikes everywhere now", 200),
		}}
	}
	for _, tc := range []struct {
		gate Gate
		want int
	}{{GateAspect, 1}, {GateOverlap, 0}, {"", 0}} {
		g := mk()
		in := planInput{thresholds: aspectGate, semantic: true, gate: tc.gate}
		if c, _, _ := decide(g.Attrs[0], g.Attrs[1], planInput{thresholds: aspectGate}); c != nil {
			t.Fatalf("a heuristic fired on the pair (%v): the test needs a pair only a model can read", c.Signals)
		}
		if got := len(planGroup(g, in).pending); got != tc.want {
			t.Errorf("gate %q: %d pairs for the LLM, want %d", tc.gate, got, tc.want)
		}
	}
}

// A small aspect is one window: every statement up to the newest one being
// decided, constraints and protected statements included (context), in time
// order; the pairs the heuristics decided are not the window's to settle.
func TestSmallAspectIsOneWindow(t *testing.T) {
	t.Parallel()
	rule := dayAttr("rule", "Never suggest car dealerships", 50)
	rule.Kind = KindConstraint
	pinned := dayAttr("pinned", "Keeps a bike at the office", 60)
	pinned.Protected = true
	g := &Group{AgentID: "a", AspectID: "asp", AspectName: "getting around", Attrs: []*Attribute{
		dayAttr("car", "Drives a 2011 Corolla", 0),
		dayAttr("toronto", "Lives in Toronto", 10),
		rule, pinned,
		dayAttr("vancouver", "Lives in Vancouver", 100),
		dayAttr("bikes", "Bikes everywhere now", 200),
	}}
	in := planInput{thresholds: aspectGate, semantic: true, gate: GateAspect}
	out := planGroup(g, in)
	ws := planWindows(g, pendingOf(out), DefaultMaxStatements)
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1", len(ws))
	}
	w := ws[0]
	var ids []string
	for _, a := range w.Attrs {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, " ") != "car toronto rule pinned vancouver bikes" {
		t.Errorf("window shows %v", ids)
	}
	settles := map[string]bool{}
	for _, p := range w.Pairs {
		settles[p.old.ID+">"+p.new.ID] = true
	}
	if !settles["car>bikes"] || settles["toronto>vancouver"] || settles["pinned>bikes"] || settles["rule>bikes"] {
		t.Errorf("window settles %v: want car>bikes, not the heuristics' toronto>vancouver nor pairs with a constraint or a protected older", settles)
	}
	req := w.Request()
	if req.Aspect != "getting around" || !req.Statements[2].Constraint || req.Statements[5].Text != "Bikes everywhere now" {
		t.Errorf("request %+v", req)
	}
}

// windowGroup is n statements drawn from the labelled corpora, an hour
// apart.
func windowGroup(stmts []string, r *rand.Rand, round, n int) *Group {
	g := &Group{AgentID: "a", AspectID: "asp", AspectName: "things"}
	for i := range n {
		a := dayAttr(fmt.Sprintf("w%d-%04d", round, i), stmts[r.IntN(len(stmts))], 0)
		a.CreatedAt = a.CreatedAt.Add(time.Duration(i) * time.Hour)
		if r.IntN(30) == 0 {
			a.Kind = KindConstraint
		}
		g.Attrs = append(g.Attrs, a)
	}
	return g
}

// everyPair is every pair of eligible attributes, as an aspect with no
// heuristic decision leaves them under the aspect gate.
func everyPair(g *Group) []pendingPair {
	var ps []pendingPair
	for i, o := range g.Attrs {
		for _, n := range g.Attrs[i+1:] {
			if oe, _, _ := eligibility(o); !oe {
				continue
			}
			if _, ne, _ := eligibility(n); ne {
				ps = append(ps, pendingPair{o, n})
			}
		}
	}
	return ps
}

// An aspect larger than a window is several windows, none larger than the
// limit, that settle every pending pair exactly once, with both of its
// statements shown, in time order; the same input gives the same windows.
func TestLargeAspectWindowsSettleEveryPairOnce(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 24 {
		n := 25 + r.IntN(130)
		limit := []int{24, 5, 2}[round%3]
		g := windowGroup(stmts, r, round, n)
		pending := everyPair(g)
		if round%2 == 1 { // only some pairs left by the heuristics
			pending = slices.DeleteFunc(pending, func(pendingPair) bool { return r.IntN(3) > 0 })
		}
		ws := planWindows(g, pending, limit)
		settled := map[[2]*Attribute]int{}
		for _, w := range ws {
			if len(w.Attrs) > limit || len(w.Attrs) < 2 || len(w.Pairs) == 0 {
				t.Fatalf("round %d: a window of %d statements settling %d pairs (limit %d)", round, len(w.Attrs), len(w.Pairs), limit)
			}
			if !slices.IsSortedFunc(w.Attrs, olderFirst) {
				t.Fatalf("round %d: a window out of time order", round)
			}
			for _, p := range w.Pairs {
				if !slices.Contains(w.Attrs, p.old) || !slices.Contains(w.Attrs, p.new) {
					t.Fatalf("round %d: a window settles a pair it does not show", round)
				}
				settled[[2]*Attribute{p.old, p.new}]++
			}
		}
		for _, p := range pending {
			if settled[[2]*Attribute{p.old, p.new}] != 1 {
				t.Fatalf("round %d: pair %s>%s settled %d times", round, p.old.ID, p.new.ID, settled[[2]*Attribute{p.old, p.new}])
			}
		}
		if len(settled) != len(pending) {
			t.Fatalf("round %d: %d pairs settled, %d pending", round, len(settled), len(pending))
		}
		again := planWindows(g, slices.Clone(pending), limit)
		for i := range ws {
			if ws[i].Key("m") != again[i].Key("m") {
				t.Fatalf("round %d: window %d differs between two calls", round, i)
			}
		}
		if round%3 == 0 && round%2 == 0 {
			t.Logf("%d statements, %d pairs: %d windows of at most %d", n, len(pending), len(ws), limit)
		}
	}
}

// Past the limit a window is the focus, then its partners that share a
// blocking key with it, then the newest others.
func TestWindowPriority(t *testing.T) {
	t.Parallel()
	g := &Group{AgentID: "a", AspectID: "asp", AspectName: "home"}
	g.Attrs = append(g.Attrs, dayAttr("toronto", "Lives in Toronto", 0), dayAttr("lisbon", "Lives in Lisbon", 1))
	for i := range 10 {
		g.Attrs = append(g.Attrs, dayAttr(fmt.Sprintf("h%d", i), fmt.Sprintf("Hobby number %d is fun", i), 10+i))
	}
	focus := dayAttr("porto", "Lives in Porto", 100)
	g.Attrs = append(g.Attrs, focus)
	var pending []pendingPair
	for _, a := range g.Attrs[:len(g.Attrs)-1] {
		pending = append(pending, pendingPair{a, focus})
	}
	ws := planWindows(g, pending, 5)
	var first []string
	for _, a := range ws[0].Attrs {
		first = append(first, a.ID)
	}
	if got := strings.Join(first, " "); got != "toronto lisbon h8 h9 porto" {
		t.Fatalf("first window %q, want the focus, the two sharing its key, then the newest others", got)
	}
}

// An answer settles the window's own pairs: those it retires with their
// confidence and the reply's reasoning, the rest as no contradiction;
// retirements of pairs it does not settle are counted, never used; a failed
// window leaves its pairs failed.
func TestWindowAnswer(t *testing.T) {
	t.Parallel()
	car, brakes, bikes := dayAttr("car", "Drives a 2011 Corolla", 0), dayAttr("brakes", "Corolla needs new brakes", 5), dayAttr("bikes", "Bikes everywhere now", 9)
	g := &Group{AgentID: "a", AspectID: "asp", Attrs: []*Attribute{car, brakes, bikes}}
	w := &Window{Group: g, Attrs: g.Attrs, Pairs: []pendingPair{{car, bikes}, {brakes, bikes}}}
	got, unowned := w.answer(llm.WindowVerdict{Reasoning: "sold it", Retired: []llm.Retirement{{Older: 1, Newer: 3, Confidence: 0.9}, {Older: 1, Newer: 2, Confidence: 0.8}}})
	if unowned != 1 || len(got) != 2 {
		t.Fatalf("unowned %d, verdicts %v", unowned, got)
	}
	if v := got[keyOf(car, bikes)]; !v.contradicts || v.confidence != 0.9 || v.reasoning != "sold it" {
		t.Errorf("car>bikes %+v", v)
	}
	if v, ok := got[keyOf(brakes, bikes)]; !ok || v.contradicts || v.failed {
		t.Errorf("brakes>bikes %+v (settled: no contradiction)", v)
	}
	failed := verdicts{}
	w.failed(failed)
	if !failed[keyOf(car, bikes)].failed || !failed[keyOf(brakes, bikes)].failed {
		t.Errorf("failed window: %v", failed)
	}
}

// Under the aspect gate the plan decides exactly what deciding every pair
// decides, whatever the LLM says of each pair: the candidate index that
// admits every pair is complete, with a focus too.
func TestAspectGatePlanEqualsAllPairs(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 30 {
		g := windowGroup(stmts, r, round, 20+r.IntN(120))
		known := verdicts{}
		for _, p := range everyPair(g) {
			known[keyOf(p.old, p.new)] = semanticVerdict{contradicts: r.IntN(4) == 0, confidence: []float64{0.55, 0.75, 0.95}[r.IntN(3)]}
		}
		in := planInput{thresholds: aspectGate, semantic: true, gate: GateAspect, known: known}
		if round%2 == 1 {
			in.focus = map[string]bool{}
			for _, a := range g.Attrs {
				if r.IntN(10) == 0 {
					in.focus[a.ID] = true
				}
			}
		}
		want := bruteForce(g, in)
		got := planGroup(g, in)
		if len(got.pending) > 0 || len(got.candidates) != len(want) {
			t.Fatalf("round %d: %d candidates (%d pending), all pairs %d", round, len(got.candidates), len(got.pending), len(want))
		}
		for k := range want {
			if want[k].Old != got.candidates[k].Old || want[k].New != got.candidates[k].New || want[k].Method != got.candidates[k].Method {
				t.Fatalf("round %d: %s→%s %s vs %s→%s %s", round, want[k].Old.ID, want[k].New.ID, want[k].Method,
					got.candidates[k].Old.ID, got.candidates[k].New.ID, got.candidates[k].Method)
			}
		}
	}
}

// JudgeWindows: the heuristics decide what they read, the LLM what is left,
// one request per window; a failing LLM leaves its pairs undecided and the
// heuristics' decisions stand.
func TestJudgeWindows(t *testing.T) {
	t.Parallel()
	mk := func() *Group {
		return &Group{AgentID: "a", AspectID: "asp", AspectName: "life", Attrs: []*Attribute{
			dayAttr("car", "Drives a 2011 Corolla", 0),
			dayAttr("toronto", "Lives in Toronto", 10),
			dayAttr("vancouver", "Lives in Vancouver", 100),
			dayAttr("bikes", "Bikes everywhere now", 200),
		}}
	}
	truth := map[[2]string]bool{{"Drives a 2011 Corolla", "Bikes everywhere now"}: true}
	var asked []llm.WindowRequest
	ask := func(_ context.Context, req llm.WindowRequest) (llm.WindowVerdict, error) {
		asked = append(asked, req)
		v := llm.WindowVerdict{Reasoning: "sold the car"}
		for i, o := range req.Statements {
			for j := i + 1; j < len(req.Statements); j++ {
				if truth[[2]string{o.Text, req.Statements[j].Text}] {
					v.Retired = append(v.Retired, llm.Retirement{Older: i + 1, Newer: j + 1, Confidence: 0.85})
				}
			}
		}
		return v, nil
	}
	j := JudgeWindows(context.Background(), mk(), aspectGate, WindowJudge{Gate: GateAspect, Ask: ask})
	got := map[string]string{}
	for _, c := range j.Decisions {
		got[c.Old.ID+">"+c.New.ID] = string(c.Method) + " " + string(c.Mode)
	}
	want := map[string]string{"car>bikes": "semantic live", "toronto>vancouver": "heuristic live"}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(asked) != 1 || len(j.Windows) != 1 {
		t.Fatalf("decisions %v after %d requests, want %v after 1", got, len(asked), want)
	}
	for _, c := range j.Decisions {
		if c.Method == MethodSemantic && (c.Confidence != 0.85 || !strings.Contains(c.Reasoning, "sold the car")) {
			t.Errorf("semantic decision %+v", c)
		}
	}
	semantic := 0
	for _, p := range j.Pairs {
		if p.Method == MethodSemantic {
			semantic++
		}
	}
	if semantic != 5 { // the six pairs but the heuristics' one
		t.Errorf("%d pairs settled by the LLM, want 5", semantic)
	}

	down := func(context.Context, llm.WindowRequest) (llm.WindowVerdict, error) {
		return llm.WindowVerdict{}, errors.New("llm unavailable")
	}
	j = JudgeWindows(context.Background(), mk(), aspectGate, WindowJudge{Gate: GateAspect, Ask: down})
	if len(j.Decisions) != 1 || j.Decisions[0].Old.ID != "toronto" || j.Windows[0].Err == nil {
		t.Fatalf("with the LLM down: %+v", j.Decisions)
	}
}

// A signal below the review band decides nothing (it writes nothing): with
// the semantic fallback such a pair is the LLM's to settle, and without it
// the weak signal stands, deciding nothing as before.
func TestAWeakSignalLeavesThePairToTheLLM(t *testing.T) {
	t.Parallel()
	mk := func() *Group {
		return &Group{AgentID: "a", AspectID: "asp", AspectName: "housing", Attrs: []*Attribute{
			dayAttr("greg", "Rents from a landlord named Greg", 0),
			dayAttr("calgary", "Moved to Calgary in August", 200),
		}}
	}
	th := Thresholds{Min: 0.7, Review: 0.6}
	g := mk()
	c, _, _ := decide(g.Attrs[0], g.Attrs[1], planInput{thresholds: th})
	if c == nil || c.Confidence >= th.Review {
		t.Fatalf("the test needs a signal below the review band, got %+v", c)
	}
	if out := planGroup(mk(), planInput{thresholds: th, semantic: true, gate: GateAspect}); len(out.pending) != 1 {
		t.Fatalf("with the fallback: %d pairs for the LLM, want 1", len(out.pending))
	}
	th.Review = c.Confidence // now the signal decides: a proposal for review
	if out := planGroup(mk(), planInput{thresholds: th, semantic: true, gate: GateAspect}); len(out.pending) != 0 || len(out.candidates) != 1 {
		t.Fatalf("a signal in the review band is the heuristics' decision: %d pending, %d candidates", len(out.pending), len(out.candidates))
	}
}
