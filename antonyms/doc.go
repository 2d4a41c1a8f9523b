// Package antonyms is the lexicon of opposite words that the contradiction
// heuristics use: pairs of word sets, grouped by kind (toggles,
// relationships, preferences, states, directions, roles), where a word on
// one side of a pair contradicts a word on the other side when both are said
// of the same subject.
//
// Sources: most pairs are WordNet 3.0's direct antonyms, kept when they join
// frequent senses of both words and one of them is seen in WordNet's tagged
// corpus; its indirect antonyms (a head adjective's antonym against the
// first-sense words of its satellites that are only adjectives: "huge"
// against "small"); and its morphological negations (un-, in-, im-, ir-,
// il-, dis-, non-) of which WordNet has both forms; wordnet.go holds them, written by internal/wordnetgen from the WordNet database
// (go generate; see WORDNET_LICENSE), so that the binary reads nothing at run
// time. The pairs written by hand in antonyms.go fill WordNet's gaps:
// pairs it lacks (recommended/deprecated), senses it ranks too rare to keep
// (on/off), groups it splits (accepted and approved against denied and
// rejected).
//
// It also holds, from the same database, WordNet's derivationally related
// forms of verbs and adjectives and the nouns made from them (Derivations:
// "allergic" and "allergy"): the heuristics read a state or an act said
// with either as one.
//
// Design:
//   - A pair is bidirectional: either side may appear in the older or the
//     newer statement.
//   - A side lists the inflected forms explicitly ("enabled", "enable",
//     "enables") rather than relying on a stemmer, so that this package is
//     usable on its own and its matches are exact.
//   - A word may belong to several pairs ("married" is opposed both to
//     "single" and to "divorced"), but never to both sides of one pair.
//   - Words on the same side of a pair are not antonyms of each other
//     ("likes" and "loves" agree).
//
// The table is a read-only value built from literals; Pairs returns a copy
// and an Index is built from it, so no caller can change what another sees.
// Whether two opposite words are about the same subject is not decided here:
// that is the heuristics package's job.
package antonyms
