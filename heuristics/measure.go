package heuristics

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// A measure is a number with its unit, said of a thing: "Takes metformin
// 500 mg", "Rent 13,500 NOK/month", "retention 90d", "rating around 1500",
// "three direct reports". Two statements that give the same kind of measure
// of the same thing different values contradict, wherever the number stands
// in their frames: "Metformin raised to 1000 mg twice daily", "student
// loans down to $31k", "Increased TFSA contributions to $800 a month".
//
// What is measured is read from the words near the number, not from the
// frame: the words before it in its sentence (back to the number before
// it, across a note's colon), or, when none, those after it ("$500 a month
// to the TFSA"). Time anchors, scopes, units, the verbs of the clause and
// words that move a quantity ("raised") say nothing of the thing.
type measure struct {
	num    int     // the number's token
	kind   uint8   // unitMoney...
	unit   uint32  // the currency or the counted noun (a stem's hash), 0 when unsaid
	value  float64 // in the kind's base unit; NaN when unread
	things uint64  // the words that say what is measured
	scope  uint64  // the recurring scopes of its sentence ("on weekends")
	marked bool    // its sentence says the value changed ("raised to", "now")
	kilo   bool    // a bare number with a multiplier ("26k"): money when the other side says so
	verb   uint32  // the content verb of its clause ("departs"), 0 when none or one that moves it
}

// Kinds of measure.
const (
	unitBare     uint8 = iota + 1 // a number with no unit: "rating 1500"
	unitMoney                     // $, €, NOK, 18k with a currency
	unitPercent                   // %
	unitMass                      // mg, kg, lbs
	unitDuration                  // 90d, 25 minutes
	unitClock                     // 9:30, 10am
	unitData                      // GB
	unitSpeed                     // Mbps
	unitDistance                  // km, miles
	unitCount                     // "three reports": unit is the noun counted
	unitVersion                   // "Python 3.12", "Node 20": what it is a version of is the thing
)

// unitWords name units: the kind and how many base units one is (seconds,
// grams, bytes, metres; for money the currency is the unit). Suffixes
// glued to a number ("90d", "15m", "5y") are read from the same table.
var unitWords = func() map[string]struct {
	kind  uint8
	scale float64
} {
	m := map[string]struct {
		kind  uint8
		scale float64
	}{}
	for _, u := range []struct {
		kind  uint8
		scale float64
		words string
	}{
		{unitMoney, 1, `usd dollar dollars bucks eur euro euros nok sek dkk inr gbp jpy cad aud chf yen rupee rupees
			krone kroner kr`},
		{unitPercent, 1, `percent pct`},
		{unitMass, 1e-6, `mcg µg`},
		{unitMass, 1e-3, `mg milligram milligrams`},
		{unitMass, 1, `g gram grams`},
		{unitMass, 1e3, `kg kilo kilos kilogram kilograms`},
		{unitMass, 453.6, `lb lbs`},
		{unitDuration, 1e-3, `ms millisecond milliseconds`},
		{unitDuration, 1, `s sec secs second seconds`},
		{unitDuration, 60, `min mins minute minutes`},
		{unitDuration, 3600, `h hr hrs hour hours`},
		{unitDuration, 86400, `d day days`},
		{unitDuration, 604800, `w wk wks week weeks`},
		{unitDuration, 2629800, `mo mos month months`},
		{unitDuration, 31557600, `y yr yrs year years`},
		{unitData, 1e3, `kb`},
		{unitData, 1e6, `mb`},
		{unitData, 1e9, `gb`},
		{unitData, 1e12, `tb`},
		{unitSpeed, 1e6, `mbps`},
		{unitSpeed, 1e9, `gbps`},
		{unitDistance, 1e3, `km kilometre kilometres kilometer kilometers`},
		{unitDistance, 1609, `mi mile miles`},
	} {
		for _, w := range strings.Fields(u.words) {
			m[w] = struct {
				kind  uint8
				scale float64
			}{u.kind, u.scale}
		}
	}
	return m
}()

// genericMeasures name a quantity of something rather than a thing: "the
// Pro plan price", "the dose of levothyroxine", "the rate limit".
var genericMeasures = toSet(`amount total cost price fee rate level limit cap size count number value coverage
	balance dose dosage threshold target time duration length speed score average max maximum min minimum
	quota allowance figure budget spend spending`)

// numberWords are the numbers spelled out.
var numberWords = map[string]float64{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30,
	"forty": 40, "fifty": 50, "hundred": 100, "dozen": 12, "half": 0.5}

// measures appends the statement's measures to out.
func (st *Statement) measures(out []measure) []measure {
	lo := 0         // where the words of the next number start
	var from uint64 // the things of a value left behind ("from $20", "was 10m")
	for i := range st.toks {
		t := &st.toks[i]
		if t.flags&tFull != 0 {
			lo, from = i, 0
		}
		if t.flags&tNumber == 0 {
			continue
		}
		m, after, ok := st.measureAt(i)
		if !ok {
			continue
		}
		switch {
		case m.things != 0: // a version's name
		case from != 0 && st.is(i-1, wordTo):
			m.things = from // "raised the price from $20 to $25": the $20's thing
		default:
			m.things = st.nearest(st.thingWords(lo, i), lo, i)
			if m.things == 0 {
				m.things = st.thingWords(after, st.phraseEnd(after))
			} else if st.is(after, wordOf) {
				m.things |= st.thingWords(after+1, st.phraseEnd(after+1)) // "16 GB of RAM"
			}
		}
		m.verb = st.verbAt(i)
		lo = st.phraseEnd(after)
		if st.leftBehind(i) {
			from = m.things
			continue
		}
		if m.things == 0 || !st.current(i) {
			continue
		}
		m.scope = st.flagged(fScope) & st.sentence(i)
		m.marked = st.changeMarked(i)
		out = append(out, m)
	}
	return out
}

// flagsOf is the lexicon's flags of token i's word.
func (st *Statement) flagsOf(i int) uint32 { return defaultLexicon().flagsOf(st.raw(&st.toks[i])) }

// nearest keeps, of the thing words m of [lo, i), those after the last
// break that has some of them after it: the label nearest the number
// ("HighLatency threshold -> p99 > 600ms" measures p99; "DiskSpace: warn
// 80%" warn; "Life insurance: $500k" life insurance).
func (st *Statement) nearest(m uint64, lo, i int) uint64 {
	for k := i; k > lo; k-- {
		if st.toks[k].flags&tBreak != 0 && m&span(k, i) != 0 {
			return m & span(k, i)
		}
	}
	return m
}

// verbAt is the content verb of the clause that holds token i, 0 when
// none, or when it moves a quantity or changes a value ("raised").
func (st *Statement) verbAt(i int) uint32 {
	for k := range st.clauses {
		c := &st.clauses[k]
		if i < c.start || i >= c.end {
			continue
		}
		if c.verb < 0 || c.replaceAt >= 0 || c.tok(c.verb).flags&(fCopula|fAux|fLight) != 0 || quantityVerbs[c.raw(c.verb)] {
			return 0
		}
		return c.tok(c.verb).hash
	}
	return 0
}

// is reports whether token i is the named word w.
func (st *Statement) is(i int, w uint8) bool {
	return i >= 0 && i < len(st.toks) && st.toks[i].word == w
}

// measureAt reads the number at token i with its unit, and returns where
// the words after the unit start; false when the number is no measure: a
// year, a version of a name ("Node 18", "iPhone 15"), a time anchor.
func (st *Statement) measureAt(i int) (m measure, after int, ok bool) {
	t := &st.toks[i]
	raw := st.raw(t)
	if t.flags&(fWhen|fTime) != 0 || st.isYear(t) && t.sign == signNone && !st.changeTo(i) || strings.ContainsAny(raw, "/x") {
		return m, 0, false
	}
	if p := i - 1; p >= 0 && st.toks[p].flags&tCap != 0 && st.toks[p].content() && st.toks[p].flags&(fScope|fTime) == 0 && t.sign == signNone &&
		(p > 0 && st.toks[p].flags&tFull == 0 || st.flagsOf(p)&lexiconFlags == 0) && !strings.Contains(raw, ",") && !st.unitNext(i+1) {
		// A version of the name before it ("Node 18", "Airflow 2.8.1"; not
		// "Rent 1,100 EUR"): the name is the thing.
		if n := i + 1; n < len(st.toks) && st.toks[n].flags&(tCap|tBreak) == tCap {
			return m, 0, false // a model's name goes on: "Pixel 9 Pro"
		}
		lo := p
		for lo > 0 && st.toks[lo-1].flags&tCap != 0 && st.toks[lo-1].content() && st.toks[lo].flags&tBreak == 0 {
			lo--
		}
		return measure{num: i, kind: unitVersion, value: math.NaN(), things: span(lo, p+1) & st.allIdx}, i + 1, true
	}
	num, suffix := splitNumber(raw)
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if w, ok := numberWords[raw]; ok {
		v, err, suffix = w, nil, ""
	}
	if strings.Count(num, ".") >= 2 && suffix == "" {
		return measure{num: i, kind: unitVersion, value: math.NaN()}, i + 1, true // "pinned to 2.6.3"
	}
	if err != nil && !strings.Contains(num, ":") {
		return m, 0, false // "2-room", "v2.1.3"
	}
	m = measure{num: i, kind: unitBare, value: v}
	if strings.Contains(num, ":") {
		m.kind, m.value = unitClock, clockValue(num, suffix)
		suffix = ""
	}
	after = i + 1
	switch {
	case t.sign == signMoney:
		m.kind, m.value = unitMoney, v*multiplier(suffix)
	case t.sign == signPercent:
		m.kind = unitPercent
	case suffix == "am" || suffix == "pm":
		m.kind, m.value = unitClock, clockValue(num, suffix)
	case suffix == "m" && st.moneyNext(after) || suffix == "k" || suffix == "bn":
		m.value, m.kilo = v*multiplier(suffix), true // "26k": money, unless a unit follows
	case suffix != "":
		u, ok := unitWords[suffix]
		if suffix == "m" {
			u, ok = unitWords["min"] // "15m": minutes, unless money (above)
		}
		if !ok {
			return m, 0, false // "4b": a flat's name
		}
		m.kind, m.value = u.kind, v*u.scale
	}
	if m.kind == unitBare || m.kind == unitMoney && m.unit == 0 {
		after = st.unitAfter(&m, after)
	}
	if m.kind == unitBare && !m.kilo && !st.valueAt(i) {
		return m, 0, false // "team 3", "hobby number 2": a name
	}
	return m, after, true
}

// unitNext reports a unit at token i: "Groceries 4,500 NOK" is money, not
// a version of groceries.
func (st *Statement) unitNext(i int) bool {
	m := measure{kind: unitBare}
	return st.unitAfter(&m, i) != i
}

// splitNumber splits a number word into its digits and a suffix glued to
// them ("90d": "90", "d"; "7:30am": "7:30", "am"; "1,800": "1,800", "").
func splitNumber(raw string) (num, suffix string) {
	n := 0
	for n < len(raw) && (raw[n] >= '0' && raw[n] <= '9' || raw[n] == '.' || raw[n] == ',' || raw[n] == ':') {
		n++
	}
	return strings.TrimRight(raw[:n], ".,:"), raw[n:]
}

// multiplier is what a money suffix multiplies by.
func multiplier(suffix string) float64 {
	switch suffix {
	case "k":
		return 1e3
	case "m", "mm":
		return 1e6
	case "bn", "b":
		return 1e9
	}
	return 1
}

// clockValue is a time of day in minutes after midnight ("7:30" is 450,
// "11pm" 1380), or a duration written so ("1:52"): either way, a value to
// compare with its own kind.
func clockValue(num, suffix string) float64 {
	h, m, _ := strings.Cut(num, ":")
	hv, err1 := strconv.Atoi(h)
	mv, err2 := strconv.Atoi(m)
	if err1 != nil || m != "" && err2 != nil {
		return math.NaN()
	}
	if suffix == "pm" && hv < 12 {
		hv += 12
	}
	if suffix == "am" && hv == 12 {
		hv = 0
	}
	return float64(hv*60 + mv)
}

// moneyNext reports a currency word at token i ("3.1M NOK").
func (st *Statement) moneyNext(i int) bool {
	if i >= len(st.toks) || st.toks[i].flags&tBreak != 0 {
		return false
	}
	u, ok := unitWords[st.raw(&st.toks[i])]
	return ok && u.kind == unitMoney
}

// unitAfter reads the unit word at token i, if any, into m ("500 mg",
// "13,500 NOK", "25 minutes", "10 pm", "three direct reports") and returns
// where the words after it start.
func (st *Statement) unitAfter(m *measure, i int) int {
	if i >= len(st.toks) || st.toks[i].flags&tBreak != 0 {
		return i
	}
	t := &st.toks[i]
	w := st.raw(t)
	if u, ok := unitWords[w]; ok && (m.kind == unitBare || u.kind == unitMoney) {
		if u.kind == unitMoney {
			m.unit = t.hash
			m.kind = unitMoney
			return i + 1
		}
		if m.kilo {
			return i // "26k" said of something else
		}
		m.kind, m.value = u.kind, m.value*u.scale
		return i + 1
	}
	switch {
	case w == "am" || w == "pm":
		m.kind, m.value = unitClock, clockValue(strconv.FormatFloat(m.value, 'f', -1, 64), w)
		return i + 1
	}
	// A count: the noun after the number and its modifiers, up to a
	// preposition or a break ("three direct reports", "30 books").
	if m.kind != unitBare || m.kilo {
		return i
	}
	head := -1
	for k := i; k < len(st.toks) && (k == i || st.toks[k].flags&tBreak == 0); k++ {
		u := &st.toks[k]
		if !u.content() || u.flags&(tNumber|fTime|fScope|tCap) != 0 || u.flags&fVerb != 0 && st.raw(u) != st.stem(u) && !strings.HasSuffix(st.raw(u), "s") {
			break
		}
		head = k
	}
	if head < 0 {
		return i
	}
	m.kind, m.unit = unitCount, st.toks[head].hash
	return head + 1
}

// thingWords is the bitmap of the words of [lo, hi) that may say what a
// number measures: content words but numbers, units, times, scopes,
// verbs, words that move a quantity, a reason ("after adding caching") and
// what a rate is per ("a month", "per on-call week").
func (st *Statement) thingWords(lo, hi int) uint64 {
	var m uint64
	for k := lo; k < hi; k++ {
		t := &st.toks[k]
		w := st.raw(t)
		switch {
		case t.flags&tFull != 0 && k > lo:
			return m
		case circumstances[w] || w == "because" || w == "per" || w == "each" || w == "every":
			k = st.phraseEnd(k+1) - 1 // "after adding caching", "per on-call week"
			continue
		case !t.content() || t.flags&(tNumber|fTime|fWhen|fScope) != 0 || approximators[w] || quantityVerbs[w] || measureMarkers[w]:
			continue
		case t.flags&fVerb != 0 && st.isVerbOf(k) && t.flags&fAttr == 0:
			continue // "runs", "takes", "kept"; but "rent" of "Rent 13,500 NOK", "orders" of "the orders table"
		case st.toks[k].flags&tFull != 0 || k == 0:
			if st.raw(t) != st.stem(t) && strings.HasSuffix(w, "s") && k+1 < len(st.toks) && st.toks[k+1].flags&(fDet|tNumber) != 0 {
				continue // "Contributes $300 a month": a verb the lexicon does not know
			}
		}
		if _, unit := unitWords[w]; unit {
			continue
		}
		m |= 1 << k
	}
	return m
}

// measureMarkers say a measure changed, and say nothing of what it measures.
var measureMarkers = toSet(`new crossed hit reached peaked peaks climbed cut tightened extended shortened
	bumped upped lowered boosted trimmed`)

// isVerbOf reports whether token k is the main verb of a clause.
func (st *Statement) isVerbOf(k int) bool {
	for i := range st.clauses {
		if c := &st.clauses[i]; c.verb == k || c.replaceAt == k {
			return true
		}
	}
	return false
}

// phraseEnd is where the words from i stop telling of one number: at a
// break or at the next number.
func (st *Statement) phraseEnd(i int) int {
	for k := i; k < len(st.toks); k++ {
		if st.toks[k].flags&(tBreak|tNumber) != 0 {
			return k
		}
	}
	return len(st.toks)
}

// leftBehind reports a number the statement says was the value ("from
// $20", "(was 10m)"): not what holds now.
func (st *Statement) leftBehind(i int) bool {
	for k := i - 1; k >= 0 && k >= i-2; k-- {
		switch w := st.raw(&st.toks[k]); {
		case w == "from" || w == "was" || w == "were" || w == "previously" || w == "formerly":
			return true
		case !approximators[w]:
			return false
		}
	}
	return false
}

// current reports a number said of the present as a fact: not in a
// negated, hypothetical, past or ended clause.
func (st *Statement) current(i int) bool {
	for k := range st.clauses {
		if c := &st.clauses[k]; i >= c.start && i < c.end {
			// A quantity moved is news, not history: "Raised the price
			// from $20 to $25".
			past := c.past && !(c.verb >= 0 && quantityVerbs[c.raw(c.verb)])
			return !c.negated && !c.irreal && !past && !c.cease
		}
	}
	for k := i - 1; k >= 0 && st.toks[k+1].flags&tFull == 0; k-- {
		if st.toks[k].flags&(fNeg|fIrreal|fCease|fUsed) != 0 {
			return false
		}
	}
	return true
}

// sentence is the bitmap of the tokens of the sentence that holds token i.
func (st *Statement) sentence(i int) uint64 {
	lo, hi := i, i+1
	for lo > 0 && st.toks[lo].flags&tFull == 0 {
		lo--
	}
	for hi < len(st.toks) && st.toks[hi].flags&tFull == 0 {
		hi++
	}
	return span(lo, hi)
}

// changeMarked reports a sentence that says its value changed: "now", a
// change or quantity verb, an arrow, "new", or "to" before the number
// ("down to $31k").
func (st *Statement) changeMarked(i int) bool {
	for m := st.sentence(i); m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		t := &st.toks[k]
		if t.flags&(fNow|fReplace|fStrong|tArrow) != 0 || quantityVerbs[st.raw(t)] || measureMarkers[st.raw(t)] {
			return true
		}
	}
	return st.changeTo(i)
}

// valueAt reports a bare number said as a value: after a copula, a
// colon, "to" or a word that says how near it is ("is 210", "score: 740",
// "climbed to 1720", "rating around 1500"), not after the noun it names
// ("team 3").
func (st *Statement) valueAt(i int) bool {
	k := i - 1
	for k >= 0 && approximators[st.raw(&st.toks[k])] && st.toks[k+1].flags&tBreak == 0 {
		k--
	}
	if k < i-1 || st.toks[i].flags&tColon != 0 {
		return true
	}
	return k >= 0 && (st.toks[k].flags&(fCopula|fNow) != 0 || st.is(k, wordTo) || measureMarkers[st.raw(&st.toks[k])] ||
		genericMeasures[st.raw(&st.toks[k])] && st.raw(&st.toks[k]) != "number") // "pages average 5 per week"; not "hobby number 2"
}

// changeTo reports "to" before the number at i, as a change says it
// ("down to $31k", "climbed to 1950"; not "up to 3 projects", a most).
func (st *Statement) changeTo(i int) bool {
	k := i - 1
	if k >= 0 && approximators[st.raw(&st.toks[k])] {
		k--
	}
	return st.is(k, wordTo) && k > 0 && st.raw(&st.toks[k-1]) != "up"
}

// Calibrated confidences of a measure changed.
const (
	confMeasureMarked = 0.85 // the newer says it changed: "raised to 1000 mg", "down to $31k", "now 1620"
	confMeasure       = 0.75 // the newer gives another value: "Groceries 4,500 NOK/month"
)

// measured: the older and the newer statement give the same kind of
// measure of the same thing different values ("Takes metformin 500 mg
// twice daily" / "Metformin raised to 1000 mg twice daily").
func measured(a, b *Statement) (fired, bool) {
	var bufA, bufB [8]measure
	ma, mb := a.measures(bufA[:0]), b.measures(bufB[:0])
	best := fired{}
	for i := range ma {
		for j := range mb {
			x, y := &ma[i], &mb[j]
			if !sameUnit(x, y) || sameValue(a, b, x, y) || x.verb != 0 && y.verb != 0 && x.verb != y.verb ||
				!(sel{a, x.scope}).equal(sel{b, y.scope}) && !(y.marked && b.changes(y.num)) || !sameThing(a, b, x, y) || b.narrowed(y, a) || a.narrowed(x, b) {
				continue
			}
			conf := confMeasure
			if y.marked {
				conf = confMeasureMarked
			} else if x.kind == unitVersion {
				continue // two versions may both be in use: only a change says one replaced the other
			}
			if x.kind == unitVersion && a.saidOf(x.num) {
				continue // "Python 3.8 is supported" stays true when the code moves to 3.12
			}
			if conf > best.conf {
				what := sel{b, y.things}.text()
				best = fired{SignalValue, conf, what + ": " + a.raw(&a.toks[x.num]) + " → " + b.raw(&b.toks[y.num])}
			}
		}
	}
	return best, best.conf > 0
}

// saidOf reports the token at i in the subject of a copula: the
// statement tells something of it ("Python 3.8 is unsupported") rather
// than which one is in use.
func (st *Statement) saidOf(i int) bool {
	for k := i - 1; k >= 0 && st.toks[k].flags&tBreak == 0; k-- {
		if st.toks[k].flags&(fVerb|fCopula) != 0 {
			return false
		}
	}
	for k := i + 1; k < len(st.toks) && st.toks[k].flags&tBreak == 0; k++ {
		if st.toks[k].flags&fCopula != 0 {
			return true
		}
	}
	return false
}

// keyKind is the kind a measure is compared as: a bare number with a
// multiplier ("26k") is money.
func (m *measure) keyKind() uint8 {
	if m.kilo && m.kind == unitBare {
		return unitMoney
	}
	return m.kind
}

// sameUnit reports measures of one kind: money of no currency or the
// same, counts of the same noun.
func sameUnit(x, y *measure) bool {
	if x.keyKind() != y.keyKind() {
		return false
	}
	switch x.keyKind() {
	case unitCount:
		return x.unit == y.unit
	case unitMoney:
		return x.unit == 0 || y.unit == 0 || x.unit == y.unit
	}
	return true
}

// sameValue reports equal values (the same number as written, when it
// could not be read).
func sameValue(a, b *Statement, x, y *measure) bool {
	if math.IsNaN(x.value) || math.IsNaN(y.value) {
		return a.raw(&a.toks[x.num]) == b.raw(&b.toks[y.num])
	}
	return math.Abs(x.value-y.value) <= 1e-9*math.Max(math.Abs(x.value), math.Abs(y.value))
}

// sameThing reports measures of one thing: they share a word, and one
// says nothing the other does not, but a quantity's name ("price",
// "dose") or words the other says elsewhere ("Chess rating climbed to
// 1720" / "Plays chess on Lichess; rating around 1500") or that another
// phrase of its own says ("Moved to Oslo, rent is ..."). "Garage rent" is
// not "rent", nor "budget for groceries" "budget for the trip".
func sameThing(a, b *Statement, x, y *measure) bool {
	ta, tb := sel{a, x.things}, sel{b, y.things}
	if ta.shared(tb) == 0 {
		return false
	}
	ea, eb := ta.minus(tb).withoutGeneric(), tb.minus(ta).withoutGeneric()
	if ea.count() > 0 && eb.count() > 0 {
		return false
	}
	return ea.extrasSaid(ta, b) && eb.extrasSaid(tb, a)
}

// withoutGeneric leaves out the words that name a quantity.
func (s sel) withoutGeneric() sel {
	for m := s.idx; m != 0; m &= m - 1 {
		if k := bits.TrailingZeros64(m); genericMeasures[s.st.stem(&s.st.toks[k])] || genericMeasures[s.st.raw(&s.st.toks[k])] {
			s.idx &^= 1 << k
		}
	}
	return s
}

// extrasSaid reports whether every word of s, extra words of the thing
// words t, is said by the other statement, or stands apart from the words
// t shares (a break between them).
func (s sel) extrasSaid(t sel, other *Statement) bool {
	shared := t.idx &^ s.idx
	for m := s.idx; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		if other.all().hasKin(&s.st.toks[k]) {
			continue // said there, or its kin ("contributions" / "contributes")
		}
		for n := shared; n != 0; n &= n - 1 {
			j := bits.TrailingZeros64(n)
			lo, hi := min(j, k)+1, max(j, k)+1
			if s.st.flagged(tBreak)&span(lo, hi) == 0 {
				return false // "garage rent": one phrase
			}
		}
	}
	return true
}

// measureKeys: the signal needs measures of one kind and unit that share
// a thing word; every measure anchors and probes (kind, unit, w) for each
// of its thing words.
func (st *Statement) measureKeys(anchors, probes []Key) ([]Key, []Key) {
	var buf [8]measure
	for _, m := range st.measures(buf[:0]) {
		unit := uint64(0)
		if m.keyKind() == unitCount {
			unit = uint64(m.unit)
		}
		base := mix(tagMeasure, uint64(m.keyKind()), unit)
		for t := range (sel{st, m.things}).words {
			k := Key(mixOn(base, uint64(t.hash))) // (sameThing shares a word: its stem)
			anchors, probes = append(anchors, k), append(probes, k)
		}
	}
	return anchors, probes
}

// narrowed reports a qualifier after the number of m that says where or
// for whom it holds, of which the other statement says nothing ("raised
// the storage limit to 50 GB for team accounts", "shoe size is 9.5 in
// running shoes"; not "for six years", "for all").
func (st *Statement) narrowed(m *measure, other *Statement) bool {
	for i := m.num + 1; i+1 < len(st.toks) && st.toks[i].flags&tBreak == 0; i++ {
		switch st.raw(&st.toks[i]) {
		case "for", "in", "on", "at", "with":
		default:
			continue
		}
		if n := &st.toks[i+1]; n.flags&(tNumber|fTime|fWhen|tBreak) != 0 || allWords[st.raw(n)] {
			return false
		}
		who := sel{st, st.allIdx & span(i+1, st.phraseEnd(i+1)) &^ st.flagged(fWhen)}
		return who.minus(other.all()).count() > 0
	}
	return false
}

// changes reports a change verb in the sentence of token i: "handoff moved
// to Wed 10:00" changes the day with the time.
func (st *Statement) changes(i int) bool {
	return st.sentence(i)&st.flagged(fReplace) != 0
}
