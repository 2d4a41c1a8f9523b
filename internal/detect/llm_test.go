package detect

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
)

// scripted is the scripted LLM answering from truth, as eval --llm would
// ask it.
func scripted(t *testing.T, truth *llmtest.Truth) (*llmtest.Server, *LLMJudge) {
	t.Helper()
	s := llmtest.New(t, truth)
	c := llm.New(llm.Settings{Endpoint: s.Endpoint(), Model: "scripted", Timeout: 10 * time.Second, MaxConcurrency: 4}, nil)
	return s, &LLMJudge{Model: "scripted", Gate: supersession.GateAspect, MaxStatements: supersession.DefaultMaxStatements, Concurrency: 4,
		Ask: func(ctx context.Context, req llm.WindowRequest) (llm.WindowVerdict, error) {
			return c.Window(ctx, req, 0)
		}}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expected is what a live sweep must retire when the LLM is the truth: each
// statement's newer siblings newest first, a pair counting at its heuristic
// confidence (under its aspect's name, as a sweep reads it) when a signal decided it (at or above the review band) and
// at the truth's otherwise (llmtest.Confidence when the corpus says the
// newer retires it); the first at or above min retires it. Constraints are
// never on either side. Scored as SPEC §12 says.
func expected(aspects []*Aspect, min, review float64) AspectCounts {
	var c AspectCounts
	for _, a := range aspects {
		attrs := slices.Clone(a.Attrs)
		slices.SortFunc(attrs, func(x, y *supersession.Attribute) int {
			if d := x.CreatedAt.Compare(y.CreatedAt); d != 0 {
				return d
			}
			return strings.Compare(x.ID, y.ID)
		})
		for i, old := range attrs {
			var by *supersession.Attribute
			for j := len(attrs) - 1; j > i && old.Kind == supersession.KindAttribute; j-- {
				nw := attrs[j]
				if nw.Kind != supersession.KindAttribute {
					continue
				}
				d := heuristics.Decide(heuristics.Input{Content: old.Content.String, CreatedAt: old.CreatedAt, Kind: string(old.Kind), Aspect: a.Name},
					heuristics.Input{Content: nw.Content.String, CreatedAt: nw.CreatedAt, Kind: string(nw.Kind), Aspect: a.Name})
				conf := 0.0
				switch {
				case d.Blocked != "":
				case d.Confidence >= review:
					conf = d.Confidence
				case a.Truth[[2]string{old.ID, nw.ID}]:
					conf = llmtest.Confidence
				}
				if conf >= min {
					by = nw
					break
				}
			}
			scoreOne(&c, a, old, attrs[i+1:], by)
		}
	}
	return c
}

// scoreOne counts one statement as SPEC §12 does: ambiguous pairs are in no
// count, a retirement by an ambiguous pair of a statement no pair retires
// counts nowhere.
func scoreOne(c *AspectCounts, a *Aspect, old *supersession.Attribute, newer []*supersession.Attribute, by *supersession.Attribute) {
	var replacements []*supersession.Attribute
	ambiguous := false
	for _, nw := range newer {
		switch k := [2]string{old.ID, nw.ID}; {
		case a.Ambiguous[k]:
			ambiguous = true
		case a.Truth[k]:
			replacements = append(replacements, nw)
		}
	}
	should := len(replacements) > 0
	c.Statements++
	if should {
		c.ShouldRetire++
	}
	if by == nil {
		return
	}
	byAmbiguous := ambiguous && a.Ambiguous[[2]string{old.ID, by.ID}]
	switch {
	case should:
		c.Retired++
		c.RetiredRight++
		if !byAmbiguous && !slices.Contains(replacements, by) {
			c.WrongReplacement++
		}
	case !byAmbiguous:
		c.Retired++
		c.RetiredWrong++
	}
}

// With the scripted LLM answering from the corpus's own truth table, eval
// --aspects --llm reproduces exactly the retirements the plan rule allows:
// the LLM settles every pair the heuristics leave as the truth says, so
// every error left is a heuristic's, and every miss a constraint's or the
// rule's. Each window is asked once, framed as data, and every token the
// server reported is counted.
func TestEvalAspectsLLMReproducesTheTruth(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"../../testdata/aspects_w1.jsonl", "../../testdata/aspects_w2.jsonl", "../../testdata/aspects_w3.jsonl",
		"../../testdata/aspects_probe2.jsonl", "../../testdata/aspects_probe3.jsonl"} {
		t.Run(file[len("../../testdata/"):], func(t *testing.T) {
			t.Parallel()
			body := readFile(t, file)
			truth, err := llmtest.TruthFromAspects(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			srv, judge := scripted(t, truth)
			rep, err := EvaluateAspects(bytes.NewReader(body), AspectOptions{Min: 0.7, Review: 0.5, LLM: judge})
			if err != nil || len(rep.Errors) > 0 {
				t.Fatalf("%v %v", err, rep.Errors)
			}
			aspects, _, _ := ReadAspects(bytes.NewReader(body))
			want := expected(aspects, 0.7, 0.5)
			got := rep.Overall
			if got.Statements != want.Statements || got.ShouldRetire != want.ShouldRetire || got.Retired != want.Retired ||
				got.RetiredRight != want.RetiredRight || got.RetiredWrong != want.RetiredWrong || got.WrongReplacement != want.WrongReplacement {
				t.Fatalf("retirements\n got %+v\nwant %+v", got, want)
			}
			gp, _ := got.RetirementPrecision()
			wp, _ := want.RetirementPrecision()
			gr, _ := got.RetirementRecall()
			wr, _ := want.RetirementRecall()
			if gp != wp || gr != wr {
				t.Fatalf("precision %v recall %v, want %v %v", gp, gr, wp, wr)
			}
			l := rep.LLM
			if l.Settled.FP != 0 || l.Settled.FN != 0 || l.Settled.TP == 0 {
				t.Errorf("the LLM settled pairs against the truth: %+v", l.Settled)
			}
			if srv.MaxPerWindow() != 1 || srv.Requests() != l.Requests || l.Requests+l.Cached != l.Windows || len(l.Failures) != 0 {
				t.Errorf("server: %d requests, %d at most per window; eval: %+v", srv.Requests(), srv.MaxPerWindow(), l)
			}
			if srv.Unmatched() != 0 || srv.Unframed() != 0 || l.Usage != srv.Usage() || l.Usage.Total() == 0 {
				t.Errorf("unmatched %d, unframed %d, usage %+v vs server %+v", srv.Unmatched(), srv.Unframed(), l.Usage, srv.Usage())
			}
			if got.RetiredRight <= rep.Heuristic.RetiredRight {
				t.Errorf("the LLM added no right retirement (%d, heuristics alone %d)", got.RetiredRight, rep.Heuristic.RetiredRight)
			}
			t.Logf("%d statements: retirement precision %.3f recall %.3f (heuristics alone %d right, %d wrong); %d requests, %d tokens",
				got.Statements, gp, gr, rep.Heuristic.RetiredRight, rep.Heuristic.RetiredWrong, l.Requests, l.Usage.Total())
		})
	}
}

// Statements only a model can read: with a truthful LLM every retirement is
// right (precision 1.000), and recall is what the plan rule allows: the
// constraint the labels say is out of date is never retired.
func TestEvalAspectsLLMPrecisionOne(t *testing.T) {
	t.Parallel()
	const fixture = `{"aspect_id":"c","aspect":"getting around","statements":[` +
		`{"id":"1","text":"Drives a 2011 Corolla","at":"2023-03-02T00:00:00Z"},` +
		`{"id":"2","text":"Keeps a kayak in the garage","at":"2023-06-02T00:00:00Z"},` +
		`{"id":"3","text":"Bikes everywhere these days","at":"2024-08-30T00:00:00Z"}],"supersedes":[["1","3"]]}
{"aspect_id":"r","aspect":"relationship","statements":[` +
		`{"id":"1","text":"Seeing someone named Rui","at":"2023-05-01T00:00:00Z"},` +
		`{"id":"2","text":"Happily single since the autumn","at":"2023-11-01T00:00:00Z"}],"supersedes":[["1","2"]]}
{"aspect_id":"s","aspect":"seats","statements":[` +
		`{"id":"1","text":"Always book an aisle seat for him","at":"2023-01-01T00:00:00Z","kind":"constraint"},` +
		`{"id":"2","text":"Flies to Lisbon twice a year","at":"2023-07-01T00:00:00Z"},` +
		`{"id":"3","text":"Loves the window on long flights","at":"2024-01-01T00:00:00Z"}],"supersedes":[["1","3"]]}
`
	truth, err := llmtest.TruthFromAspects(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	srv, judge := scripted(t, truth)
	rep, err := EvaluateAspects(strings.NewReader(fixture), AspectOptions{Min: 0.7, Review: 0.5, LLM: judge})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	if rep.Heuristic.Retired != 0 {
		t.Fatalf("a heuristic fired on the fixture (%+v): it needs statements only a model reads", rep.Heuristic)
	}
	o := rep.Overall
	p, _ := o.RetirementPrecision()
	r, _ := o.RetirementRecall()
	if o.ShouldRetire != 3 || o.RetiredRight != 2 || o.RetiredWrong != 0 || p != 1 || r != 2.0/3 {
		t.Fatalf("precision %v recall %v: %+v", p, r, o)
	}
	// One window per aspect; the constraint's retirement is refused by the
	// window check and counted.
	if srv.Requests() != 3 || rep.LLM.Ignored[llm.IgnoredConstraint] != 1 {
		t.Fatalf("%d requests, ignored %v", srv.Requests(), rep.LLM.Ignored)
	}
	var out bytes.Buffer
	if err := rep.Write(&out, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LLM judge: model scripted, gate aspect, at most 24 statements a window", "windows 3: 3 requests",
		"per 1,000 statements: 375.0 requests", "without the LLM: 0 retired", "refused by the window check (constraint 1)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// eval FILE --llm on labelled pairs: each pair the heuristics leave is a
// window of two; with the truthful LLM the result is the label wherever
// the heuristics did not decide and the pair may be judged at all.
func TestEvalPairsLLMReproducesTheLabels(t *testing.T) {
	t.Parallel()
	body := readFile(t, "../../testdata/pairs_holdout2.jsonl")
	truth, err := llmtest.TruthFromPairs(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	srv, judge := scripted(t, truth)
	rep, err := EvaluateLLM(bytes.NewReader(body), 0.7, 0.5, *judge)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	var want Counts
	asked := 0
	_ = Lines(bytes.NewReader(body), func(_ int, line []byte, _ bool) error {
		p, _ := ParseLine(line)
		d := heuristics.Decide(p.Older, p.Newer)
		var superseded bool
		switch {
		case d.Blocked != "":
		case d.Confidence >= 0.5:
			superseded = d.Confidence >= 0.7
		default:
			asked++
			superseded = *p.Label
		}
		want.add(*p.Label, superseded)
		return nil
	})
	if rep.Overall != want {
		t.Fatalf("overall %+v, want %+v", rep.Overall, want)
	}
	if srv.Requests() != asked || rep.LLM.Settled.FP+rep.LLM.Settled.FN != 0 || srv.Unmatched() != 0 {
		t.Fatalf("%d requests for %d pairs left; settled %+v; unmatched %d", srv.Requests(), asked, rep.LLM.Settled, srv.Unmatched())
	}
}

// A failing LLM costs recall, never a wrong retirement: its windows are
// counted as failed and the heuristics' decisions stand.
func TestEvalAspectsLLMFailing(t *testing.T) {
	t.Parallel()
	body := readFile(t, "../../testdata/aspects_w1.jsonl")
	truth, _ := llmtest.TruthFromAspects(bytes.NewReader(body))
	srv, judge := scripted(t, truth)
	srv.Set(llmtest.Fault{Kind: llmtest.Garbage})
	rep, err := EvaluateAspects(bytes.NewReader(body), AspectOptions{Min: 0.7, Review: 0.5, LLM: judge})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall.Retired != rep.Heuristic.Retired || rep.Overall.RetiredRight != rep.Heuristic.RetiredRight ||
		rep.LLM.Failures[llm.KindGarbage] != rep.LLM.Requests || rep.LLM.Requests == 0 {
		t.Fatalf("with garbage answers: %+v vs heuristics %+v; llm %+v", rep.Overall, rep.Heuristic, rep.LLM)
	}
}
