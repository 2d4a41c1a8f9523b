package antonyms

import "strings"

// Kind groups pairs by what they oppose. The kind ends up in explanations.
type Kind string

const (
	Toggle       Kind = "toggle"       // settings and switches: on/off, enabled/disabled
	Relationship Kind = "relationship" // relationship and employment status: married/single
	Preference   Kind = "preference"   // likes and tastes: likes/dislikes, spicy/mild
	State        Kind = "state"        // conditions: healthy/sick, full-time/part-time
	Direction    Kind = "direction"    // movement and position: up/down, buy/sell
)

// Pair is two sets of words that contradict each other. A and B are the two
// sides; each lists lowercase word forms.
type Pair struct {
	Kind Kind
	A, B []string
}

// Name is a short label for the pair: the first word of each side.
func (p Pair) Name() string { return p.A[0] + "/" + p.B[0] }

// table is the lexicon. Keep sides free of words that are ambiguous in
// ordinary speech unless the opposite side disambiguates them (the
// heuristics only count a pair when the rest of the two statements agree).
var table = [...]Pair{
	// Toggles.
	{Toggle, []string{"on"}, []string{"off"}},
	{Toggle, []string{"enabled", "enable", "enables", "enabling"}, []string{"disabled", "disable", "disables", "disabling"}},
	{Toggle, []string{"active", "activated", "activate"}, []string{"inactive", "deactivated", "deactivate"}},
	{Toggle, []string{"open", "opened"}, []string{"closed", "shut"}},
	{Toggle, []string{"locked", "lock", "locks"}, []string{"unlocked", "unlock", "unlocks"}},
	{Toggle, []string{"allowed", "allow", "allows", "permitted"}, []string{"blocked", "block", "blocks", "denied", "deny", "denies", "forbidden"}},
	{Toggle, []string{"include", "includes", "included"}, []string{"exclude", "excludes", "excluded"}},
	{Toggle, []string{"visible", "shown"}, []string{"hidden", "invisible"}},
	{Toggle, []string{"public"}, []string{"private"}},
	{Toggle, []string{"online"}, []string{"offline"}},
	{Toggle, []string{"connected", "connects"}, []string{"disconnected", "disconnects"}},
	{Toggle, []string{"installed"}, []string{"uninstalled"}},
	{Toggle, []string{"subscribed"}, []string{"unsubscribed"}},
	{Toggle, []string{"muted", "mute"}, []string{"unmuted", "unmute"}},
	{Toggle, []string{"shared"}, []string{"unshared"}},
	{Toggle, []string{"start", "starts", "started"}, []string{"stop", "stops", "stopped"}},
	{Toggle, []string{"true"}, []string{"false"}},

	// Relationships and employment status.
	{Relationship, []string{"married"}, []string{"divorced", "separated"}},
	{Relationship, []string{"married", "engaged", "dating", "taken"}, []string{"single"}},
	{Relationship, []string{"employed"}, []string{"unemployed"}},
	{Relationship, []string{"hired"}, []string{"fired"}},
	{Relationship, []string{"friends", "friend", "allies"}, []string{"enemies", "enemy", "rivals"}},
	{Relationship, []string{"buyer", "buying", "buy", "buys", "bought"}, []string{"seller", "selling", "sell", "sells", "sold"}},

	// Preferences and tastes.
	{Preference, []string{"like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "enjoyed", "adore", "adores"},
		[]string{"dislike", "dislikes", "disliked", "hate", "hates", "hated", "detest", "detests", "loathe", "loathes"}},
	{Preference, []string{"prefer", "prefers", "preferred", "favors", "favours"}, []string{"avoid", "avoids", "avoided"}},
	{Preference, []string{"spicy", "hot"}, []string{"mild"}},
	{Preference, []string{"sweet"}, []string{"savory", "savoury", "salty"}},
	{Preference, []string{"hot", "warm", "warmer", "hotter"}, []string{"cold", "colder", "cool", "cooler"}},
	{Preference, []string{"quiet", "quieter", "silent"}, []string{"loud", "louder", "noisy"}},
	{Preference, []string{"early", "earlier"}, []string{"late", "later"}},
	{Preference, []string{"light"}, []string{"dark"}},
	{Preference, []string{"indoor", "indoors"}, []string{"outdoor", "outdoors"}},
	{Preference, []string{"short", "shorter"}, []string{"long", "longer"}},
	{Preference, []string{"introvert", "introverted"}, []string{"extrovert", "extroverted", "extravert"}},
	{Preference, []string{"cheap", "cheaper", "inexpensive"}, []string{"expensive", "pricey"}},
	{Preference, []string{"fast", "faster", "quick"}, []string{"slow", "slower"}},
	{Preference, []string{"big", "bigger", "large", "larger"}, []string{"small", "smaller", "little"}},

	// States.
	{State, []string{"healthy", "well"}, []string{"sick", "ill", "unwell"}},
	{State, []string{"awake"}, []string{"asleep"}},
	{State, []string{"full-time"}, []string{"part-time"}},
	{State, []string{"remote", "remotely"}, []string{"on-site", "onsite", "in-office", "in-person"}},
	{State, []string{"wet", "damp"}, []string{"dry"}},
	{State, []string{"high", "higher"}, []string{"low", "lower"}},
	{State, []string{"available"}, []string{"unavailable"}},
	{State, []string{"happy", "satisfied"}, []string{"unhappy", "sad", "dissatisfied"}},
	{State, []string{"alive"}, []string{"dead", "deceased"}},
	{State, []string{"present"}, []string{"absent"}},
	{State, []string{"paid"}, []string{"unpaid"}},
	{State, []string{"complete", "completed", "finished"}, []string{"incomplete", "unfinished"}},
	{State, []string{"valid"}, []string{"invalid", "expired"}},
	{State, []string{"clean"}, []string{"dirty"}},
	{State, []string{"full"}, []string{"empty"}},
	{State, []string{"passed", "pass", "passes"}, []string{"failed", "fail", "fails"}},
	{State, []string{"with"}, []string{"without"}},
	{State, []string{"day", "days", "daytime"}, []string{"night", "nights", "nighttime"}},
	{State, []string{"legal"}, []string{"illegal"}},

	// Directions.
	{Direction, []string{"up"}, []string{"down"}},
	{Direction, []string{"increase", "increased", "increases", "increasing", "rising"}, []string{"decrease", "decreased", "decreases", "decreasing", "falling"}},
	{Direction, []string{"above"}, []string{"below"}},
	{Direction, []string{"north", "northern"}, []string{"south", "southern"}},
	{Direction, []string{"east", "eastern"}, []string{"west", "western"}},
	{Direction, []string{"inside"}, []string{"outside"}},
	{Direction, []string{"upstairs"}, []string{"downstairs"}},
	{Direction, []string{"left"}, []string{"right"}},
	{Direction, []string{"more"}, []string{"less", "fewer"}},
	{Direction, []string{"add", "adds", "added"}, []string{"remove", "removes", "removed"}},
	{Direction, []string{"accept", "accepts", "accepted", "approve", "approves", "approved"}, []string{"reject", "rejects", "rejected", "decline", "declines", "declined"}},
	{Direction, []string{"arrive", "arrives", "arrived", "arriving"}, []string{"depart", "departs", "departed", "departing"}},
	{Direction, []string{"win", "wins", "won", "winning"}, []string{"lose", "loses", "lost", "losing"}},
}

// Pairs returns a copy of every pair, in a stable order. Pair i of the
// result is the pair that Ref.Pair == i refers to.
func Pairs() []Pair {
	out := make([]Pair, len(table))
	for i, p := range table {
		out[i] = Pair{Kind: p.Kind, A: append([]string(nil), p.A...), B: append([]string(nil), p.B...)}
	}
	return out
}

// Ref locates a word in the table: the pair it belongs to and its side
// (0 for A, 1 for B).
type Ref struct {
	Pair int
	Side int
}

// Index answers word lookups. It is immutable once built and safe for
// concurrent use.
type Index struct {
	pairs []Pair
	words map[string][]Ref
}

// NewIndex builds an index over the table.
func NewIndex() *Index {
	ix := &Index{pairs: Pairs(), words: make(map[string][]Ref)}
	for i, p := range ix.pairs {
		for side, words := range [2][]string{p.A, p.B} {
			for _, w := range words {
				ix.words[w] = append(ix.words[w], Ref{Pair: i, Side: side})
			}
		}
	}
	return ix
}

// Lookup returns the pairs a word belongs to. The word is matched without
// regard to case.
func (ix *Index) Lookup(word string) []Ref {
	if refs, ok := ix.words[word]; ok {
		return refs
	}
	return ix.words[strings.ToLower(word)]
}

// Pair returns pair i.
func (ix *Index) Pair(i int) Pair { return ix.pairs[i] }

// Len is the number of pairs.
func (ix *Index) Len() int { return len(ix.pairs) }

// Opposite reports whether a and b are on opposite sides of some pair, and
// which pair.
func (ix *Index) Opposite(a, b string) (Pair, bool) {
	for _, ra := range ix.Lookup(a) {
		for _, rb := range ix.Lookup(b) {
			if ra.Pair == rb.Pair && ra.Side != rb.Side {
				return ix.pairs[ra.Pair], true
			}
		}
	}
	return Pair{}, false
}
