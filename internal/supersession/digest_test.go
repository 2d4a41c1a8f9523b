package supersession

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/bench"
)

// corpusGroup is a group of n attributes, oldest first: a fifth drawn from
// the labelled corpora (the statements that contradict), the rest facts
// that hold together (as most of a real aspect does), with a few
// constraints and protected ones among them.
func corpusGroup(r *rand.Rand, stmts []string, prefix string, n int) *Group {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := &Group{AgentID: "a", AspectID: "asp"}
	for i := range n {
		content := stmts[r.IntN(len(stmts))]
		if r.IntN(5) > 0 {
			content = filler(r)
		}
		a := &Attribute{ID: fmt.Sprintf("%s-%04d", prefix, i), AgentID: "a", AspectID: "asp", Kind: "attribute",
			Content: sql.NullString{String: content, Valid: true}, CreatedAt: base.Add(time.Duration(i) * time.Hour)}
		if r.IntN(40) == 0 {
			a.Kind = "constraint"
		}
		if r.IntN(40) == 0 {
			a.Protected = true
		}
		g.Attrs = append(g.Attrs, a)
	}
	return g
}

// filler is a fact of many values: it contradicts no other filler.
func filler(r *rand.Rand) string {
	things := []string{"Kyoto", "Lisbon", "a kayak", "a telescope", "Dana", "Priya", "French", "Tamil", "chess", "squash"}
	verbs := []string{"Visited %s in %d", "Has met %s %d times", "Read about %s in %d", "Owns a photo of %s from %d"}
	return fmt.Sprintf(verbs[r.IntN(len(verbs))], things[r.IntN(len(things))], 1990+r.IntN(35))
}

// fresh is a copy of a as the database would return it: not analysed.
func fresh(a *Attribute) *Attribute {
	return &Attribute{ID: a.ID, AgentID: a.AgentID, AspectID: a.AspectID, Kind: a.Kind, Content: a.Content,
		CreatedAt: a.CreatedAt, Protected: a.Protected}
}

// An incremental pass narrowed through a digest decides exactly what a pass
// over the whole aspect decides about the changes, whatever changed since
// the digest was made: on groups drawn from the corpora, a full pass's
// digest is stored, then some attributes are edited and new ones arrive
// (their records name them); the narrowed, focused plan must equal the
// all-pairs rule on the changed group.
func TestNarrowedPlanEqualsAllPairsOnChanges(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(5, 6))
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true}
	narrowed, whole, loadedShare := 0, 0, 0.0
	for round := range 1500 {
		g := corpusGroup(r, stmts, fmt.Sprintf("n%d", round), 40+r.IntN(300))
		planGroup(g, in) // the full pass: its digest
		if g.Keys == nil {
			t.Fatalf("round %d: a group of %d has no digest", round, len(g.Attrs))
		}
		stored := [][]byte{g.Keys}
		// What changed after the pass: edits, and new attributes.
		now := &Group{AgentID: "a", AspectID: "asp"}
		for _, a := range g.Attrs {
			now.Attrs = append(now.Attrs, fresh(a))
		}
		var ids []string
		for _, a := range now.Attrs {
			if r.IntN(40) == 0 {
				a.Content.String = stmts[r.IntN(len(stmts))]
				ids = append(ids, a.ID)
			}
		}
		added := corpusGroup(r, stmts, fmt.Sprintf("n%d-new", round), 1+r.IntN(3))
		for i, a := range added.Attrs {
			a.CreatedAt = now.Attrs[len(now.Attrs)-1].CreatedAt.Add(time.Duration(i+1) * time.Minute)
			if r.IntN(3) == 0 { // classified late: created among the others
				a.CreatedAt = now.Attrs[r.IntN(len(now.Attrs))].CreatedAt.Add(time.Second)
			}
			now.Attrs = append(now.Attrs, a)
			ids = append(ids, a.ID)
		}
		sortGroup(now)
		focus := map[string]bool{}
		for _, id := range ids {
			focus[id] = true
		}

		got, ok := narrowInMemory(t, now, ids, stored)
		if !ok {
			whole++
			continue
		}
		narrowed++
		loadedShare += float64(len(got.Attrs)) / float64(len(now.Attrs))
		fin := planInput{thresholds: in.thresholds, focus: focus}
		want := bruteForce(now, fin)
		have := planGroup(got, fin).candidates
		if len(have) != len(want) {
			t.Fatalf("round %d: narrowed plan found %d candidates over %d of %d attributes, all pairs %d",
				round, len(have), len(got.Attrs), len(now.Attrs), len(want))
		}
		for k := range want {
			if want[k].Old.ID != have[k].Old.ID || want[k].New.ID != have[k].New.ID || want[k].Confidence != have[k].Confidence {
				t.Fatalf("round %d: %s→%s vs %s→%s", round, want[k].Old.ID, want[k].New.ID, have[k].Old.ID, have[k].New.ID)
			}
		}
	}
	if narrowed < 40 {
		t.Fatalf("only %d of %d rounds narrowed (the rest met a key held widely): the test checks too little", narrowed, narrowed+whole)
	}
	t.Logf("%d rounds narrowed (loading %.1f%% of the aspect on average), %d read whole", narrowed, 100*loadedShare/float64(narrowed), whole)
}

// narrowInMemory runs narrow over one group with the given stored
// fragments, loading from the group itself; false when it would read the
// aspect whole.
func narrowInMemory(t *testing.T, g *Group, ids []string, stored [][]byte) (*Group, bool) {
	t.Helper()
	byID := map[string]*Attribute{}
	for _, a := range g.Attrs {
		byID[a.ID] = a
	}
	w := &narrowing{ch: AspectChanges{AgentID: g.AgentID, AspectID: g.AspectID, IDs: ids}, attrs: map[string]*Attribute{}}
	for _, buf := range stored {
		d, err := parseDigest(buf)
		if err != nil {
			t.Fatal(err)
		}
		w.digests = append(w.digests, d)
	}
	byRef := map[aspectRef]*narrowing{{g.AgentID, g.AspectID}: w}
	n := &Narrowed{Focus: map[string]bool{}, Why: map[string]int{}}
	load := func(_ context.Context, ids []string) ([]*Group, error) {
		out := &Group{AgentID: g.AgentID, AspectID: g.AspectID}
		for _, id := range ids {
			if a := byID[id]; a != nil && a.Kind != KindConstraint {
				out.Attrs = append(out.Attrs, fresh(a))
			}
		}
		return []*Group{out}, nil
	}
	if err := narrow(context.Background(), n, byRef, []*narrowing{w}, load); err != nil {
		t.Fatal(err)
	}
	if len(n.Whole) > 0 {
		return nil, false
	}
	if len(n.Groups) != 1 {
		t.Fatalf("narrow returned %d groups", len(n.Groups))
	}
	return n.Groups[0], true
}

// A delta fragment makes the changed attributes findable: after it is
// stored beside the full pass's digest, a later change that meets only an
// earlier change's new keys is still decided against it.
func TestDeltaFragmentsFindEarlierChanges(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	g := &Group{AgentID: "a", AspectID: "home"}
	for i := range 40 {
		g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprintf("f%02d", i), AgentID: "a", AspectID: "home", Kind: "attribute",
			Content: sql.NullString{String: fmt.Sprintf("Speaks language number %d", i), Valid: true}, CreatedAt: at(i % 24)})
	}
	sortGroup(g)
	planGroup(g, planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true})
	stored := [][]byte{g.Keys}

	// First change: "Lives in Oslo" arrives; its delta is stored.
	oslo := &Attribute{ID: "oslo", AgentID: "a", AspectID: "home", Kind: "attribute",
		Content: sql.NullString{String: "Lives in Oslo", Valid: true}, CreatedAt: at(23).Add(time.Hour)}
	g.Attrs = append(g.Attrs, oslo)
	got, ok := narrowInMemory(t, g, []string{"oslo"}, stored)
	if !ok {
		t.Fatal("the first change was not narrowed")
	}
	f := DeltaFragment(got, map[string]bool{"oslo": true})
	if f == nil {
		t.Fatal("no delta fragment for a change with keys")
	}
	stored = append(stored, f.Keys)

	// Second change: "Lives in Bergen" must meet "Lives in Oslo" through the delta.
	g.Attrs = append(g.Attrs, &Attribute{ID: "bergen", AgentID: "a", AspectID: "home", Kind: "attribute",
		Content: sql.NullString{String: "Lives in Bergen", Valid: true}, CreatedAt: at(23).Add(2 * time.Hour)})
	got, ok = narrowInMemory(t, g, []string{"bergen"}, stored)
	if !ok {
		t.Fatal("the second change was not narrowed")
	}
	cands := planGroup(got, planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, focus: map[string]bool{"bergen": true}}).candidates
	if len(cands) != 1 || cands[0].Old.ID != "oslo" || cands[0].New.ID != "bergen" {
		t.Fatalf("candidates over %d attributes = %v, want oslo→bergen", len(got.Attrs), cands)
	}
	// Without the delta, the earlier change is invisible: the test would fail.
	got, _ = narrowInMemory(t, g, []string{"bergen"}, stored[:1])
	for _, a := range got.Attrs {
		if a.ID == "oslo" {
			t.Fatal("oslo found without its delta fragment: this test proves nothing")
		}
	}
}

// Damaged fragments are refused whole, never read out of bounds.
func TestParseDigestRefusesDamage(t *testing.T) {
	t.Parallel()
	stmts := corpusStatements(t)
	r := rand.New(rand.NewPCG(7, 8))
	g := corpusGroup(r, stmts, "d", 120)
	planGroup(g, planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true})
	buf := g.Keys
	if _, err := parseDigest(buf); err != nil {
		t.Fatalf("a fresh digest does not parse: %v", err)
	}
	for _, cut := range []int{0, 1, 2, len(buf) / 3, len(buf) / 2, len(buf) - 1} {
		if _, err := parseDigest(buf[:cut]); err == nil {
			t.Errorf("a digest cut at %d of %d bytes parsed", cut, len(buf))
		}
	}
	if _, err := parseDigest(append([]byte{digestVersion + 1}, buf[1:]...)); err == nil {
		t.Error("a digest of another version parsed")
	}
	for range 2000 {
		bad := append([]byte(nil), buf...)
		for range 1 + r.IntN(4) {
			bad[r.IntN(len(bad))] = byte(r.IntN(256))
		}
		probeDigest(bad, g)
	}
}

// probeDigest parses buf and looks up every key of g's attributes: it may
// fail, never panic.
func probeDigest(buf []byte, g *Group) {
	d, err := parseDigest(buf)
	if err != nil {
		return
	}
	ids := map[string]bool{}
	for _, a := range g.Attrs {
		if o, n, _ := eligibility(a); o || n {
			anchors, probes := a.blockKeys()
			if _, err := d.meet(anchors, probes, ids); err != nil {
				return
			}
		}
	}
}

func FuzzParseDigest(f *testing.F) {
	g := &Group{AgentID: "a", AspectID: "asp"}
	for i, s := range []string{"Lives in Oslo", "Lives in Bergen", "Does not eat meat", "Eats meat", "Works at Stripe", "Switched from Vim to Emacs"} {
		g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprint(i), Kind: "attribute", Content: sql.NullString{String: s, Valid: true},
			CreatedAt: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC)})
	}
	for len(g.Attrs) < digestMinAttributes {
		g.Attrs = append(g.Attrs, &Attribute{ID: fmt.Sprint(len(g.Attrs)), Kind: "attribute",
			Content: sql.NullString{String: fmt.Sprintf("Visited city %d", len(g.Attrs)), Valid: true}, CreatedAt: time.Date(2026, 2, 1, len(g.Attrs), 0, 0, 0, time.UTC)})
	}
	planGroup(g, planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true})
	f.Add(g.Keys)
	f.Add([]byte{digestVersion})
	f.Fuzz(func(t *testing.T, buf []byte) { probeDigest(buf, g) })
}

// A change c that contradicts an older p while a newer n, which c's keys do
// not meet, contradicts p too: p goes to n (the newest contradictor wins),
// so narrowing must load n through p's keys. The triple is found in the
// development corpus's contradicting pairs.
func TestNarrowedPlanLoadsThePartnersNewerContradictors(t *testing.T) {
	t.Parallel()
	olds, news := labelledPairs(t)
	at := func(h int) time.Time { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC) }
	mk := func(id, s string, h int) *Attribute {
		return &Attribute{ID: id, AgentID: "a", AspectID: "asp", Kind: "attribute", Content: sql.NullString{String: s, Valid: true}, CreatedAt: at(h)}
	}
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}}
	for i := range olds {
		p, n := mk("p", olds[i], 1), mk("n", news[i], 3)
		if c, _, _ := decide(p, n, in); c == nil || c.Confidence < in.thresholds.Min {
			continue
		}
		for j := range news {
			c := mk("c", news[j], 2)
			if j == i || !decidesAbove(p, c, in) || keysMeet(c, n) {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(i), uint64(j)))
			g := &Group{AgentID: "a", AspectID: "asp"}
			for k := range 40 {
				f := mk(fmt.Sprintf("f%02d", k), filler(r), 0)
				f.CreatedAt = f.CreatedAt.Add(time.Duration(k) * time.Minute)
				g.Attrs = append(g.Attrs, f)
			}
			g.Attrs = append(g.Attrs, p, n)
			sortGroup(g)
			planGroup(g, planInput{thresholds: in.thresholds, digests: true})
			stored := [][]byte{g.Keys}
			now := &Group{AgentID: "a", AspectID: "asp", Attrs: []*Attribute{c}}
			for _, a := range g.Attrs {
				now.Attrs = append(now.Attrs, fresh(a))
			}
			sortGroup(now)
			got, ok := narrowInMemory(t, now, []string{"c"}, stored)
			if !ok {
				continue
			}
			focus := planInput{thresholds: in.thresholds, focus: map[string]bool{"c": true}}
			decided := map[string]string{}
			for _, cand := range planGroup(got, focus).candidates {
				decided[cand.Old.ID] = cand.New.ID
			}
			if decided["p"] != "n" {
				t.Fatalf("p=%q c=%q n=%q: p went to %q over %d attributes, want n", olds[i], news[j], news[i], decided["p"], len(got.Attrs))
			}
			return
		}
	}
	t.Fatal("no triple in the corpus: the test checks nothing")
}

func decidesAbove(old, nw *Attribute, in planInput) bool {
	c, _, _ := decide(old, nw, in)
	return c != nil && c.Confidence >= in.thresholds.Review
}

// keysMeet reports whether a probe of one meets an anchor of the other.
func keysMeet(a, b *Attribute) bool {
	aa, ap := a.blockKeys()
	ba, bp := b.blockKeys()
	for _, x := range [][2][]heuristics.Key{{ap, ba}, {bp, aa}} {
		for _, k := range x[0] {
			if slices.Contains(x[1], k) {
				return true
			}
		}
	}
	return false
}

// labelledPairs are the development corpus's contradicting pairs.
func labelledPairs(t *testing.T) (olds, news []string) {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/pairs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var p struct {
			Older, Newer string
			Label        bool
		}
		if json.Unmarshal(line, &p) == nil && p.Label {
			olds, news = append(olds, p.Older), append(news, p.Newer)
		}
	}
	return olds, news
}

// A change on the bench's graph meets a handful of siblings through its
// aspect's digest, and hardly ever a key held so widely that its aspect is
// read whole: the incremental sweep's cost (SPEC §11) follows what changed.
// A reading whose keys every sibling of a kind holds (the "3D" of "Owns a
// 3D printer" read as days, a measure key of every such statement) reads
// big aspects whole on a few changes, and the pass reads thirteen times
// more.
func TestBenchGraphChangesMeetFewSiblings(t *testing.T) {
	t.Parallel()
	attrs := 200000
	if raceDetector {
		attrs = 100000 // the first half of the same graph
	}
	in := planInput{thresholds: Thresholds{Min: 0.7, Review: 0.5}, digests: true}
	changes, whole, read := 0, 0, 0 // read: what the pass reads, an aspect read whole whole
	bench.Aspects(bench.AttributeSpec{Attributes: attrs}, func(ga bench.GeneratedAspect) {
		if len(ga.Attrs) < digestMinAttributes {
			return // read whole: no digest
		}
		aspect := ga.ID
		g := &Group{AgentID: "a", AspectID: aspect, AspectName: "aspect " + aspect}
		for _, row := range ga.Attrs { // id, aspect_id, agent_id, kind, content, ..., created_at
			g.Attrs = append(g.Attrs, &Attribute{ID: row[0].(string), AgentID: "a", AspectID: aspect, Kind: Kind(row[3].(string)),
				Content: sql.NullString{String: row[4].(string), Valid: true}, CreatedAt: row[8].(time.Time)})
		}
		planGroup(g, in)
		now := &Group{AgentID: "a", AspectID: aspect, AspectName: g.AspectName}
		var ids []string
		for i, a := range g.Attrs {
			b := fresh(a)
			if i%100 == 7 && a.Kind != KindConstraint { // a change of 1%, as the bench's corrections
				b.Content.String += " (corrected)"
				ids = append(ids, b.ID)
			}
			now.Attrs = append(now.Attrs, b)
		}
		for _, id := range ids {
			changes++
			got, ok := narrowInMemory(t, now, []string{id}, [][]byte{g.Keys})
			if !ok {
				whole++
				read += len(now.Attrs)
				continue
			}
			read += len(got.Attrs)
		}
	})
	if changes < 500 {
		t.Fatalf("only %d changes in digested aspects: the test checks too little", changes)
	}
	t.Logf("%d changes read %d attributes (%.2f each); %d read their aspect whole", changes, read, float64(read)/float64(changes), whole)
	if read > 2*changes {
		t.Errorf("%d changes read %d attributes, %.2f each (%d read their aspect whole: a key held by more than %d siblings): want at most 2 each",
			changes, read, float64(read)/float64(changes), whole, digestCap)
	}
}
