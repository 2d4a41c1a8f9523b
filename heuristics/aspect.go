package heuristics

import (
	"strings"
	"unicode"
)

// aspect is what an aspect's name says of its statements: the agent's
// classifier has already said what they are about ("home city",
// "hobbies", "diet"), the best evidence there is of the slot they fill and
// of whether it holds one value or many.
type aspect struct {
	// many: a plural or coordinated name ("hobbies", "pets", "music,
	// podcasts & TV"): its statements hold many values at once. A plural
	// names no one slot ("cities" is not where one lives); a coordinated
	// name's first topic may ("home and relocation").
	many bool
	// slot is the predicate whose slot the name's head names ("home city"
	// and "residence": lives in; "employer", "job": works at or as;
	// "manager": reports to), nil when none: the statements' verbs that
	// enter such a slot fill it ("Joined Razorpay", "Moved into a flat in
	// Lyon").
	slot *predicate
}

// readAspect reads an aspect's name.
func (lx *lexicon) readAspect(name string) aspect {
	if strings.TrimSpace(name) == "" {
		return aspect{}
	}
	var a aspect
	first := name
	if i := strings.IndexAny(name, ",&/:;+|("); i >= 0 {
		a.many, first = true, name[:i] // "music, podcasts & TV", "hobbies: garden, photography"
	}
	words := strings.FieldsFunc(strings.ToLower(first), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' })
	for i, w := range words {
		if w == "and" || w == "or" {
			a.many, words = true, words[:i] // "team and manager": the first is the slot
			break
		}
	}
	if len(words) == 0 {
		return a
	}
	head := words[len(words)-1]
	s := lx.stemOf(head)
	if s != head && strings.HasSuffix(head, "s") && lx.flagsOf(head)&fAttr == 0 && !strings.HasSuffix(head, "ss") {
		a.many = true // "hobbies", "pets", "cities": no one slot
		return a
	}
	for _, m := range words[:len(words)-1] {
		if lx.flagsOf(m)&fSingleMod == 0 {
			return a // "package manager" is no manager; "home city" is the city
		}
	}
	if p, ok := lx.nounSlots[s]; ok && s != "name" && s != "age" {
		a.slot = p
	}
	return a
}

// entryVerbs enter a predicate's slot when the aspect names it or its
// kin: in an aspect about where someone lives, "moved into a flat in Lyon"
// says where; about their job, "joined Razorpay" or "started at Naver" says
// for whom. Keys are the aspects' predicates' keys; values the verbs (their
// base and particles) and the key of the predicate they fill.
var entryVerbs = map[string][][2]string{
	"live in": {{"move into", "live in"}, {"move in", "live in"}, {"settle in", "live in"}},
	"work at": {{"join", "work at"}, {"start at", "work at"}, {"start with", "work at"}},
	"work as": {{"join", "work at"}, {"start at", "work at"}, {"start with", "work at"}},
}

// aspectPred is the predicate that the verb at v (with particles) fills in
// the aspect the statement is in, and the number of tokens it takes; nil
// when the aspect names no slot or the verb enters none.
func (c *clause) aspectPred(v int) (*predicate, int) {
	if c.st.asp.slot == nil {
		return nil, 0
	}
	for _, e := range defaultLexicon().entering[c.st.asp.slot] {
		if c.stem(v) != e.verb[0] {
			continue
		}
		n := 1
		for _, w := range e.verb[1:] {
			if v+n >= c.hi || c.raw(v+n) != w {
				n = -1
				break
			}
			n++
		}
		if n > 0 {
			return e.pred, n
		}
	}
	return nil, 0
}

// entering is a verb that enters a predicate's slot (see entryVerbs): its
// stem and particles, and the predicate.
type entering struct {
	verb []string
	pred *predicate
}

// entriesOf indexes entryVerbs by the aspect's predicate.
func (lx *lexicon) entriesOf() map[*predicate][]entering {
	m := map[*predicate][]entering{}
	for key, verbs := range entryVerbs {
		p := lx.preds[key]
		for _, e := range verbs {
			words := strings.Fields(e[0])
			words[0] = lx.stemOf(words[0])
			m[p] = append(m[p], entering{verb: words, pred: lx.preds[e[1]]})
		}
	}
	return m
}
