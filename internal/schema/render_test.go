package schema

import (
	"strings"
	"testing"
)

// Render renders every statement of a job's struct once, nested structs
// and arrays included, and refuses what sqlx's named binding would garble.
func TestRenderRendersEveryStatementOnce(t *testing.T) {
	t.Parallel()
	type inner struct{ Keys string }
	type statements struct {
		Claim  string
		Both   [2]string
		Nested inner
	}
	n := ReferenceNames()
	n.MetaCast = "text"
	got := Render(n, statements{
		Claim:  `SELECT 1 FROM {{.Changes}} WHERE seq = $1`,
		Both:   [2]string{`SELECT {{meta "h"}} FROM {{.History}} h`, `SELECT 2 FROM {{.Outbox}} WHERE holder = :holder AND until < CAST(:until AS timestamptz)`},
		Nested: inner{Keys: `DELETE FROM {{.Keys}}`},
	})
	want := statements{
		Claim:  `SELECT 1 FROM "supersessiond"."changes" WHERE seq = $1`,
		Both:   [2]string{`SELECT CAST(h.metadata AS jsonb) FROM "memory_history" h`, `SELECT 2 FROM "supersessiond"."classified" WHERE holder = :holder AND until < CAST(:until AS timestamptz)`},
		Nested: inner{Keys: `DELETE FROM "supersessiond"."aspect_keys"`},
	}
	if got != want {
		t.Fatalf("rendered\n%+v\nwant\n%+v", got, want)
	}
}

func TestRenderRefusesWhatNamedBindingWouldGarble(t *testing.T) {
	t.Parallel()
	type one struct{ S string }
	type hidden struct{ s string }
	cases := []struct {
		name, want string
		render     func()
	}{
		{"a cast beside named parameters", `"::" cast`, func() { Render(nil, one{`SELECT :a::text`}) }},
		{"named and positional", "both named", func() { Render(nil, one{`SELECT :a, $1`}) }},
		{"a colon in a literal", "colon in a literal", func() { Render(nil, one{`SELECT :a, '10:30'`}) }},
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
	// A cast in a positional statement, and colons in a named one's
	// comments and in positional literals, are fine.
	Render(nil, one{`SELECT $1::text, '10:30'`})
	Render(nil, one{"SELECT :a -- a comment: fine\n"})
}
