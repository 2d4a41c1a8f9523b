package supersession

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/llm"
)

// DefaultMaxStatements is maintenance.llm.maxStatements' default: the
// statements one window shows the LLM at most.
const DefaultMaxStatements = 24

// minWindow is the smallest window that can settle a pair.
const minWindow = 2

// Window is one question to the LLM (SPEC §13): statements of one aspect in
// time order, and the pending pairs its answer settles. A pair is settled
// by exactly one window of a plan (its owner), though another window may
// show both of its statements.
type Window struct {
	Group *Group
	// Attrs are the statements shown, oldest first: numbered from 1 in the
	// request.
	Attrs []*Attribute
	// Pairs are the pending pairs this window settles; both sides of each
	// are in Attrs.
	Pairs []pendingPair
}

// Request is what the LLM is asked.
func (w *Window) Request() llm.WindowRequest {
	r := llm.WindowRequest{Aspect: w.Group.AspectName, Statements: make([]llm.WindowStatement, len(w.Attrs))}
	for i, a := range w.Attrs {
		r.Statements[i] = llm.WindowStatement{At: a.CreatedAt, Text: a.Content.String, Constraint: a.Kind == KindConstraint}
	}
	return r
}

// Key is the window's cache key: its content in order, the model and the
// prompt version (llm.WindowRequest.Key).
func (w *Window) Key(model string) [32]byte { return w.Request().Key(model) }

// answer maps a window's verdict back to the pairs it settles: each pair
// the reply retires gets its confidence and the reply's reasoning; every
// other pair it settles is "no contradiction". unowned counts retirements of
// pairs this window does not settle (decided by the heuristics, settled by
// another window, or never a candidate: a protected older statement).
func (w *Window) answer(v llm.WindowVerdict) (out verdicts, unowned int) {
	number := make(map[*Attribute]int, len(w.Attrs))
	for i, a := range w.Attrs {
		number[a] = i + 1
	}
	owned := make(map[[2]int]pairKey, len(w.Pairs))
	out = make(verdicts, len(w.Pairs))
	for _, p := range w.Pairs {
		k := keyOf(p.old, p.new)
		owned[[2]int{number[p.old], number[p.new]}] = k
		out[k] = semanticVerdict{}
	}
	for _, r := range v.Retired {
		k, ok := owned[[2]int{r.Older, r.Newer}]
		if !ok {
			unowned++
			continue
		}
		out[k] = semanticVerdict{contradicts: true, confidence: r.Confidence, reasoning: v.Reasoning}
	}
	return out, unowned
}

// failed marks every pair the window settles as unanswered this run.
func (w *Window) failed(into verdicts) {
	for _, p := range w.Pairs {
		into[keyOf(p.old, p.new)] = semanticVerdict{failed: true}
	}
}

// windowable reports whether a statement may be shown in a window: one that
// takes part in pairs, or a constraint (context: never on either side).
func windowable(a *Attribute) bool {
	if o, n, _ := eligibility(a); (o || n) && a.failure == "" {
		return true
	}
	return a.Kind == KindConstraint && !a.BadTime && a.Content.Valid && strings.TrimSpace(a.Content.String) != "" &&
		utf8.ValidString(a.Content.String) && len(a.Content.String) <= MaxContentBytes
}

// planWindows returns the windows that settle the pending pairs of g (sorted
// oldest first), each of at most limit statements (at least two), every
// pending pair settled by exactly one. It is pure and deterministic: the
// same group and pairs give the same windows, so an unchanged aspect asks
// the same questions, whose answers are cached.
//
// When every statement up to the newest one being decided fits, that is one
// window: the whole aspect as the LLM would read it, constraints included.
// Otherwise each window is built around the newest statement (the focus)
// with pairs left: the focus, then its older partners that share a blocking
// key with it, then the newest of the others; room left over goes to the
// next focus and its partners, in the same order.
func planWindows(g *Group, pending []pendingPair, limit int) []*Window {
	if len(pending) == 0 {
		return nil
	}
	limit = max(limit, minWindow)
	pos := make(map[*Attribute]int, len(g.Attrs))
	for i, a := range g.Attrs {
		pos[a] = i
	}
	newest := 0
	for _, p := range pending {
		newest = max(newest, pos[p.new])
	}
	var all []*Attribute
	for _, a := range g.Attrs[:newest+1] {
		if windowable(a) {
			all = append(all, a)
		}
	}
	pairs := slices.Clone(pending)
	slices.SortFunc(pairs, func(a, b pendingPair) int {
		if c := pos[b.new] - pos[a.new]; c != 0 {
			return c
		}
		return pos[b.old] - pos[a.old]
	})
	if len(all) <= limit {
		return []*Window{{Group: g, Attrs: all, Pairs: pairs}}
	}
	return newCover(g, pos, pairs).windows(g, limit)
}

// cover is the state of covering pending pairs with windows too small for
// the whole aspect. Statements are named by their place in the group.
type cover struct {
	attrs []*Attribute
	left  map[uint64]pendingPair // pairs no window settles yet, by pairIndex(older, newer)
	adj   [][]int32              // each statement's partners in pending pairs
	// newers are the newer sides of pending pairs, newest first, and
	// asNewer how many pairs each has left; the newest with one left is at
	// or after next.
	newers  []int32
	asNewer []int32
	next    int
	// Per window: shown and gain (pairs left with the shown statements)
	// are valid where stamp is the window's.
	stamp      []uint32
	gen        uint32
	shown      []bool
	gain       []int32
	keyed      []bool // shares a blocking key with the window's focus
	candidates []int32
}

func pairIndex(older, newer int) uint64 { return uint64(older)<<32 | uint64(newer) }

// newCover takes pairs sorted newest newer side first.
func newCover(g *Group, pos map[*Attribute]int, pairs []pendingPair) *cover {
	n := len(g.Attrs)
	c := &cover{attrs: g.Attrs, left: make(map[uint64]pendingPair, len(pairs)), adj: make([][]int32, n),
		asNewer: make([]int32, n), stamp: make([]uint32, n), shown: make([]bool, n), gain: make([]int32, n), keyed: make([]bool, n)}
	for _, p := range pairs {
		o, nw := pos[p.old], pos[p.new]
		k := pairIndex(o, nw)
		if _, dup := c.left[k]; dup {
			continue
		}
		c.left[k] = p
		c.adj[o] = append(c.adj[o], int32(nw))
		c.adj[nw] = append(c.adj[nw], int32(o))
		if c.asNewer[nw] == 0 {
			c.newers = append(c.newers, int32(nw))
		}
		c.asNewer[nw]++
	}
	return c
}

// pending reports whether the pair of a and b is left, in either order.
func (c *cover) pending(a, b int32) bool {
	if a > b {
		a, b = b, a
	}
	_, ok := c.left[pairIndex(int(a), int(b))]
	return ok
}

// sharesKey reports whether a probe key of one statement meets an anchor
// key of the other: the pairs the heuristics compared (and found nothing).
func sharesKey(a, b *Attribute) bool {
	aa, ap := a.blockKeys()
	ba, bp := b.blockKeys()
	return meet(ap, ba) || meet(bp, aa)
}

func meet(probes, anchors []heuristics.Key) bool {
	for _, p := range probes {
		if slices.Contains(anchors, p) {
			return true
		}
	}
	return false
}

// windows takes windows until every pair is settled. A window starts from
// the newest statement with a pair left as its newer side (its focus) and
// grows by the statement that settles the most pairs left with those
// already shown; ties go to a statement sharing a blocking key with the
// focus, then to the newest. For a focus whose partners are not each
// other's (the inline hook's classification), that is the focus, then its
// partners sharing a key with it, then the newest. A window settles at
// least one pair (its focus's first partner), so the loop ends.
func (c *cover) windows(g *Group, limit int) []*Window {
	var out []*Window
	for len(c.left) > 0 {
		shown := c.grow(limit)
		slices.Sort(shown)
		w := &Window{Group: g, Attrs: make([]*Attribute, len(shown)), Pairs: c.settle(shown)}
		for i, at := range shown {
			w.Attrs[i] = c.attrs[at]
		}
		out = append(out, w)
	}
	return out
}

// focus is the newest statement with a pair left as its newer side, not
// shown in the window being grown; -1 when there is none.
func (c *cover) focus() int32 {
	for c.next < len(c.newers) && c.asNewer[c.newers[c.next]] == 0 {
		c.next++
	}
	for _, f := range c.newers[c.next:] {
		if c.asNewer[f] > 0 && !c.isShown(f) {
			return f
		}
	}
	return -1
}

func (c *cover) isShown(a int32) bool { return c.stamp[a] == c.gen && c.shown[a] }

// grow fills one window from its focus.
func (c *cover) grow(limit int) []int32 {
	c.gen++
	c.candidates = c.candidates[:0]
	var list []int32
	focus := c.focus()
	add := func(a int32) {
		c.touch(a)
		c.shown[a] = true
		list = append(list, a)
		for _, b := range c.adj[a] {
			if c.isShown(b) || !c.pending(a, b) {
				continue
			}
			if c.touch(b) {
				c.keyed[b] = sharesKey(c.attrs[b], c.attrs[focus])
				c.candidates = append(c.candidates, b)
			}
			c.gain[b]++
		}
	}
	add(focus)
	for len(list) < limit {
		best := int32(-1)
		for _, b := range c.candidates {
			if !c.shown[b] && (best < 0 || c.better(b, best)) {
				best = b
			}
		}
		if best >= 0 {
			add(best)
			continue
		}
		// The shown statements' partners are all shown: start on the next
		// focus when it and a partner still fit.
		next := c.focus()
		if next < 0 || limit-len(list) < minWindow {
			break
		}
		add(next)
	}
	return list
}

// touch makes a's per-window state this window's; true when it was not.
func (c *cover) touch(a int32) bool {
	if c.stamp[a] == c.gen {
		return false
	}
	c.stamp[a], c.shown[a], c.gain[a], c.keyed[a] = c.gen, false, 0, false
	return true
}

// better orders candidates: more pairs settled, then sharing a blocking
// key with the focus, then newer.
func (c *cover) better(a, b int32) bool {
	if c.gain[a] != c.gain[b] {
		return c.gain[a] > c.gain[b]
	}
	if c.keyed[a] != c.keyed[b] {
		return c.keyed[a]
	}
	return a > b
}

// settle takes every pair left whose sides are both shown (sorted), newest
// newer side first.
func (c *cover) settle(shown []int32) []pendingPair {
	var pairs []pendingPair
	for j := len(shown) - 1; j > 0; j-- {
		for i := j - 1; i >= 0; i-- {
			k := pairIndex(int(shown[i]), int(shown[j]))
			if p, ok := c.left[k]; ok {
				pairs = append(pairs, p)
				delete(c.left, k)
				c.asNewer[shown[j]]--
			}
		}
	}
	return pairs
}
