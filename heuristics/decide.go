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
	if len(older.Content) <= smallInput && len(newer.Content) <= smallInput {
		return decideSmall(older, newer)
	}
	// The owner of a workspace points it to its buffers and its statement
	// to its tokens and text: a method storing them would move them to the
	// heap.
	var a, b workspace
	var sa, sb storage
	a.toks, a.buf = sa.toks[:], sa.buf[:]
	b.toks, b.buf = sb.toks[:], sb.buf[:]
	a.analyze(older, defaultLexicon)
	b.analyze(newer, defaultLexicon)
	a.Statement.toks, a.Statement.buf = a.toks[:a.ntok], a.buf[:a.nbuf]
	b.Statement.toks, b.Statement.buf = b.toks[:b.ntok], b.buf[:b.nbuf]
	return decide(&a.Statement, &b.Statement)
}

// decideSmall is Decide for two attributes of at most smallInput bytes,
// with smaller buffers to zero.
func decideSmall(older, newer Input) Decision {
	var a, b workspace
	var sa, sb smallStorage
	a.toks, a.buf = sa.toks[:], sa.buf[:]
	b.toks, b.buf = sb.toks[:], sb.buf[:]
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
	order := [4]uint8{0, 1, 2, 3}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && fs[order[j]].conf > fs[order[j-1]].conf; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	// Render the reason, which quotes every detail, and convert it once:
	// the details of the result are slices of the reason. (Copy out of fs
	// field by field: handing fs itself to the result would move both
	// statements to the heap.)
	var buf [512]byte
	out := append(buf[:0], "The newer statement contradicts the older ("...)
	var starts, ends [4]int
	for k := 0; k < n; k++ {
		f := &fs[order[k]]
		if k > 0 {
			out = append(out, "; "...)
		}
		out = append(out, signalName(f.kind)...)
		out = append(out, ' ')
		out = appendConf(out, f.conf)
		out = append(out, ": "...)
		starts[k] = len(out)
		out = f.appendDetail(out, a, b)
		ends[k] = len(out)
	}
	out = append(out, ")."...)
	reason := string(out)
	d := Decision{Method: MethodHeuristic, Confidence: fs[order[0]].conf, Signals: make([]Signal, n), Reason: reason}
	for k := 0; k < n; k++ {
		f := &fs[order[k]]
		d.Signals[k] = Signal{Name: signalName(f.kind), Confidence: f.conf, Detail: reason[starts[k]:ends[k]]}
	}
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
	return sel{st: st, idx: w.idx}.appendRaw(b)
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
