// Command wordnetgen writes the antonym pairs that package antonyms takes
// from WordNet 3.0: the direct antonyms of WordNet's adjectives, verbs,
// nouns and adverbs, the indirect antonyms of its adjectives (through
// their satellites), and the morphological negations (un-, in-, im-, ir-,
// il-, dis-, non-) of which WordNet lists both forms. It reads the database
// files (Debian's wordnet-base installs them under /usr/share/wordnet) and
// writes a Go file, so that the binary needs nothing at run time:
//
//	go run ./internal/wordnetgen -wordnet /usr/share/wordnet -o wordnet.go
//
// WordNet lists an antonym for every sense of a word, and most senses are
// rare ("hot" as in stolen goods). A pair is kept only when it joins one of
// the first senses of both words (WordNet orders senses by frequency in a
// tagged corpus). Neither word need occur in that corpus, which is small
// ("insecure", "asynchronous" and "left-handed" are not in it): a word that
// rare is used in its antonym's sense when it is used at all. Multi-word
// lemmas, function words and a few false friends of the prefixes
// ("invaluable", "inflammable") are left out.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/supersessiond/supersessiond/antonyms"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "directory of the WordNet 3.0 database files")
	out := flag.String("o", "wordnet.go", "the Go file to write")
	senses := flag.Int("senses", 2, "keep a pair only when it joins senses of at most this rank in both words")
	flag.Parse()
	src, err := generate(*dir, *senses)
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
}

// generate returns the Go source of the tables.
func generate(dir string, senses int) ([]byte, error) {
	wn, err := load(dir)
	if err != nil {
		return nil, err
	}
	pairs := wn.direct(senses)
	return render(wn, pairs, wn.indirect(pairs, senses), wn.morphological(pairs), wn.derivations(senses))
}

// Parts of speech as WordNet's file names spell them.
var posFiles = map[byte]string{'a': "adj", 'v': "verb", 'n': "noun", 'r': "adv"}

type synset struct {
	lexFile int
	words   []string
	ants    []antPtr
	derivs  []antPtr // derivationally related forms ("+" pointers)
	similar []string // an adjective head's satellites ("&" pointers), pos + offset
}

// antPtr is an antonym pointer from word src of a synset to word dst of
// synset target.
type antPtr struct {
	src, dst int
	target   string // pos + offset
}

type lemmaInfo struct {
	synsets []string // pos + offset, most frequent sense first
	tagged  int      // senses seen in the tagged corpus
}

type wordnet struct {
	synsets map[string]*synset   // pos + offset
	lemmas  map[string]lemmaInfo // pos + lemma
	exc     map[string][]string  // pos + base → inflected forms
}

func load(dir string) (*wordnet, error) {
	wn := &wordnet{synsets: map[string]*synset{}, lemmas: map[string]lemmaInfo{}, exc: map[string][]string{}}
	for pos, name := range posFiles {
		if err := eachLine(filepath.Join(dir, "index."+name), func(f []string) error { return wn.addIndex(pos, f) }); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "data."+name), func(f []string) error { return wn.addData(pos, f) }); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, name+".exc"), func(f []string) error {
			for _, base := range f[1:] {
				wn.exc[string(pos)+base] = append(wn.exc[string(pos)+base], f[0])
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// eachLine calls fn with the fields of every line of a database file but
// its licence header (lines that start with a space).
func eachLine(name string, fn func([]string) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if gloss := strings.Index(line, " | "); gloss >= 0 {
			line = line[:gloss]
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return sc.Err()
}

// addIndex reads "lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...".
func (wn *wordnet) addIndex(pos byte, f []string) error {
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(f[3])
	if err != nil {
		return err
	}
	tagged, err := strconv.Atoi(f[5+p])
	if err != nil {
		return err
	}
	li := lemmaInfo{tagged: tagged}
	for _, off := range f[6+p : 6+p+n] {
		li.synsets = append(li.synsets, string(pos)+off)
	}
	wn.lemmas[string(pos)+f[0]] = li
	return nil
}

// addData reads "offset lex_filenum ss_type w_cnt word lex_id... p_cnt ptr...".
func (wn *wordnet) addData(pos byte, f []string) error {
	lexFile, err := strconv.Atoi(f[1])
	if err != nil {
		return err
	}
	w, err := strconv.ParseInt(f[3], 16, 0)
	if err != nil {
		return err
	}
	s := &synset{lexFile: lexFile}
	for i := 0; i < int(w); i++ {
		word := strings.ToLower(f[4+2*i])
		if k := strings.IndexByte(word, '('); k > 0 {
			word = word[:k] // adjective markers: (a), (p), (ip)
		}
		s.words = append(s.words, word)
	}
	k := 4 + 2*int(w)
	np, err := strconv.Atoi(f[k])
	if err != nil {
		return err
	}
	for i := 0; i < np; i++ {
		ptr := f[k+1+4*i : k+5+4*i]
		if ptr[0] == "&" && pos == 'a' {
			s.similar = append(s.similar, "a"+ptr[1])
		}
		if ptr[0] != "!" && ptr[0] != "+" {
			continue
		}
		src, _ := strconv.ParseInt(ptr[3][:2], 16, 0)
		dst, _ := strconv.ParseInt(ptr[3][2:], 16, 0)
		tpos := ptr[2][0]
		if tpos == 's' {
			tpos = 'a'
		}
		p := antPtr{src: int(src) - 1, dst: int(dst) - 1, target: string(tpos) + ptr[1]}
		if ptr[0] == "+" {
			s.derivs = append(s.derivs, p)
		} else {
			s.ants = append(s.ants, p)
		}
	}
	wn.synsets[string(pos)+f[0]] = s
	return nil
}

// pair is two lemmas of one part of speech that WordNet opposes.
type pair struct {
	pos     byte
	a, b    string
	lexFile int
}

// direct returns WordNet's antonym pairs between frequent senses of
// frequent single words.
func (wn *wordnet) direct(maxRank int) []pair {
	seen := map[string]bool{}
	var out []pair
	for _, key := range sortedKeys(wn.synsets) {
		s, pos := wn.synsets[key], key[0]
		for _, a := range s.ants {
			t := wn.synsets[a.target]
			if t == nil || a.src < 0 || a.dst < 0 || a.src >= len(s.words) || a.dst >= len(t.words) {
				continue
			}
			w1, w2 := s.words[a.src], t.words[a.dst]
			if w1 == w2 || !wn.usable(pos, w1) || !wn.usable(pos, w2) {
				continue
			}
			if wn.rank(pos, w1, key) > maxRank || wn.rank(pos, w2, a.target) > maxRank {
				continue
			}
			p := pair{pos: pos, a: min(w1, w2), b: max(w1, w2), lexFile: s.lexFile}
			if id := string(pos) + p.a + "/" + p.b; !seen[id] {
				seen[id] = true
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// indirect returns WordNet's indirect antonyms: an adjective head's
// antonym against each frequent word of the head's satellites ("freezing",
// similar to "cold", against "hot"). Satellites of the two heads are not
// paired with each other: two steps from the pair, the opposition fades.
// A satellite word counts only in its first sense and when it is only an
// adjective: "blue" (a colour, a mood, a political side) opposes nothing
// in particular.
func (wn *wordnet) indirect(direct []pair, maxRank int) []pair {
	have := map[string]bool{}
	for _, p := range direct {
		have[p.a+"/"+p.b] = true
	}
	var out []pair
	for _, key := range sortedKeys(wn.synsets) {
		s := wn.synsets[key]
		if key[0] != 'a' || len(s.similar) == 0 {
			continue
		}
		for _, a := range s.ants {
			if a.src < 0 || a.src >= len(s.words) || !wn.common('a', s.words[a.src], key, maxRank) {
				continue
			}
			t := wn.synsets[a.target]
			if t == nil || a.dst < 0 || a.dst >= len(t.words) || !wn.common('a', t.words[a.dst], a.target, maxRank) {
				continue
			}
			opposite := t.words[a.dst]
			for _, sat := range s.similar {
				for _, w := range wn.synsets[sat].words {
					p := pair{pos: 'a', a: min(w, opposite), b: max(w, opposite), lexFile: s.lexFile}
					if w == opposite || !wn.frequent('a', w, sat, 1) || wn.listed(w, "nvr") || have[p.a+"/"+p.b] {
						continue
					}
					have[p.a+"/"+p.b] = true
					out = append(out, p)
				}
			}
		}
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// common reports a usable lemma for which synset is one of its first
// maxRank senses; frequent, one seen in the tagged corpus too. (The heads
// of an indirect pair need only be common: "tidy" and "untidy" are not in
// the corpus, "messy" is.)
func (wn *wordnet) common(pos byte, w, synset string, maxRank int) bool {
	return wn.usable(pos, w) && wn.rank(pos, w, synset) <= maxRank
}

func (wn *wordnet) frequent(pos byte, w, synset string, maxRank int) bool {
	return wn.common(pos, w, synset, maxRank) && wn.lemmas[string(pos)+w].tagged > 0
}

// listed reports a word that WordNet lists in one of the parts of speech
// ("nvar": noun, verb, adjective, adverb).
func (wn *wordnet) listed(w, poses string) bool {
	for _, pos := range poses {
		if _, ok := wn.lemmas[string(pos)+w]; ok {
			return true
		}
	}
	return false
}

// sortedKeys makes the output independent of map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func comparePairs(x, y pair) int {
	if c := strings.Compare(x.a, y.a); c != 0 {
		return c
	}
	if c := strings.Compare(x.b, y.b); c != 0 {
		return c
	}
	return int(x.pos) - int(y.pos)
}

// rank is the sense number of synset in lemma's senses (1 is the most
// frequent), or a large number when it is not one of them.
func (wn *wordnet) rank(pos byte, lemma, synset string) int {
	if i := slices.Index(wn.lemmas[string(pos)+lemma].synsets, synset); i >= 0 {
		return i + 1
	}
	return 1 << 20
}

// usable: a single lowercase word, and not a function word, whose
// opposites ("in"/"out", "before"/"after") are prepositions more often than
// statements of opposite facts.
func (wn *wordnet) usable(pos byte, w string) bool {
	if len(w) < 2 || functionWords[w] {
		return false
	}
	for _, c := range w {
		if (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

var functionWords = toSet(`a an the in out on off up down into onto over under above below before after
	from to with without for against here there this that all none some any each every first last next
	previous same other more less most least much many few little yes no not and or but if then than
	inside outside within forth back ahead behind front have be do get go come make take give put let
	say see stay change live work unlike`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// negationPolicy: the parts of speech each prefix of antonyms.NegatedBase
// negates, and whether the negated form must have been seen in the tagged
// corpus too (un- and non- are productive; a dis- or in- word is often no
// negation at all: "distrain", "intoned").
var negationPolicy = map[string]struct {
	pos        string
	bothTagged bool
}{
	"un": {"av", false}, "non": {"a", false}, "non-": {"a", false}, "dis": {"av", true},
	"in": {"a", true}, "im": {"a", true}, "ir": {"a", true}, "il": {"a", true},
}

// morphological returns the pairs (base, prefix+base) of which WordNet has
// both forms as lemmas of the part of speech the prefix negates, that
// share no synset, and that direct does not already give.
func (wn *wordnet) morphological(direct []pair) []pair {
	have := map[string]bool{}
	for _, p := range direct {
		have[p.a+"/"+p.b] = true
	}
	var out []pair
	for _, key := range sortedKeys(wn.lemmas) {
		li, pos, neg := wn.lemmas[key], key[0], key[1:]
		base, ok := antonyms.NegatedBase(neg)
		pf, known := negationPolicy[strings.TrimSuffix(neg, base)]
		if !ok || !known || !strings.ContainsRune(pf.pos, rune(pos)) || antonyms.FalseFriend(base) {
			continue
		}
		bi, ok := wn.lemmas[string(pos)+base]
		if !ok || bi.tagged == 0 || pf.bothTagged && li.tagged == 0 || !wn.usable(pos, base) || !wn.usable(pos, neg) || shareSynset(li, bi) {
			continue
		}
		if p := (pair{pos: pos, a: min(base, neg), b: max(base, neg)}); !have[p.a+"/"+p.b] {
			have[p.a+"/"+p.b] = true
			p.a, p.b = base, neg // the base first: side A
			p.lexFile = wn.synsets[bi.synsets[0]].lexFile
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparePairs)
	return out
}

func shareSynset(a, b lemmaInfo) bool {
	for _, s := range a.synsets {
		if slices.Contains(b.synsets, s) {
			return true
		}
	}
	return false
}

// kind maps WordNet's lexicographer files to the pair kinds of package
// antonyms.
func kind(pos byte, lexFile int) string {
	switch {
	case pos == 'n' && lexFile != 12:
		return "Role" // opposite entities: winner/loser, employer/employee
	case lexFile == 37, lexFile == 12: // verb.emotion, noun.feeling
		return "Preference"
	case lexFile == 38, lexFile == 40, lexFile == 30: // verb.motion, verb.possession, verb.change
		return "Direction"
	case lexFile == 41, lexFile == 18: // verb.social, noun.person
		return "Relationship"
	}
	return "State"
}

// forms returns the inflected forms of a lemma: WordNet's exceptions, or
// the regular ones (a form that is not a word never matches anything).
func (wn *wordnet) forms(pos byte, w string) []string {
	out := []string{w}
	exc := wn.exc[string(pos)+w]
	out = append(out, exc...)
	switch pos {
	case 'v':
		if len(exc) == 0 {
			out = append(out, pastForm(w))
		}
		out = append(out, thirdPerson(w), gerund(w))
	case 'n':
		if len(exc) == 0 {
			out = append(out, thirdPerson(w))
		}
	case 'a':
		if len(exc) == 0 && len(w) <= 5 && !strings.Contains(w, "-") {
			// The comparative of a rare adjective that is a word of its
			// own ("aft", "after"; "fore", "forest") is that word.
			for _, c := range []string{comparative(w, "er"), comparative(w, "est")} {
				if wn.lemmas["a"+w].tagged > 0 || !wn.listed(c, "nvar") {
					out = append(out, c)
				}
			}
		}
	}
	rest := out[1:]
	slices.Sort(rest)
	rest = slices.Compact(rest)
	if i := slices.Index(rest, w); i >= 0 {
		rest = slices.Delete(rest, i, i+1)
	}
	return append([]string{w}, rest...)
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

func thirdPerson(w string) string {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "sh"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"):
		return w + "es"
	case n > 1 && w[n-1] == 'y' && !isVowel(w[n-2]):
		return w[:n-1] + "ies"
	}
	return w + "s"
}

func pastForm(w string) string {
	n := len(w)
	switch {
	case w[n-1] == 'e':
		return w + "d"
	case n > 1 && w[n-1] == 'y' && !isVowel(w[n-2]):
		return w[:n-1] + "ied"
	}
	return w + "ed"
}

func gerund(w string) string {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "ie"):
		return w[:n-2] + "ying"
	case w[n-1] == 'e' && !strings.HasSuffix(w, "ee"):
		return w[:n-1] + "ing"
	}
	return w + "ing"
}

func comparative(w, suffix string) string {
	n := len(w)
	switch {
	case w[n-1] == 'e':
		return w + suffix[1:]
	case n > 1 && w[n-1] == 'y' && !isVowel(w[n-2]):
		return w[:n-1] + "i" + suffix
	}
	return w + suffix
}

func render(wn *wordnet, direct, indirect, morph, derived []pair) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by wordnetgen from WordNet 3.0 (see WORDNET_LICENSE); DO NOT EDIT.\n\n")
	b.WriteString("package antonyms\n\n")
	write := func(name, source, doc string, ps []pair) {
		fmt.Fprintf(&b, "// %s\nvar %s = [...]Pair{\n", doc, name)
		for _, p := range ps {
			fmt.Fprintf(&b, "\t{%s, %s, %s, %s},\n", kind(p.pos, p.lexFile), source,
				goStrings(wn.forms(p.pos, p.a)), goStrings(wn.forms(p.pos, p.b)))
		}
		b.WriteString("}\n\n")
	}
	write("wordnetPairs", "WordNet", fmt.Sprintf("wordnetPairs are WordNet's direct antonyms (%d pairs).", len(direct)), direct)
	write("indirectPairs", "Indirect", fmt.Sprintf("indirectPairs are WordNet's indirect antonyms: a head adjective's antonym against the words of its satellites (%d pairs).", len(indirect)), indirect)
	write("morphologicalPairs", "Morphological", fmt.Sprintf("morphologicalPairs are a base and its negation by a prefix, both WordNet lemmas (%d pairs).", len(morph)), morph)
	fmt.Fprintf(&b, "// derivationPairs are a verb or an adjective and the noun WordNet derives from it (%d pairs).\nvar derivationPairs = [...][2]string{\n", len(derived))
	for _, p := range derived {
		fmt.Fprintf(&b, "\t{%q, %q},\n", p.a, p.b)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func goStrings(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}
