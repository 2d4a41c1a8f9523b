package heuristics

import (
	"cmp"
	"fmt"
	"slices"
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

// Decide analyses both attributes and decides whether newer supersedes
// older: DecideAnalyzed(Analyze(older), Analyze(newer)).
func Decide(older, newer Input) Decision {
	if isConstraint(older.Kind) || isConstraint(newer.Kind) {
		return blocked(isConstraint(older.Kind))
	}
	return decide(Analyze(older), Analyze(newer))
}

// DecideAnalyzed decides on prepared statements; it returns what Decide
// returns for the same inputs.
func DecideAnalyzed(older, newer *Statement) Decision {
	if older.constraint || newer.constraint {
		return blocked(older.constraint)
	}
	return decide(older, newer)
}

func blocked(older bool) Decision {
	reason := "Not superseded: the newer attribute is a constraint, and constraints are never superseded."
	if older {
		reason = "Not superseded: the older attribute is a constraint, and constraints are never superseded."
	}
	return Decision{Reason: reason, Blocked: BlockedConstraint}
}

const reasonNone = "No contradiction signal: the statements do not oppose each other on a shared subject and slot."

func decide(a, b *Statement) Decision {
	var e explain
	var fs [4]fired
	n := 0
	if negation(a, b, &e, &fs[n]) {
		n++
	}
	if antonym(a, b, &e, &fs[n]) {
		n++
	}
	if value(a, b, &e, &fs[n]) {
		n++
	}
	if temporal(a, b, &e, &fs[n]) {
		n++
	}
	if n == 0 {
		if e.why != "" {
			return Decision{Reason: e.why}
		}
		return Decision{Reason: reasonNone}
	}
	// Strongest first; ties keep the order above.
	strongest := fs[:n]
	slices.SortStableFunc(strongest, func(x, y fired) int { return cmp.Compare(y.conf, x.conf) })
	d := Decision{Method: MethodHeuristic, Confidence: strongest[0].conf}
	var reason []byte
	for k := range strongest {
		f := &strongest[k]
		detail := string(f.appendDetail(nil, a, b))
		d.Signals = append(d.Signals, Signal{Name: signalName(f.kind), Confidence: f.conf, Detail: detail})
		if k > 0 {
			reason = append(reason, "; "...)
		}
		reason = fmt.Appendf(reason, "%s %.2f: %s", signalName(f.kind), f.conf, detail)
	}
	d.Reason = "The newer statement contradicts the older (" + string(reason) + ")."
	return d
}

// appendDetail renders the detail of f, fired on (older, newer).
func (f *fired) appendDetail(b []byte, older, newer *Statement) []byte {
	if f.ant {
		b = f.from.appendRaw(b, older, newer)
		b = append(b, " → "...)
		b = f.to.appendRaw(b, older, newer)
		if f.extra.idx != 0 {
			b = append(b, " ("...)
			b = f.extra.appendRaw(b, older, newer)
			b = append(b, ')')
		}
		return b
	}
	if f.label != "" {
		b = append(b, f.label...)
	} else {
		b = f.labelRef.appendRaw(b, older, newer)
	}
	b = append(b, ": "...)
	b = f.from.appendRaw(b, older, newer)
	if f.hasTo {
		b = append(b, " → "...)
		b = f.to.appendRaw(b, older, newer)
	}
	return b
}

func (w wordRef) appendRaw(b []byte, older, newer *Statement) []byte {
	st := older
	if w.newer {
		st = newer
	}
	return st.mk(w.idx).appendRaw(b)
}

// SharedContentTokens counts the distinct content words (stems, stopwords
// excluded) that two statements have in common. The semantic fallback asks
// the LLM only when this is at least 3.
func SharedContentTokens(a, b *Statement) int {
	n := 0
	bs := b.all()
	var counted []string
	a.all().tokens(func(t *token) bool {
		if !slices.Contains(counted, t.stem) {
			counted = append(counted, t.stem)
			if bs.has(t) {
				n++
			}
		}
		return true
	})
	return n
}
