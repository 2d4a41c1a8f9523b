package console

import (
	"strings"
	"testing"
)

func render(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.Op {
		case '=':
			b.WriteString(s.Text)
		default:
			b.WriteString("[" + string(s.Op) + s.Text + "]")
		}
	}
	return b.String()
}

func TestWordDiff(t *testing.T) {
	t.Parallel()
	cases := []struct{ old, new, wantOld, wantNew string }{
		{"Lives in Toronto", "Lives in Vancouver", "Lives in [-Toronto]", "Lives in [+Vancouver]"},
		{"Prefers dark mode in every app", "Prefers light mode in every app", "Prefers [-dark ]mode in every app", "Prefers [+light ]mode in every app"},
		{"Is vegetarian", "Is no longer vegetarian", "Is vegetarian", "Is [+no longer ]vegetarian"},
		{"Reports to Dana", "Now reports to Priya", "Reports to [-Dana]", "[+Now ]reports to [+Priya]"}, // case is not a change
		{"same", "same", "same", "same"},
		{"", "new text", "", "[+new text]"},
	}
	for _, c := range cases {
		o, n := WordDiff(c.old, c.new)
		if got := render(o); got != c.wantOld {
			t.Errorf("%q → %q: old side %q, want %q", c.old, c.new, got, c.wantOld)
		}
		if got := render(n); got != c.wantNew {
			t.Errorf("%q → %q: new side %q, want %q", c.old, c.new, got, c.wantNew)
		}
	}
}
