package antonyms

import "strings"

// NegatedBase returns the word that w negates by a prefix ("unencrypted":
// "encrypted", "impossible": "possible"), when w has the form of such a
// negation: un-, non- or dis- before any letter, in- and its assimilated
// forms before theirs (im- before b, m, p; ir- before r; il- before l),
// at least three letters left, and w no false friend ("invaluable"); and
// -less negates -ful.
// Whether the base is a word, and occurs, is the caller's question.
func NegatedBase(w string) (string, bool) {
	if FalseFriend(w) {
		return "", false
	}
	if stem, ok := strings.CutSuffix(w, "less"); ok && len(stem) >= 3 {
		return stem + "ful", true // "stateless" negates "stateful", "careless" "careful"
	}
	for _, p := range negations {
		rest, ok := strings.CutPrefix(w, p.prefix)
		if ok && len(rest) >= 3 && (p.before == "" || strings.IndexByte(p.before, rest[0]) >= 0) {
			return rest, true
		}
	}
	return "", false
}

var negations = []struct{ prefix, before string }{
	{"un", ""}, {"non-", ""}, {"non", ""}, {"dis", ""},
	{"in", "acdefghjknoqstuvwxyz"}, {"im", "bmp"}, {"ir", "r"}, {"il", "l"},
}

// FalseFriend reports a word that looks like a prefix's negation of
// another, or like the base of one, and is not its opposite ("invaluable",
// "discover", "untie").
func FalseFriend(w string) bool { return falseFriends[w] }

var falseFriends = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`invaluable inflammable infamous indifferent impassive inhuman
		insignificant intense innate inborn inept inert invest invent intend impose impart illustrate
		important discover dispatch dismiss display dispose distress disease disgruntled disgust
		dissolve distract disturb dissect disband disarray unravel unloose untie unbend immaterial
		impotent imposing impressive inspired inspire disposed unbosom uncommunicative dishearten
		disburden disenchanted dissemble disembark disabuse discharge discount disapprove disrespect
		unearned unpaid nonplussed ingrained inbound inland insane inward infield disappoint disclose
		discorporate discovered incoming discuss disinter impaired displace improved disrobe dissolved
		unsaid untaught unwire incertain disconcerted disregard dispossessed disgrace impending unlash
		inter disinterested dissociate dissent distend dislodge insulate inflame inflect infuse
		disappointed unteach unstilted unstrung unsolder disown disgusted dispatched distressed
		dismissed discounted`) {
		falseFriends[w] = true
	}
}
