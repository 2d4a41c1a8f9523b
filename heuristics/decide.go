package heuristics

import (
	"math/bits"
	"strconv"
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
// older. It is DecideAnalyzed(Analyze(older), Analyze(newer)) without the
// allocations of the prepared form.
func Decide(older, newer Input) Decision {
	if isConstraint(older.Kind) || isConstraint(newer.Kind) {
		return blocked(isConstraint(older.Kind))
	}
	var a, b workspace
	a.analyze(older, defaultLexicon)
	b.analyze(newer, defaultLexicon)
	a.Statement.toks, a.Statement.buf = a.toks[:a.ntok], a.buf[:a.nbuf]
	b.Statement.toks, b.Statement.buf = b.toks[:b.ntok], b.buf[:b.nbuf]
	return decide(&a.Statement, &b.Statement)
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
	if f, ok := negation(a, b, &e); ok {
		fs[n] = f
		n++
	}
	if f, ok := antonym(a, b, &e); ok {
		fs[n] = f
		n++
	}
	if f, ok := value(a, b, &e); ok {
		fs[n] = f
		n++
	}
	if f, ok := temporal(a, b, &e); ok {
		fs[n] = f
		n++
	}
	if n == 0 {
		if e.why != "" {
			return Decision{Reason: e.why}
		}
		return Decision{Reason: reasonNone}
	}
	// Strongest first; ties keep the order above.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && fs[j].conf > fs[j-1].conf; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	// Render every detail and the reason into one buffer and convert it
	// once: the strings of the result are slices of a single allocation.
	// (Copy out of fs field by field: handing fs itself to the result would
	// move both statements to the heap.)
	var buf [512]byte
	out := buf[:0]
	var ends [4]int
	var confs [4]float64
	var kinds [4]uint8
	for i := 0; i < n; i++ {
		out = fs[i].appendDetail(out)
		ends[i] = len(out)
		confs[i] = fs[i].conf
		kinds[i] = fs[i].kind
	}
	detailsEnd := len(out)
	out = appendReason(out, kinds[:n], confs[:n], out[:detailsEnd], ends[:n])
	all := string(out)
	d := Decision{Method: MethodHeuristic, Confidence: confs[0], Signals: make([]Signal, n), Reason: all[detailsEnd:]}
	start := 0
	for i := 0; i < n; i++ {
		d.Signals[i] = Signal{Name: signalName(kinds[i]), Confidence: confs[i], Detail: all[start:ends[i]]}
		start = ends[i]
	}
	return d
}

func (f *fired) appendDetail(b []byte) []byte {
	switch {
	case f.fromText != "":
		b = append(b, f.fromText...)
		if f.from.st != nil && f.from.count() > 0 {
			b = append(b, " ("...)
			b = f.from.appendRaw(b)
			b = append(b, ')')
		}
	case f.hasTo:
		b = append(b, f.label...)
		b = append(b, ": "...)
		b = f.from.appendRaw(b)
		b = append(b, " → "...)
		b = f.to.appendRaw(b)
	default:
		b = append(b, f.label...)
		b = append(b, ": "...)
		b = f.from.appendRaw(b)
	}
	return b
}

// appendReason appends the decision's sentence: every signal with its
// confidence and detail, strongest first.
func appendReason(b []byte, kinds []uint8, confs []float64, details []byte, ends []int) []byte {
	b = append(b, "The newer statement contradicts the older ("...)
	start := 0
	for i := range kinds {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = append(b, signalName(kinds[i])...)
		b = append(b, ' ')
		b = appendConf(b, confs[i])
		b = append(b, ": "...)
		b = append(b, details[start:ends[i]]...)
		start = ends[i]
	}
	return append(b, ")."...)
}

// appendConf formats a confidence with two decimals without strconv's
// general float machinery: confidences are in [0, 1].
func appendConf(b []byte, c float64) []byte {
	if c < 0 || c > 1 || c != c {
		return strconv.AppendFloat(b, c, 'f', 2, 64)
	}
	h := int(c*100 + 0.5)
	return append(b, byte('0'+h/100), '.', byte('0'+h/10%10), byte('0'+h%10))
}

// SharedContentTokens counts the distinct content words (stems, stopwords
// excluded) that two statements have in common. The semantic fallback asks
// the LLM only when this is at least 3.
func SharedContentTokens(a, b *Statement) int {
	n := 0
	bs := b.all()
	var seen uint64 // stems of a counted so far, as mask bits
	for m := a.allIdx; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		t := &a.toks[i]
		bit := uint64(1) << (t.hash & 63)
		if b.allMask&bit == 0 {
			continue
		}
		// Count each stem once.
		if seen&bit != 0 && a.mk(a.allIdx&span(0, i)).has(a, t) {
			continue
		}
		seen |= bit
		if bs.has(a, t) {
			n++
		}
	}
	return n
}
