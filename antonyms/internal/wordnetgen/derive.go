package main

import (
	"slices"
	"strings"
)

// derivations returns the pairs (verb or adjective, noun) that WordNet
// links as derivationally related forms ("+" pointers): "allergic" and
// "allergy", "contribute" and "contribution", "deliver" and "delivery". A
// pair is kept when it joins one of the first senses of both words, both
// are single words, the noun is made by a suffix that names an act, a
// state or a thing (-tion, -ment, -ance, -y, -al...: not a doer, as
// "employer" and "employee" are), and the other word is a verb or an
// adjective of a suffix that says "of it" (-ic, -al, -ous, -ive...); an
// inflection ("walking") is no derivation.
func (wn *wordnet) derivations(maxRank int) []pair {
	seen := map[string]bool{}
	var out []pair
	for _, key := range sortedKeys(wn.synsets) {
		s := wn.synsets[key]
		for _, d := range s.derivs {
			t := wn.synsets[d.target]
			if t == nil || d.src >= len(s.words) || d.dst >= len(t.words) {
				continue
			}
			p, ok := derivedPair(key[0], s.words[d.src], d.target[0], t.words[d.dst])
			if !ok || seen[p.a+"/"+p.b] || !wn.usable(p.pos, p.a) || !wn.usable('n', p.b) ||
				wn.rank(key[0], s.words[d.src], key) > maxRank || wn.rank(d.target[0], t.words[d.dst], d.target) > maxRank {
				continue
			}
			seen[p.a+"/"+p.b] = true
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// derivedPair orders a derivation as (verb or adjective, noun), or reports
// that it is not one derivations keeps.
func derivedPair(pos byte, w string, tpos byte, tw string) (pair, bool) {
	if pos == 'n' {
		pos, w, tpos, tw = tpos, tw, pos, w
	}
	if tpos != 'n' || pos != 'v' && pos != 'a' || w == tw || strings.ContainsAny(w+tw, "_-") {
		return pair{}, false
	}
	if !endsWith(tw, nounSuffixes) || endsWith(tw, doerSuffixes) && !endsWith(tw, nounSuffixes[:5]) {
		return pair{}, false
	}
	if pos == 'a' && !endsWith(w, adjectiveSuffixes) {
		return pair{}, false // "bright" / "brightness" says how, not what
	}
	for _, inflection := range []string{"s", "d", "ed", "ing"} {
		if tw == w+inflection || strings.HasSuffix(tw, "ing") && strings.TrimSuffix(w, "e")+"ing" == tw {
			return pair{}, false
		}
	}
	return pair{pos: pos, a: w, b: tw}, true
}

var (
	nounSuffixes      = strings.Fields(`ment ance ence ancy ency tion sion al ure age y ity ery ry`)
	doerSuffixes      = strings.Fields(`er or ist ee ian ant ent eer`)
	adjectiveSuffixes = strings.Fields(`ic al ous ive ant ent ary ory ful`)
)

func endsWith(w string, suffixes []string) bool {
	return slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(w, s) })
}
