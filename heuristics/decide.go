package heuristics

import "strconv"

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
	var a, b Statement
	a.analyze(older, defaultLexicon)
	b.analyze(newer, defaultLexicon)
	return decide(&a, &b)
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
			return Decision{Reason: "No contradiction: " + e.why + "."}
		}
		return Decision{Reason: reasonNone}
	}
	// Strongest first; ties keep the order above.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && fs[j].conf > fs[j-1].conf; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	d := Decision{Method: MethodHeuristic, Confidence: fs[0].conf, Signals: make([]Signal, n)}
	for i := 0; i < n; i++ {
		d.Signals[i] = Signal{Name: fs[i].name, Confidence: fs[i].conf, Detail: fs[i].detail()}
	}
	d.Reason = reason(d.Signals)
	return d
}

func (f *fired) detail() string {
	var buf [128]byte
	b := buf[:0]
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
	return string(b)
}

func reason(sigs []Signal) string {
	var buf [256]byte
	b := append(buf[:0], "The newer statement contradicts the older ("...)
	for i, s := range sigs {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = append(b, s.Name...)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, s.Confidence, 'f', 2, 64)
		b = append(b, ": "...)
		b = append(b, s.Detail...)
	}
	b = append(b, ")."...)
	return string(b)
}

// SharedContentTokens counts the distinct content words (stems, stopwords
// excluded) that two statements have in common. The semantic fallback asks
// the LLM only when this is at least 3.
func SharedContentTokens(a, b *Statement) int {
	n := 0
	as, bs := a.all(), b.all()
	for i := 0; i < a.ntok; i++ {
		t := &a.toks[i]
		if !t.content() || t.hash&63 >= 64 || b.allMask&(1<<(t.hash&63)) == 0 {
			continue
		}
		// Count each stem once.
		dup := false
		for k := 0; k < i; k++ {
			if as.ok(k) && sameStem(a, &a.toks[k], a, t) {
				dup = true
				break
			}
		}
		if !dup && bs.has(a, t) {
			n++
		}
	}
	return n
}
