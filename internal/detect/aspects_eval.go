package detect

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// AspectCounts is what whole aspects scored: retirements (statements), and
// ordered pairs. Ambiguous pairs are left out of every count.
type AspectCounts struct {
	Aspects, Statements int
	// ShouldRetire: statements some newer statement of their aspect makes
	// no longer true. Retired: those a live sweep would retire.
	ShouldRetire, Retired int
	// RetiredRight are retirements of statements that should be retired,
	// RetiredWrong of statements that should not (retirements by an
	// ambiguous pair of a statement no pair retires are left out).
	RetiredRight, RetiredWrong int
	// WrongReplacement counts right retirements made by a statement that
	// is not one of the true replacements.
	WrongReplacement int
	Pairs            Counts
	Review           Band
}

// RetirementPrecision is RetiredRight / (RetiredRight + RetiredWrong).
func (c AspectCounts) RetirementPrecision() (float64, bool) {
	return ratio(c.RetiredRight, c.RetiredRight+c.RetiredWrong)
}

// RetirementRecall is RetiredRight / ShouldRetire.
func (c AspectCounts) RetirementRecall() (float64, bool) {
	return ratio(c.RetiredRight, c.ShouldRetire)
}

// Retirement is a statement retired wrongly or by the wrong statement.
type Retirement struct {
	Aspect     *Aspect
	Old, New   *supersession.Attribute
	Confidence float64
	Signals    []heuristics.Signal
	// Replacements are the statements that truly retire Old.
	Replacements []*supersession.Attribute
}

// Missed is a statement that should be retired and would not be, with what
// the judgment said of each of its true replacements.
type Missed struct {
	Aspect       *Aspect
	Old          *supersession.Attribute
	Replacements []supersession.PairVerdict
}

// AspectReport is the outcome of `eval --aspects`.
type AspectReport struct {
	Options           AspectOptions
	Overall           AspectCounts
	Styles            map[string]*AspectCounts
	WrongRetirements  []Retirement
	WrongReplacements []Retirement
	Misses            []Missed
	Errors            []string
	// With the LLM: what it did and cost, and the heuristics' figures
	// alone, for comparison.
	LLM       *LLMCounts
	Heuristic *AspectCounts
}

// EvaluateAspects decides every aspect of r as a live sweep would and
// scores the retirements and the pairs against the labels.
func EvaluateAspects(r io.Reader, opt AspectOptions) (*AspectReport, error) {
	aspects, lineErrors, err := ReadAspects(r)
	if err != nil {
		return nil, err
	}
	rep := &AspectReport{Options: opt, Styles: map[string]*AspectCounts{}, Errors: lineErrors}
	owner := map[string]*Aspect{}
	for _, a := range aspects {
		for _, s := range a.Attrs {
			owner[s.ID] = a
		}
		rep.style(a).Aspects++
		rep.Overall.Aspects++
	}
	th := supersession.Thresholds{Min: opt.Min, Review: opt.Review}
	var a *asker
	if opt.LLM != nil {
		a = newAsker(*opt.LLM)
		rep.LLM = a.counts
		alone := &AspectReport{Options: opt, Styles: map[string]*AspectCounts{}}
		for _, g := range groupsOf(aspects, opt.Scope) {
			alone.score(supersession.Judge(g, th), g, owner)
		}
		rep.Heuristic = &alone.Overall
	}
	groups := groupsOf(aspects, opt.Scope)
	for i, j := range judgeAll(groups, th, a) {
		rep.score(j, groups[i], owner)
	}
	return rep, nil
}

func (rep *AspectReport) style(a *Aspect) *AspectCounts {
	s := styleOf(a)
	c := rep.Styles[s]
	if c == nil {
		c = &AspectCounts{}
		rep.Styles[s] = c
	}
	return c
}

// count adds one statement's or pair's counts to the overall figures and
// to its aspect's style.
func (rep *AspectReport) count(a *Aspect, fn func(c *AspectCounts)) {
	fn(&rep.Overall)
	fn(rep.style(a))
}

// score counts one group's judgment. owner maps a statement to its aspect
// (a group is one aspect, or with --scope an entity's aspects).
func (rep *AspectReport) score(j supersession.Judgment, g *supersession.Group, owner map[string]*Aspect) {
	retiredBy := map[string]supersession.Candidate{}
	for _, c := range j.Decisions {
		if c.Mode == supersession.ModeLive {
			retiredBy[c.Old.ID] = c
		}
	}
	verdicts := map[[2]string]supersession.PairVerdict{}
	for _, v := range j.Pairs {
		verdicts[[2]string{v.Old.ID, v.New.ID}] = v
	}
	for i, old := range g.Attrs {
		rep.scoreStatement(old, g.Attrs[i+1:], owner, retiredBy, verdicts)
	}
}

func (rep *AspectReport) scoreStatement(old *supersession.Attribute, newer []*supersession.Attribute, owner map[string]*Aspect,
	retiredBy map[string]supersession.Candidate, verdicts map[[2]string]supersession.PairVerdict) {
	a := owner[old.ID]
	var replacements []*supersession.Attribute
	var ambiguous bool
	for _, nw := range newer {
		k := [2]string{old.ID, nw.ID}
		v := verdicts[k]
		same := owner[nw.ID] == a
		truth := same && a.Truth[k]
		if same && a.Ambiguous[k] {
			ambiguous = true
			continue
		}
		if truth {
			replacements = append(replacements, nw)
		}
		fired := v.Confidence > 0 && v.Confidence >= rep.Options.Min
		inBand := v.Confidence > 0 && v.Confidence >= rep.Options.Review && v.Confidence < rep.Options.Min
		rep.count(a, func(c *AspectCounts) {
			c.Pairs.add(truth, fired)
			if inBand {
				c.Review.add(truth)
			}
		})
		if rep.LLM != nil {
			rep.LLM.settle(v, truth, rep.Options.Min)
		}
	}
	c, retired := retiredBy[old.ID]
	should := len(replacements) > 0
	rep.count(a, func(x *AspectCounts) {
		x.Statements++
		if should {
			x.ShouldRetire++
		}
	})
	if !retired {
		if should {
			rep.Misses = append(rep.Misses, Missed{Aspect: a, Old: old, Replacements: verdictsOf(old, replacements, verdicts)})
		}
		return
	}
	k := [2]string{old.ID, c.New.ID}
	byAmbiguous := ambiguous && owner[c.New.ID] == a && a.Ambiguous[k]
	r := Retirement{Aspect: a, Old: old, New: c.New, Confidence: c.Confidence, Signals: c.Signals, Replacements: replacements}
	rep.count(a, func(x *AspectCounts) {
		switch {
		case should:
			x.Retired++
			x.RetiredRight++
			if !byAmbiguous && !slices.Contains(replacements, c.New) {
				x.WrongReplacement++
			}
		case !byAmbiguous:
			x.Retired++
			x.RetiredWrong++
		}
	})
	switch {
	case should && !byAmbiguous && !slices.Contains(replacements, c.New):
		rep.WrongReplacements = append(rep.WrongReplacements, r)
	case !should && !byAmbiguous:
		rep.WrongRetirements = append(rep.WrongRetirements, r)
	}
}

func verdictsOf(old *supersession.Attribute, news []*supersession.Attribute, verdicts map[[2]string]supersession.PairVerdict) []supersession.PairVerdict {
	out := make([]supersession.PairVerdict, 0, len(news))
	for _, nw := range news {
		v, ok := verdicts[[2]string{old.ID, nw.ID}]
		if !ok {
			v = supersession.PairVerdict{Old: old, New: nw}
		}
		out = append(out, v)
	}
	return out
}

// Write prints the report; verbose adds every wrong retirement, wrong
// replacement and miss.
func (rep *AspectReport) Write(w io.Writer, verbose bool) error {
	what := "aspects"
	if rep.Options.Scope {
		what = "aspects merged into one scope per entity, names withheld"
	}
	fmt.Fprintf(w, "whole %s: a live sweep at min confidence %.2f, review band [%.2f, %.2f)\n\n",
		what, rep.Options.Min, rep.Options.Review, rep.Options.Min)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "style\taspects\tstatements\tto retire\tretired\tright\twrong\tret. precision\tret. recall\twrong repl.\tpair TP\tFP\tFN\tpair precision\tpair recall\treview true/false\t\n")
	row := func(name string, c AspectCounts) {
		rp, rpok := c.RetirementPrecision()
		rr, rrok := c.RetirementRecall()
		pp, ppok := c.Pairs.Precision()
		pr, prok := c.Pairs.Recall()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d/%d\t\n", name, c.Aspects, c.Statements,
			c.ShouldRetire, c.Retired, c.RetiredRight, c.RetiredWrong, pct(rp, rpok), pct(rr, rrok), c.WrongReplacement,
			c.Pairs.TP, c.Pairs.FP, c.Pairs.FN, pct(pp, ppok), pct(pr, prok), c.Review.True, c.Review.False)
	}
	row("overall", rep.Overall)
	for _, s := range sortedKeys(rep.Styles) {
		row("  "+s, *rep.Styles[s])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d wrong retirements, %d wrong replacements, %d statements missed", len(rep.WrongRetirements),
		len(rep.WrongReplacements), len(rep.Misses))
	if len(rep.Errors) > 0 {
		fmt.Fprintf(w, "; %d lines not evaluated", len(rep.Errors))
	}
	fmt.Fprintln(w)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	if rep.LLM != nil {
		rp, rpok := rep.Heuristic.RetirementPrecision()
		rr, rrok := rep.Heuristic.RetirementRecall()
		fmt.Fprintf(w, "\nwithout the LLM: %d retired, %d right, %d wrong; retirement precision %s, recall %s\n",
			rep.Heuristic.Retired, rep.Heuristic.RetiredRight, rep.Heuristic.RetiredWrong, pct(rp, rpok), pct(rr, rrok))
		rep.LLM.write(w, "statements", rep.Overall.Statements)
	}
	if verbose {
		rep.writeDetails(w)
	}
	return nil
}

func (rep *AspectReport) writeDetails(w io.Writer) {
	list := func(title string, rs []Retirement) {
		if len(rs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, r := range rs {
			fmt.Fprintf(w, "  %s [%s, %s] %s retired by %s, confidence %.2f\n", r.Aspect.ID, styleOf(r.Aspect), r.Aspect.Name,
				statementID(r.Old.ID), statementID(r.New.ID), r.Confidence)
			fmt.Fprintf(w, "    older: %s\n    newer: %s\n", r.Old.Content.String, r.New.Content.String)
			writeSignals(w, r.Signals)
			for _, t := range r.Replacements {
				fmt.Fprintf(w, "    true replacement %s: %s\n", statementID(t.ID), t.Content.String)
			}
		}
	}
	list("wrong retirements (the statement is still true)", rep.WrongRetirements)
	list("wrong replacements (retired by a statement that does not replace it)", rep.WrongReplacements)
	if len(rep.Misses) > 0 {
		fmt.Fprintf(w, "\nmissed (should be retired, would not be):\n")
	}
	for _, m := range rep.Misses {
		fmt.Fprintf(w, "  %s [%s, %s] %s: %s\n", m.Aspect.ID, styleOf(m.Aspect), m.Aspect.Name, statementID(m.Old.ID), m.Old.Content.String)
		for _, v := range m.Replacements {
			fmt.Fprintf(w, "    by %s (%.2f): %s\n", statementID(v.New.ID), v.Confidence, v.New.Content.String)
		}
	}
}

func writeSignals(w io.Writer, sigs []heuristics.Signal) {
	parts := make([]string, 0, len(sigs))
	for _, s := range sigs {
		parts = append(parts, fmt.Sprintf("%s %.2f %s", s.Name, s.Confidence, s.Detail))
	}
	fmt.Fprintf(w, "    signals: %s\n", strings.Join(parts, "; "))
}
