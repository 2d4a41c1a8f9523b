package detect

import (
	"bytes"
	"strings"
	"testing"
)

// The statements below are chosen for verdicts no reading of English can
// change: a one-value slot ("lives in") with another value fires, and two
// unrelated hobbies fire nothing. The labels are set to make every count
// of the report non-zero, some of them deliberately against the reading.
const aspectsFixture = `{"aspect_id":"a1","entity":"Ana","aspect":"home city","style":"mem0","statements":[` +
	`{"id":"s1","text":"Lives in Toronto","at":"2025-01-01T00:00:00Z","kind":"attribute"},` +
	`{"id":"s2","text":"Lives in Vancouver","at":"2025-02-01T00:00:00Z","kind":"attribute"},` +
	`{"id":"s3","text":"Lives in Montreal","at":"2025-03-01T00:00:00Z","kind":"attribute"},` +
	`{"id":"s4","text":"Never book a hotel without a gym","at":"2025-04-01T00:00:00Z","kind":"constraint"}],` +
	`"supersedes":[["s1","s2"]],"ambiguous":[]}
{"aspect_id":"a2","entity":"Ana","aspect":"hobbies","style":"chat","statements":[` +
	`{"id":"s1","text":"Likes chess","at":"2025-01-01T00:00:00Z"},` +
	`{"id":"s2","text":"Enjoys painting","at":"2025-01-02T00:00:00Z"},` +
	`{"id":"s3","text":"Lives in Lisbon","at":"2025-01-03T00:00:00Z"},` +
	`{"id":"s4","text":"Lives in Porto","at":"2025-01-04T00:00:00Z"}],` +
	`"supersedes":[["s1","s2"]],"ambiguous":[["s3","s4"]]}
`

func evaluateFixture(t *testing.T, fixture string, scope bool) *AspectReport {
	t.Helper()
	rep, err := EvaluateAspects(strings.NewReader(fixture), AspectOptions{Min: 0.7, Review: 0.5, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("lines not evaluated: %v", rep.Errors)
	}
	return rep
}

func TestEvaluateAspectsCounts(t *testing.T) {
	t.Parallel()
	rep := evaluateFixture(t, aspectsFixture, false)
	o := rep.Overall
	// a1: s1 is retired by the newest contradicting sibling, s3, not by its
	// true replacement s2 (a wrong replacement); s2 is retired by s3 though
	// nothing says it should be (a wrong retirement). a2: s1 should be
	// retired and is not (a miss); s3 is retired by an ambiguous pair, which
	// counts nowhere. Pairs with the constraint are pairs too (true
	// negatives: nothing decides them).
	want := AspectCounts{Aspects: 2, Statements: 8, ShouldRetire: 2, Retired: 2, RetiredRight: 1, RetiredWrong: 1,
		WrongReplacement: 1, Pairs: Counts{TP: 1, FP: 2, FN: 1, TN: 7}}
	if o != want {
		t.Fatalf("overall counts\n got %+v\nwant %+v", o, want)
	}
	if p, _ := o.RetirementPrecision(); p != 0.5 {
		t.Errorf("retirement precision %v, want 0.5", p)
	}
	if r, _ := o.RetirementRecall(); r != 0.5 {
		t.Errorf("retirement recall %v, want 0.5", r)
	}
	if m := rep.Styles["mem0"]; m == nil || m.Aspects != 1 || m.RetiredWrong != 1 || m.ShouldRetire != 1 {
		t.Errorf("mem0 style: %+v", m)
	}
	if c := rep.Styles["chat"]; c == nil || c.ShouldRetire != 1 || c.RetiredRight != 0 || c.Pairs.FN != 1 {
		t.Errorf("chat style: %+v", c)
	}
	if len(rep.WrongRetirements) != 1 || rep.WrongRetirements[0].Old.Content.String != "Lives in Vancouver" {
		t.Errorf("wrong retirements: %+v", rep.WrongRetirements)
	}
	if len(rep.WrongReplacements) != 1 || rep.WrongReplacements[0].New.Content.String != "Lives in Montreal" {
		t.Errorf("wrong replacements: %+v", rep.WrongReplacements)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].Old.Content.String != "Likes chess" {
		t.Errorf("misses: %+v", rep.Misses)
	}
	var out bytes.Buffer
	if err := rep.Write(&out, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ret. precision", "ret. recall", "wrong repl.", "pair precision", "review true/false",
		"  chat", "  mem0", "wrong retirements (the statement is still true)", "a1 [mem0, home city] s2 retired by s3",
		"true replacement s2: Lives in Vancouver", "missed (should be retired, would not be)", "a2 [chat, hobbies] s1: Likes chess",
		"by s2 (0.00): Enjoys painting"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEvaluateAspectsScope merges Ana's aspects into one unnamed scope: the
// cities of "hobbies" now meet those of "home city", and every pair across
// the two aspects is false.
func TestEvaluateAspectsScope(t *testing.T) {
	t.Parallel()
	rep := evaluateFixture(t, aspectsFixture, true)
	o := rep.Overall
	if o.Statements != 8 || o.ShouldRetire != 2 {
		t.Fatalf("scope counts %+v", o)
	}
	// Every city is retired by Montreal (a1's s3, March), the newest of
	// them: a1's Toronto rightly but by the wrong replacement, Vancouver
	// wrongly, and a2's Lisbon and Porto wrongly too: only an ambiguous pair
	// of its own aspect could retire Lisbon, and Montreal is not in it.
	if o.RetiredWrong != 3 || o.RetiredRight != 1 || o.WrongReplacement != 1 {
		t.Errorf("scope retirements %+v", o)
	}
	if o.Pairs.TN+o.Pairs.FP+o.Pairs.TP+o.Pairs.FN <= 8 {
		t.Errorf("scope pairs do not cross aspects: %+v", o.Pairs)
	}
}

func TestParseAspectErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{`nope`, "invalid JSON"},
		{`{"statements":[]}`, `missing "aspect_id"`},
		{`{"aspect_id":"a","statements":[]}`, `no "statements"`},
		{`{"aspect_id":"a","statements":[{"id":"s1"}]}`, `missing "text"`},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x"},{"id":"s1","text":"y"}]}`, "listed twice"},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x","at":"2025-01-01T00:00:00Z"},{"id":"s2","text":"y"}]}`, "either every statement"},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x","kind":"rule"}]}`, "is not \"attribute\""},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x"},{"id":"s2","text":"y"}],"supersedes":[["s2","s1"]]}`, "not newer"},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x"}],"supersedes":[["s1","s9"]]}`, "does not list"},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x"}],"supersedes":[["s1"]]}`, "is not a pair"},
		{`{"aspect_id":"a","statements":[{"id":"s1","text":"x"}],"surpersedes":[]}`, "unknown field"},
	} {
		_, err := ParseAspect([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.line, err, tc.want)
		}
	}
	rep, err := EvaluateAspects(strings.NewReader(aspectsFixture+"{\"aspect_id\":\"a1\",\"statements\":[{\"id\":\"s\",\"text\":\"x\"}]}\n"),
		AspectOptions{Min: 0.7, Review: 0.5})
	if err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "line 3: aspect a1: listed twice") {
		t.Errorf("a duplicate aspect: %v %v", err, rep.Errors)
	}
}
