package bench

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a Honcho peer's observations say. A scope mixes every subject a
// peer talks about: itself and the people close to it. One-value facts
// (where it lives, works, who it reports to, its favourites...) are
// observed once per subject, except the planted pairs, where a newer
// observation gives the same fact a new value; everything else is
// many-valued (visits, languages, friends, belongings, games), which
// never contradicts.

// relatives are the people close to a peer its observations mention.
var relatives = strings.Fields("sister brother partner manager mother father friend daughter son neighbour")

// verbSlots are the one-value slots (of oneValueSlots) whose statement
// starts with a verb, so that any subject can be put before it; the others
// are a noun phrase of the peer's own ("Dana's timezone is ...").
var verbSlots = []int{0, 1, 2, 5}

// subjects of a peer's observations: the peer, then its relatives.
func subjects(first string) []string {
	out := []string{first}
	for _, r := range relatives {
		out = append(out, first+"'s "+r)
	}
	return out
}

// scopeFacts are the one-value facts a scope can hold: statement makers,
// the v-th value of each, with its subject.
func scopeFacts(first string) []func(v int) string {
	slots := oneValueSlots()
	var facts []func(int) string
	for s, slot := range slots {
		if slices.Contains(verbSlots, s) {
			facts = append(facts, func(v int) string { return first + " " + lowerFirst(slot(v)) })
		} else {
			facts = append(facts, func(v int) string { return first + "'s " + lowerFirst(slot(v)) })
		}
	}
	for _, subj := range subjects(first)[1:] {
		for _, s := range verbSlots {
			facts = append(facts, func(v int) string { return subj + " " + lowerFirst(slots[s](v)) })
		}
	}
	return facts
}

// filler is the n-th many-valued observation of a scope.
func filler(subj []string, n int) string {
	return subj[n%len(subj)] + " " + lowerFirst(manyValue(n/len(subj)))
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[size:]
}

// scoped is an observation with its place in the scope's time order.
type scoped struct {
	observation
	key   float64
	older int // a planted newer one: the index of the one it replaces; else -1
}

// scope generates one peer's n observations, oldest first: its one-value
// facts (planted pairs among them: the newer always after the older),
// many-valued fillers, and the dreamer's conclusions citing explicit
// observations made before them.
func (g *honchoGenerator) scope(first string, n int) []observation {
	derived := int(float64(n)*g.spec.DerivedShare + g.r.Float64())
	if n-derived < 1 {
		derived = 0
	}
	explicit := n - derived
	facts := scopeFacts(first)
	g.r.Shuffle(len(facts), func(i, j int) { facts[i], facts[j] = facts[j], facts[i] })
	want := min(int(float64(explicit)*g.spec.ContradictionShare+g.r.Float64()), len(facts), explicit/2)
	singles := min(len(facts)-want, explicit/8, explicit-2*want)
	var items []scoped
	add := func(content string, older int) {
		items = append(items, scoped{observation: observation{id: g.ids.Next(), content: content, level: "explicit"}, key: g.r.Float64(), older: older})
	}
	for c := 0; c < want; c++ {
		v := g.value(facts[c], first, 1)
		add(facts[c](v), -1)
		add(facts[c](v+1), len(items)-1)
		// The newer comes after the older.
		items[len(items)-1].key = items[len(items)-2].key + (1-items[len(items)-2].key)*g.r.Float64()
	}
	for c := want; c < want+singles; c++ {
		add(facts[c](g.value(facts[c], first, 0)), -1)
	}
	subj, offset := subjects(first), g.r.IntN(1<<20)
	for f := 0; len(items) < explicit; f++ {
		add(filler(subj, offset+f), -1)
	}
	g.plant(items, want)
	for d := 0; d < derived; d++ {
		level := "deductive"
		if d%3 == 2 {
			level = "inductive"
		}
		items = append(items, scoped{observation: observation{id: g.ids.Next(), level: level,
			content: first + " " + lowerFirst(manyValue(offset+explicit+d)) + " (concluded)"}, key: g.r.Float64(), older: -1})
	}
	return g.order(items)
}

// value picks a value v of a fact such that neither it nor the next
// extra values name the peer itself ("Sasha's mother is married to
// Sasha" is not a new spouse for her, but a statement about Sasha).
func (g *honchoGenerator) value(fact func(int) string, first string, extra int) int {
	for {
		v := g.r.IntN(1000)
		ok := true
		for k := 0; k <= extra; k++ {
			ok = ok && strings.Count(fact(v+k), first) == 1
		}
		if ok {
			return v
		}
	}
}

// plant counts the planted pairs, and records their ids.
func (g *honchoGenerator) plant(items []scoped, want int) {
	g.st.Planted += want
	if !g.spec.RecordPlanted {
		return
	}
	for _, it := range items {
		if it.older >= 0 {
			g.st.PlantedPairs = append(g.st.PlantedPairs, [2]string{items[it.older].id, it.id})
		}
	}
}

// order sorts a scope's observations by their keys and gives each of the
// dreamer's one to three sources among the explicit ones before it (a
// conclusion before any explicit observation comes right after the first).
func (g *honchoGenerator) order(items []scoped) []observation {
	slices.SortStableFunc(items, func(a, b scoped) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out := make([]observation, 0, len(items))
	var seen []string // explicit ids so far
	var waiting []observation
	for _, it := range items {
		o := it.observation
		if o.level == "explicit" {
			seen = append(seen, o.id)
			out = append(out, o)
			g.st.Explicit++
			for _, w := range waiting {
				out = append(out, g.cite(w, seen))
			}
			waiting = waiting[:0]
			continue
		}
		if len(seen) == 0 {
			waiting = append(waiting, o)
			continue
		}
		out = append(out, g.cite(o, seen))
	}
	g.st.Observations += len(out)
	return out
}

// cite gives a conclusion one to three distinct sources among seen.
func (g *honchoGenerator) cite(o observation, seen []string) observation {
	g.st.Derived++
	k := min(1+g.r.IntN(3), len(seen))
	picked := map[int]bool{}
	for len(o.sources) < k {
		i := g.r.IntN(len(seen))
		if !picked[i] {
			picked[i] = true
			o.sources = append(o.sources, seen[i])
		}
	}
	if g.spec.Sources {
		for p, s := range o.sources {
			g.edges = append(g.edges, []any{o.id, s, p, HonchoWorkspace})
		}
	}
	return o
}
