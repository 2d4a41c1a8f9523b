package llmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Truth is a labelled corpus as the scripted LLM knows it: groups of
// statements (an aspect of SPEC §12's format, or one pair of SPEC §6's) and
// the ordered pairs of each whose newer statement retires the older.
type Truth struct {
	groups []*truthGroup
	byText map[string][]*truthGroup // normalised text → the groups holding it
}

type truthGroup struct {
	aspect string
	texts  []string // normalised
	// retires holds (older, newer) indexes into texts.
	retires map[[2]int]bool
}

// normalise makes a corpus text comparable with what a prompt shows of it:
// the prompt puts a statement on one line and neutralises its delimiters.
func normalise(s string) string {
	s = strings.ReplaceAll(s, ">>>", "> > >")
	s = strings.ReplaceAll(s, "<<<", "< < <")
	return strings.Join(strings.Fields(s), " ")
}

func newTruth() *Truth { return &Truth{byText: map[string][]*truthGroup{}} }

func (t *Truth) add(g *truthGroup) {
	t.groups = append(t.groups, g)
	seen := map[string]bool{}
	for _, s := range g.texts {
		if !seen[s] {
			seen[s] = true
			t.byText[s] = append(t.byText[s], g)
		}
	}
}

// Groups is how many groups the truth holds.
func (t *Truth) Groups() int { return len(t.groups) }

// TruthFromAspects reads an `eval --aspects` file (SPEC §12): each aspect's
// statements and its "supersedes" pairs. Ambiguous pairs are not retired.
func TruthFromAspects(r io.Reader) (*Truth, error) {
	t := newTruth()
	err := eachLine(r, func(n int, line []byte) error {
		var w struct {
			Aspect     string `json:"aspect"`
			Statements []struct {
				ID   string `json:"id"`
				Text string `json:"text"`
			} `json:"statements"`
			Supersedes [][]string `json:"supersedes"`
		}
		if err := json.Unmarshal(line, &w); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		g := &truthGroup{aspect: w.Aspect, retires: map[[2]int]bool{}}
		index := map[string]int{}
		for i, s := range w.Statements {
			index[s.ID] = i
			g.texts = append(g.texts, normalise(s.Text))
		}
		for _, p := range w.Supersedes {
			o, ok1 := index[p[0]]
			nw, ok2 := index[p[1]]
			if len(p) != 2 || !ok1 || !ok2 {
				return fmt.Errorf("line %d: supersedes %v names no statement of the aspect", n, p)
			}
			g.retires[[2]int{o, nw}] = true
		}
		t.add(g)
		return nil
	})
	return t, err
}

// TruthFromPairs reads an `eval` file of labelled pairs (SPEC §6): each
// pair is a group of two statements, the newer retiring the older when its
// label is true.
func TruthFromPairs(r io.Reader) (*Truth, error) {
	t := newTruth()
	err := eachLine(r, func(n int, line []byte) error {
		var w struct {
			Older, Newer, Aspect string
			Label                bool
		}
		if err := json.Unmarshal(line, &w); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		g := &truthGroup{aspect: w.Aspect, texts: []string{normalise(w.Older), normalise(w.Newer)}, retires: map[[2]int]bool{}}
		if w.Label {
			g.retires[[2]int{0, 1}] = true
		}
		t.add(g)
		return nil
	})
	return t, err
}

func eachLine(r io.Reader, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := fn(n, []byte(line)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// place is where a window's statement is in the truth.
type place struct {
	g *truthGroup
	i int
}

// retired returns the pairs of a window (by its numbers, from 1) that the
// truth retires, and how many of its statements the truth does not hold.
// The window is matched to one group of the truth when one holds all its
// statements (one of the window's aspect first), else statement by
// statement (an entity's aspects merged into one scope): a pair is retired
// only when both statements are of one group that retires it.
func (t *Truth) retired(aspect string, texts []string) (pairs [][2]int, unmatched int) {
	places := t.whole(aspect, texts)
	if places == nil {
		places = make([]place, len(texts))
		for i, s := range texts {
			if gs := t.byText[s]; len(gs) > 0 {
				places[i] = place{gs[0], indexOf(gs[0].texts, s, 0)}
			} else {
				unmatched++
				places[i] = place{i: -1}
			}
		}
	}
	for j := range places {
		for i := range j {
			a, b := places[i], places[j]
			if a.g != nil && a.g == b.g && a.g.retires[[2]int{a.i, b.i}] {
				pairs = append(pairs, [2]int{i + 1, j + 1})
			}
		}
	}
	return pairs, unmatched
}

// whole finds one group holding every text of the window, in order.
func (t *Truth) whole(aspect string, texts []string) []place {
	if len(texts) == 0 {
		return nil
	}
	cands := t.byText[texts[0]]
	for _, named := range []bool{true, false} {
		for _, g := range cands {
			if (g.aspect == aspect) != named {
				continue
			}
			if ps := g.match(texts); ps != nil {
				return ps
			}
		}
	}
	return nil
}

// match places each text at a statement of g not taken yet (a text the
// group holds twice takes its first copy first), or nil.
func (g *truthGroup) match(texts []string) []place {
	ps := make([]place, len(texts))
	taken := map[int]bool{}
	for k, s := range texts {
		i := -1
		for from := 0; ; from = i + 1 {
			if i = indexOf(g.texts, s, from); i < 0 || !taken[i] {
				break
			}
		}
		if i < 0 {
			return nil
		}
		taken[i] = true
		ps[k] = place{g, i}
	}
	return ps
}

func indexOf(texts []string, s string, from int) int {
	for i := from; i < len(texts); i++ {
		if texts[i] == s {
			return i
		}
	}
	return -1
}
