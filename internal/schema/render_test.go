package schema

import (
	"strings"
	"testing"
)

// Render renders every statement of a job's struct once, nested structs
// and arrays included, and compiles its named statements.
func TestRenderRendersEveryStatementOnce(t *testing.T) {
	t.Parallel()
	type inner struct{ Keys string }
	type statements struct {
		Claim  string
		Both   [2]string
		Nested inner
		Until  Named
	}
	n := ReferenceNames()
	n.MetaCast = "text"
	got := Render(n, statements{
		Claim:  `SELECT 1 FROM {{.Changes}} WHERE seq = $1`,
		Both:   [2]string{`SELECT {{meta "h"}} FROM {{.History}} h`, `DELETE FROM {{.Outbox}}`},
		Nested: inner{Keys: `DELETE FROM {{.Keys}}`},
		Until:  NamedSQL(`SELECT 2 FROM {{.Outbox}} WHERE holder = :holder AND until < CAST(:until AS timestamptz) AND :holder <> ''`),
	})
	want := statements{
		Claim:  `SELECT 1 FROM "supersessiond"."changes" WHERE seq = $1`,
		Both:   [2]string{`SELECT CAST(h.metadata AS jsonb) FROM "memory_history" h`, `DELETE FROM "supersessiond"."classified"`},
		Nested: inner{Keys: `DELETE FROM "supersessiond"."aspect_keys"`},
	}
	until := got.Until
	got.Until = Named{}
	if got.Claim != want.Claim || got.Both != want.Both || got.Nested != want.Nested {
		t.Fatalf("rendered\n%+v\nwant\n%+v", got, want)
	}
	q, args, err := until.Bind(map[string]any{"holder": "me", "until": "now", "unused": 1})
	if err != nil {
		t.Fatal(err)
	}
	if wantQ := `SELECT 2 FROM "supersessiond"."classified" WHERE holder = $1 AND until < CAST($2 AS timestamptz) AND $3 <> ''`; q != wantQ {
		t.Fatalf("compiled\n%s\nwant\n%s", q, wantQ)
	}
	if len(args) != 3 || args[0] != "me" || args[1] != "now" || args[2] != "me" {
		t.Fatalf("arguments %v, want [me now me]", args)
	}
	if _, _, err := until.Bind(map[string]any{"holder": "me"}); err == nil || !strings.Contains(err.Error(), ":until") {
		t.Fatalf("a missing value: %v", err)
	}
	if _, _, err := NamedSQL(`SELECT :a`).Bind(map[string]any{"a": 1}); err == nil {
		t.Fatal("a statement bound before Render")
	}
}

func TestRenderRefusesWhatNamedBindingWouldGarble(t *testing.T) {
	t.Parallel()
	type one struct{ S Named }
	type plain struct{ S string }
	type hidden struct{ s string }
	cases := []struct {
		name, want string
		render     func()
	}{
		{"a cast beside named parameters", `"::" cast`, func() { Render(nil, one{NamedSQL(`SELECT :a::text`)}) }},
		{"named and positional", "both named", func() { Render(nil, one{NamedSQL(`SELECT :a, $1`)}) }},
		{"a colon in a literal", "colon in a literal", func() { Render(nil, one{NamedSQL(`SELECT :a, '10:30'`)}) }},
		{"a colon in a comment", "colon in a literal or a comment", func() { Render(nil, one{NamedSQL("SELECT :a -- a comment: no\n")}) }},
		{"a named statement naming nothing", "without a named parameter", func() { Render(nil, one{NamedSQL(`SELECT $1`)}) }},
		{"a string statement naming its parameters", "declare it schema.Named", func() { Render(nil, plain{`SELECT :a`}) }},
		{"an unexported statement", "not exported", func() { Render(nil, hidden{`SELECT 1`}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Fatalf("want a panic saying %q, got %v", c.want, r)
				}
			}()
			c.render()
		})
	}
	// A cast and colons in a positional statement are fine.
	Render(nil, plain{"SELECT $1::text, '10:30' -- a comment: fine\n"})
}
