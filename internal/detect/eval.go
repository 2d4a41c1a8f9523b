package detect

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// SemanticClass is the class of true contradictions no keyword heuristic is
// expected to see; it is left out of the "heuristic classes" figures.
const SemanticClass = "semantic"

// Counts is a confusion matrix.
type Counts struct{ TP, FP, FN, TN int }

func (c *Counts) add(label, predicted bool) {
	switch {
	case label && predicted:
		c.TP++
	case !label && predicted:
		c.FP++
	case label && !predicted:
		c.FN++
	default:
		c.TN++
	}
}

// N is the number of pairs counted.
func (c Counts) N() int { return c.TP + c.FP + c.FN + c.TN }

// Precision is TP/(TP+FP); ok is false when nothing was predicted positive.
func (c Counts) Precision() (float64, bool) { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP/(TP+FN); ok is false when there are no positives.
func (c Counts) Recall() (float64, bool) { return ratio(c.TP, c.TP+c.FN) }

// F1 is the harmonic mean of precision and recall.
func (c Counts) F1() (float64, bool) { return ratio(2*c.TP, 2*c.TP+c.FP+c.FN) }

// Accuracy is the share of pairs decided right.
func (c Counts) Accuracy() (float64, bool) { return ratio(c.TP+c.TN, c.N()) }

func ratio(a, b int) (float64, bool) {
	if b == 0 {
		return 0, false
	}
	return float64(a) / float64(b), true
}

// Miss is a misclassified pair.
type Miss struct {
	ID     json.RawMessage
	Class  string
	Label  bool
	Pair   Pair
	Result Result
}

// Band counts the pairs whose confidence falls in the review band, [review,
// min): what two-band mode sends to a human as proposals.
type Band struct{ True, False int }

func (b *Band) add(label bool) {
	if label {
		b.True++
	} else {
		b.False++
	}
}

// Report is the outcome of an evaluation.
type Report struct {
	MinConfidence    float64
	ReviewConfidence float64
	Overall          Counts
	Heuristic        Counts // every class but SemanticClass
	Review           Band   // every class
	ReviewHeuristic  Band   // every class but SemanticClass
	Classes          map[string]*Counts
	Misses           []Miss
	Errors           []string // lines that could not be evaluated
	// LLM is what the LLM did and cost (EvaluateLLM).
	LLM *LLMCounts
}

// Evaluate runs the decision over labelled pairs: a pair is superseded at
// or above min, and counted in the review band when its confidence is in
// [review, min). A line without "label" is an error line, like a malformed
// one.
func Evaluate(r io.Reader, min, review float64) (*Report, error) {
	return evaluate(r, min, review, nil)
}

// EvaluateLLM is Evaluate with the LLM judging what the heuristics leave,
// as the daemon's semantic fallback would: each pair is a group of two
// statements, asked as a window of two when no heuristic decides it.
func EvaluateLLM(r io.Reader, min, review float64, j LLMJudge) (*Report, error) {
	return evaluate(r, min, review, &j)
}

func evaluate(r io.Reader, min, review float64, j *LLMJudge) (*Report, error) {
	rep := &Report{MinConfidence: min, ReviewConfidence: review, Classes: map[string]*Counts{}}
	var pairs []Pair
	err := Lines(r, func(n int, line []byte, tooLong bool) error {
		if tooLong {
			rep.Errors = append(rep.Errors, fmt.Sprintf("line %d: longer than %d bytes", n, MaxLineBytes))
			return nil
		}
		p, err := ParseLine(line)
		if err == nil && p.Label == nil {
			err = &LineError{ID: p.ID, Err: `missing "label"`}
		}
		if err == nil && j != nil && !p.Older.CreatedAt.IsZero() && p.Newer.CreatedAt.Before(p.Older.CreatedAt) {
			err = &LineError{ID: p.ID, Err: `"newer_at" is before "older_at"`}
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("line %d: %v", n, err))
			return nil
		}
		pairs = append(pairs, p)
		return nil
	})
	if err != nil {
		return rep, err
	}
	results := make([]Result, len(pairs))
	if j == nil {
		for i, p := range pairs {
			results[i] = Decide(p, min)
		}
	} else {
		results = rep.judgePairs(pairs, min, review, *j)
	}
	for i, p := range pairs {
		rep.tally(p, results[i], review)
	}
	return rep, nil
}

// judgePairs decides each pair as a group of two with the LLM.
func (rep *Report) judgePairs(pairs []Pair, min, review float64, j LLMJudge) []Result {
	groups := make([]*supersession.Group, len(pairs))
	for i, p := range pairs {
		mk := func(id string, in heuristics.Input) *supersession.Attribute {
			return &supersession.Attribute{ID: id, AgentID: "eval", AspectID: "pair", Kind: supersession.Kind(in.Kind),
				Content: nullString(in.Content), CreatedAt: in.CreatedAt}
		}
		groups[i] = &supersession.Group{AgentID: "eval", AspectID: "pair",
			Attrs: []*supersession.Attribute{mk("1", p.Older), mk("2", p.Newer)}}
		groups[i].Name(p.Aspect) // the analysis reads it, as the LLM does
	}
	a := newAsker(j)
	rep.LLM = a.counts
	results := make([]Result, len(pairs))
	for i, jd := range judgeAll(groups, supersession.Thresholds{Min: min, Review: review}, a) {
		res := Result{ID: pairs[i].ID, Signals: []heuristics.Signal{}}
		if len(jd.Pairs) == 1 {
			v := jd.Pairs[0]
			res.Confidence, res.Method = v.Confidence, string(v.Method)
			if v.Signals != nil {
				res.Signals = v.Signals
			}
			rep.LLM.settle(v, *pairs[i].Label, min)
		}
		for _, c := range jd.Decisions {
			res.Supersede = res.Supersede || c.Mode == supersession.ModeLive
			res.Reason = c.Reasoning
		}
		results[i] = res
	}
	return results
}

// tally counts one pair's result.
func (rep *Report) tally(p Pair, res Result, review float64) {
	label := *p.Label
	rep.Overall.add(label, res.Supersede)
	if p.Class != SemanticClass {
		rep.Heuristic.add(label, res.Supersede)
	}
	if res.Confidence > 0 && res.Confidence >= review && res.Confidence < rep.MinConfidence {
		rep.Review.add(label)
		if p.Class != SemanticClass {
			rep.ReviewHeuristic.add(label)
		}
	}
	cls := p.Class
	if cls == "" {
		cls = "(none)"
	}
	c := rep.Classes[cls]
	if c == nil {
		c = &Counts{}
		rep.Classes[cls] = c
	}
	c.add(label, res.Supersede)
	if label != res.Supersede {
		rep.Misses = append(rep.Misses, Miss{ID: p.ID, Class: cls, Label: label, Pair: p, Result: res})
	}
}

// Write prints the report as a table; verbose adds the misclassified pairs.
func (rep *Report) Write(w io.Writer, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "class\tpairs\tTP\tFP\tFN\tTN\tprecision\trecall\tF1\taccuracy\t\n")
	row := func(name string, c Counts) {
		p, pok := c.Precision()
		r, rok := c.Recall()
		f, fok := c.F1()
		a, aok := c.Accuracy()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", name, c.N(), c.TP, c.FP, c.FN, c.TN,
			pct(p, pok), pct(r, rok), pct(f, fok), pct(a, aok))
	}
	row("overall", rep.Overall)
	row("heuristic classes", rep.Heuristic)
	names := make([]string, 0, len(rep.Classes))
	for n := range rep.Classes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		row("  "+n, *rep.Classes[n])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nreview band [%.2f, %.2f): %d pairs, %d true, %d false (heuristic classes: %d true, %d false)\n",
		rep.ReviewConfidence, rep.MinConfidence, rep.Review.True+rep.Review.False, rep.Review.True, rep.Review.False,
		rep.ReviewHeuristic.True, rep.ReviewHeuristic.False)
	fmt.Fprintf(w, "min confidence %.2f; heuristic classes exclude %q; %d misclassified", rep.MinConfidence, SemanticClass, len(rep.Misses))
	if len(rep.Errors) > 0 {
		fmt.Fprintf(w, "; %d lines not evaluated", len(rep.Errors))
	}
	fmt.Fprintln(w)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	if rep.LLM != nil {
		rep.LLM.write(w, "pairs", rep.Overall.N())
	}
	if verbose && len(rep.Misses) > 0 {
		fmt.Fprintln(w, "\nmisclassified:")
		for _, m := range rep.Misses {
			kind := "false negative"
			if !m.Label {
				kind = "false positive"
			}
			fmt.Fprintf(w, "  %s [%s] %s, confidence %.2f\n", string(m.ID), m.Class, kind, m.Result.Confidence)
			fmt.Fprintf(w, "    older: %s\n    newer: %s\n", m.Pair.Older.Content, m.Pair.Newer.Content)
			if len(m.Result.Signals) == 0 {
				fmt.Fprintf(w, "    signals: none (%s)\n", m.Result.Reason)
			}
			for _, s := range m.Result.Signals {
				fmt.Fprintf(w, "    signal: %s %.2f %s\n", s.Name, s.Confidence, s.Detail)
			}
		}
	}
	return nil
}

func pct(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.3f", v), "")
}
