package heuristics

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Signal is one heuristic that fired, with its confidence and a short,
// human-readable detail such as "lives in: toronto → vancouver".
type Signal struct {
	Name       string  `json:"name"`
	Confidence float64 `json:"confidence"`
	Detail     string  `json:"detail"`
}

// Decision is the verdict on one (older, newer) pair.
type Decision struct {
	// Confidence that newer supersedes older: the maximum over the signals
	// that fired; 0 when none fired or the pair is blocked.
	Confidence float64
	// Method is "heuristic" when a signal fired, "" otherwise.
	Method string
	// Signals are every signal that fired, strongest first.
	Signals []Signal
	// Reason is one sentence saying why (or why not).
	Reason string
	// Blocked is non-empty when the pair must never be superseded
	// ("constraint"); Confidence is then 0.
	Blocked string
}

// MethodHeuristic is Decision.Method when a signal fired.
const MethodHeuristic = "heuristic"

// BlockedConstraint is Decision.Blocked when either side is a constraint.
const BlockedConstraint = "constraint"

// BlockedFailure is Decision.Blocked when the heuristics failed on either
// statement or on the pair (see Statement.Failure): nothing is decided.
const BlockedFailure = "heuristics_failed"

// Decide analyses both attributes and decides whether newer supersedes
// older: DecideAnalyzed(Analyze(older), Analyze(newer)).
func Decide(older, newer Input) Decision {
	return DecideAnalyzed(Analyze(older), Analyze(newer))
}

// DecideAnalyzed decides on prepared statements.
func DecideAnalyzed(older, newer *Statement) (d Decision) {
	if why := cmp.Or(older.failed, newer.failed); why != "" {
		return failure(why)
	}
	defer contain(func(why string) { d = failure(why) })
	if older.constraint || newer.constraint {
		reason := "Not superseded: the newer attribute is a constraint, and constraints are never superseded."
		if older.constraint {
			reason = "Not superseded: the older attribute is a constraint, and constraints are never superseded."
		}
		return Decision{Reason: reason, Blocked: BlockedConstraint}
	}
	if datedRecords(older, newer) {
		return Decision{Reason: "No contradiction: two entries of a log, each true of its own date."}
	}
	var e explain
	var best []fired
	for i := range older.clauses {
		for j := range newer.clauses {
			if fs := decideClauses(&older.clauses[i], &newer.clauses[j], &e); len(fs) > 0 && (best == nil || fs[0].conf > best[0].conf) {
				best = fs
			}
		}
	}
	if f, ok := measured(older, newer); ok && (best == nil || f.conf > best[0].conf) {
		best = []fired{f}
	}
	e.miss("No contradiction signal: the statements do not oppose each other on a shared subject and slot.")
	if best == nil {
		return Decision{Reason: e.why}
	}
	d = Decision{Method: MethodHeuristic, Confidence: best[0].conf}
	var details []string
	for _, f := range best {
		d.Signals = append(d.Signals, Signal{Name: f.name, Confidence: f.conf, Detail: f.detail})
		details = append(details, fmt.Sprintf("%s %.2f: %s", f.name, f.conf, f.detail))
	}
	d.Reason = "The newer statement contradicts the older (" + strings.Join(details, "; ") + ")."
	return d
}

func failure(why string) Decision {
	return Decision{Reason: "Not decided: " + why + ".", Blocked: BlockedFailure}
}

// decideClauses runs every signal on a clause of the older statement and a
// clause of the newer, and returns those that fire, strongest first (ties
// in the order below).
func decideClauses(a, b *clause, e *explain) []fired {
	if a.person != personNone && b.person != personNone && a.person != b.person {
		e.miss("No contradiction: the statements are about different people (one says I, the other she or he).")
		return nil
	}
	var out []fired
	for _, signal := range []func(a, b *clause, e *explain) (fired, bool){negation, antonym, value, temporal} {
		if f, ok := signal(a, b, e); ok {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(x, y fired) int { return cmp.Compare(y.conf, x.conf) })
	return out
}

// Grammatical persons of a clause's subject pronoun (clause.person).
const (
	personNone uint8 = iota
	personFirst
	personThird
)

// subjectPerson is the grammatical person of a pronoun that is the
// clause's subject (read once, at analysis): "i can't sleep" is the first, "she sleeps in the crate now" the
// third, a name, a noun or no subject none. A store writes in one voice
// (a chat says I, an observer she), so of two statements one that says I
// and one that says she speak of two people ("my sister" is the sister,
// not the speaker: only the pronoun itself counts).
func (c *clause) subjectPerson() uint8 {
	for k := c.start; k < c.hi; k++ {
		if c.roles[rSubj]&(1<<k) == 0 {
			continue
		}
		switch c.raw(k) {
		case "i", "i'm", "im", "i've", "i'd", "i'll":
			return personFirst
		case "she", "he", "she's", "he's", "she'd", "he'd", "she'll", "he'll":
			return personThird
		}
	}
	return personNone
}

// SharedContentTokens counts the distinct content words (stems, stopwords
// excluded) that two statements have in common. The semantic fallback asks
// the LLM only when this is at least 3.
func SharedContentTokens(a, b *Statement) int {
	n := 0
	bs := b.all()
	var counted []string
	for t := range a.all().words {
		if s := a.stem(t); !slices.Contains(counted, s) {
			counted = append(counted, s)
			if bs.has(s) {
				n++
			}
		}
	}
	return n
}

// isoDate is a date as notes write it: 2024-06-10, 2024-06, 10/06/2024.
var isoDate = regexp.MustCompile(`^(\d{4}-\d{2}(-\d{2})?|\d{1,2}/\d{1,2}/\d{2,4})$`)

// datedRecords reports two notes keyed by the same record and different
// dates ("restore drill 2024-03-02: passed, 41 min" / "restore drill
// 2024-09-01: passed, 35 min"): entries of a log, each true of its date;
// neither is a newer value of the other.
func datedRecords(a, b *Statement) bool {
	return a.logDate != "" && b.logDate != "" && a.logDate != b.logDate && a.logKey != "" && a.logKey == b.logKey
}

// logEntry returns, when the statement is a note whose key holds a date,
// the key's other content words and the date (computed once, at analysis:
// datedRecords is asked of every pair).
func (st *Statement) logEntry() (key, date string) {
	if len(st.toks) == 0 {
		return "", ""
	}
	k := st.noteKey(0)
	if k == 0 {
		return "", ""
	}
	var words []string
	for i := 0; i <= k; i++ {
		t := &st.toks[i]
		if raw := st.raw(t); isoDate.MatchString(raw) {
			date += raw + " "
		} else if t.flags&nonContent == 0 {
			words = append(words, st.stem(t))
		}
	}
	if date == "" {
		return "", ""
	}
	return strings.Join(words, " "), date
}
