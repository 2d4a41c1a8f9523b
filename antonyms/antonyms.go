package antonyms

//go:generate go run ./internal/wordnetgen -wordnet /usr/share/wordnet -o wordnet.go

// Kind groups pairs by what they oppose. The kind ends up in explanations.
type Kind string

const (
	Toggle       Kind = "toggle"       // settings and switches: on/off, enabled/disabled
	Relationship Kind = "relationship" // relationship and employment status: married/single
	Preference   Kind = "preference"   // likes and tastes: likes/dislikes, spicy/mild
	State        Kind = "state"        // conditions: healthy/sick, full-time/part-time
	Direction    Kind = "direction"    // movement and position: up/down, buy/sell
	// Role pairs are opposite roles or entities (winner/loser,
	// employer/employee): they oppose what someone is, never two things
	// someone has.
	Role Kind = "role"
)

// Source says where a pair comes from.
type Source string

const (
	Hand          Source = "hand"          // written here, where WordNet lacks the pair or splits it
	WordNet       Source = "wordnet"       // WordNet 3.0's direct antonyms (wordnet.go)
	Indirect      Source = "indirect"      // WordNet 3.0's indirect antonyms: a head adjective's satellites against its antonym (wordnet.go)
	Morphological Source = "morphological" // a base and its negation by a prefix, both WordNet lemmas (wordnet.go)
)

// Pair is two sets of words that contradict each other. A and B are the two
// sides; each lists lowercase word forms, the lemma first.
type Pair struct {
	Kind   Kind
	Source Source
	A, B   []string
}

// hand is the part of the lexicon that WordNet does not give: pairs it
// lacks (recommended/deprecated, required/optional, together/apart), senses
// it ranks too rare to keep (on/off as a toggle), and groups it splits over
// several pairs (accepted and approved against denied and rejected). Keep
// sides free of words that are ambiguous in ordinary speech unless the
// opposite side disambiguates them (the heuristics only count a pair when
// the rest of the two statements agree).
var hand = [...]Pair{
	// Toggles.
	{Toggle, Hand, []string{"on"}, []string{"off"}},
	{Toggle, Hand, []string{"enabled", "enable", "enables", "enabling"}, []string{"disabled", "disable", "disables", "disabling"}},
	{Toggle, Hand, []string{"active", "activated", "activate"}, []string{"inactive", "deactivated", "deactivate", "archived", "dormant"}},
	{Toggle, Hand, []string{"open", "opened"}, []string{"closed", "shut"}},
	{Toggle, Hand, []string{"allowed", "allow", "allows", "permitted", "permit", "permits"}, []string{"blocked", "block", "blocks", "denied", "deny", "denies", "forbidden", "forbid", "forbids", "prohibited", "banned"}},
	{Toggle, Hand, []string{"visible", "shown"}, []string{"hidden", "invisible"}},
	{Toggle, Hand, []string{"online"}, []string{"offline"}},
	{Toggle, Hand, []string{"installed", "install", "installs"}, []string{"uninstalled", "uninstall", "uninstalls"}},
	{Toggle, Hand, []string{"subscribed", "subscribe", "subscribes"}, []string{"unsubscribed", "unsubscribe", "unsubscribes"}},
	{Toggle, Hand, []string{"muted", "mute"}, []string{"unmuted", "unmute"}},
	{Toggle, Hand, []string{"shared"}, []string{"unshared"}},
	{Toggle, Hand, []string{"start", "starts", "started"}, []string{"stop", "stops", "stopped"}},
	{Toggle, Hand, []string{"required", "mandatory", "compulsory", "obligatory"}, []string{"optional"}},
	{Toggle, Hand, []string{"recommended", "encouraged"}, []string{"deprecated", "discouraged"}},
	{Toggle, Hand, []string{"supported", "maintained"}, []string{"deprecated", "unsupported", "unmaintained", "end-of-life"}},
	{Toggle, Hand, []string{"confirmed", "booked", "scheduled"}, []string{"cancelled", "canceled", "called-off"}},
	{Toggle, Hand, []string{"sync"}, []string{"async"}},
	{Toggle, Hand, []string{"read-only"}, []string{"writable", "read-write"}},
	{Toggle, Hand, []string{"granted", "grant", "grants"}, []string{"revoked", "revoke", "revokes"}},

	// Relationships and employment status.
	{Relationship, Hand, []string{"married"}, []string{"divorced", "separated"}},
	{Relationship, Hand, []string{"married", "engaged", "dating", "taken"}, []string{"single"}},
	{Relationship, Hand, []string{"together"}, []string{"apart", "separated"}},
	{Relationship, Hand, []string{"hired"}, []string{"fired"}},
	{Relationship, Hand, []string{"friends", "friend", "allies"}, []string{"enemies", "enemy", "rivals"}},
	{Relationship, Hand, []string{"buyer", "buying", "buy", "buys", "bought"}, []string{"seller", "selling", "sell", "sells", "sold"}},

	// Preferences and tastes.
	{Preference, Hand, []string{"like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "enjoyed", "adore", "adores"},
		[]string{"dislike", "dislikes", "disliked", "hate", "hates", "hated", "detest", "detests", "loathe", "loathes"}},
	{Preference, Hand, []string{"prefer", "prefers", "preferred", "favors", "favours", "use", "uses", "using"}, []string{"avoid", "avoids", "avoided", "avoiding"}},
	{Preference, Hand, []string{"spicy", "hot"}, []string{"mild"}},
	{Preference, Hand, []string{"sweet"}, []string{"savory", "savoury", "salty"}},
	{Preference, Hand, []string{"hot", "warm", "warmer", "hotter"}, []string{"cold", "colder", "cool", "cooler"}},
	{Preference, Hand, []string{"quiet", "quieter", "silent"}, []string{"loud", "louder", "noisy"}},
	{Preference, Hand, []string{"indoor", "indoors"}, []string{"outdoor", "outdoors"}},
	{Preference, Hand, []string{"introvert", "introverted"}, []string{"extrovert", "extroverted", "extravert"}},
	{Preference, Hand, []string{"cheap", "cheaper", "inexpensive"}, []string{"expensive", "pricey"}},
	{Preference, Hand, []string{"fast", "faster", "quick"}, []string{"slow", "slower"}},
	{Preference, Hand, []string{"big", "bigger", "large", "larger"}, []string{"small", "smaller", "little"}},

	// States.
	{State, Hand, []string{"healthy", "well"}, []string{"sick", "ill", "unwell", "injured", "hurt"}},
	{State, Hand, []string{"remote", "remotely", "virtual"}, []string{"on-site", "onsite", "in-office", "in-person"}},
	{State, Hand, []string{"wet", "damp"}, []string{"dry"}},
	{State, Hand, []string{"happy", "satisfied"}, []string{"unhappy", "sad", "dissatisfied"}},
	{State, Hand, []string{"alive"}, []string{"dead", "deceased"}},
	{State, Hand, []string{"complete", "completed", "finished"}, []string{"incomplete", "unfinished"}},
	{State, Hand, []string{"valid"}, []string{"invalid", "expired"}},
	{State, Hand, []string{"passed", "pass", "passes", "passing", "succeeded", "succeeds", "succeeding", "works", "work", "working", "worked"}, []string{"failed", "fail", "fails", "failing"}},
	{State, Hand, []string{"working", "fixed", "repaired"}, []string{"broken", "faulty"}},
	{State, Hand, []string{"manual", "manually"}, []string{"automated", "automatic", "automatically"}},
	{State, Hand, []string{"with"}, []string{"without"}},
	{State, Hand, []string{"permanent", "permanently"}, []string{"temporary", "temporarily"}},
	{State, Hand, []string{"stable", "production-ready", "ga"}, []string{"experimental", "beta", "alpha", "preview"}},
	{State, Hand, []string{"deterministic", "reliable"}, []string{"flaky", "nondeterministic", "intermittent"}},
	{State, Hand, []string{"friendly", "gentle"}, []string{"aggressive", "hostile"}},
	{State, Hand, []string{"sober"}, []string{"drunk", "intoxicated"}},
	{State, Hand, []string{"day", "days", "daytime"}, []string{"night", "nights", "nighttime"}},
	{State, Hand, []string{"good", "great", "excellent"}, []string{"poor", "terrible", "awful"}},
	{State, Hand, []string{"verbose", "chatty"}, []string{"quiet", "terse", "silent"}},
	{State, Hand, []string{"serial", "serially", "sequential", "sequentially"}, []string{"parallel", "concurrent", "concurrently"}},
	{State, Hand, []string{"charged"}, []string{"drained", "discharged"}},
	{State, Hand, []string{"monolithic", "monolith"}, []string{"modular", "microservices"}},
	{State, Hand, []string{"isolated", "dedicated"}, []string{"shared"}},
	{State, Hand, []string{"crowded", "packed", "busy"}, []string{"empty", "deserted", "quiet"}},
	{State, Hand, []string{"healthy", "operational", "nominal"}, []string{"degraded", "impaired"}},

	// Directions.
	{Direction, Hand, []string{"up"}, []string{"down"}},
	{Direction, Hand, []string{"increase", "increased", "increases", "increasing", "rising"}, []string{"decrease", "decreased", "decreases", "decreasing", "falling"}},
	{Direction, Hand, []string{"above"}, []string{"below"}},
	{Direction, Hand, []string{"north", "northern"}, []string{"south", "southern"}},
	{Direction, Hand, []string{"east", "eastern"}, []string{"west", "western"}},
	{Direction, Hand, []string{"inside"}, []string{"outside"}},
	{Direction, Hand, []string{"more"}, []string{"less", "fewer"}},
	{Direction, Hand, []string{"add", "adds", "added"}, []string{"remove", "removes", "removed"}},
	{Direction, Hand, []string{"accept", "accepts", "accepted", "approve", "approves", "approved"},
		[]string{"reject", "rejects", "rejected", "decline", "declines", "declined", "deny", "denies", "denied", "refuse", "refuses", "refused"}},
	{Direction, Hand, []string{"arrive", "arrives", "arrived", "arriving"}, []string{"depart", "departs", "departed", "departing"}},
}

// Derivations returns WordNet's derivationally related forms: a verb or an
// adjective and the noun made from it ("allergic" and "allergy",
// "contribute" and "contribution"), by which a statement says of a state or
// an act what another says with the other form. A copy.
func Derivations() [][2]string {
	return append([][2]string(nil), derivationPairs[:]...)
}

// Pairs returns a copy of every pair, in a stable order: the hand-written
// pairs, then WordNet's, then the morphological ones, each left out when an
// earlier pair already opposes its two lemmas. Pair i of the result is the
// pair that Ref.Pair == i refers to.
func Pairs() []Pair {
	var out []Pair
	opposed := map[[2]string]bool{}
	for _, table := range [][]Pair{hand[:], wordnetPairs[:], indirectPairs[:], morphologicalPairs[:]} {
		for _, p := range table {
			if opposed[[2]string{p.A[0], p.B[0]}] {
				continue
			}
			for _, a := range p.A {
				for _, b := range p.B {
					opposed[[2]string{a, b}], opposed[[2]string{b, a}] = true, true
				}
			}
			out = append(out, Pair{Kind: p.Kind, Source: p.Source, A: append([]string(nil), p.A...), B: append([]string(nil), p.B...)})
		}
	}
	return out
}

// Ref locates a word in the table: the pair it belongs to and its side
// (0 for A, 1 for B).
type Ref struct {
	Pair int
	Side int
}
