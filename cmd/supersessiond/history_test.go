package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
)

// An unknown --event is a usage error in one line that lists the events;
// no database is needed to say so.
func TestHistoryRejectsUnknownEvents(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	code, out, errOut := c.run("", "history", "--event", "nonsense")
	if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `unknown --event "nonsense"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, e := range audit.Events {
		if !strings.Contains(errOut, e) {
			t.Errorf("the message does not list %s: %s", e, errOut)
		}
	}
}

// An undone supersession shows as undone, in the table and in JSON; one
// that was not undone does not.
func TestHistoryShowsUndoneSupersessions(t *testing.T) {
	t.Parallel()
	_, s, c := seedCLI(t)
	asp := s.Aspect("a", "Sam", "work")
	s.Add(
		memtest.Attr{ID: "w1", Agent: "a", Aspect: asp, Content: "Works at Figma"},
		memtest.Attr{ID: "w2", Agent: "a", Aspect: asp, Content: "Works at Stripe"},
	)
	if code, _, errOut := c.run("", "sweep", "--once"); code != 0 {
		t.Fatalf("sweep: %s", errOut)
	}
	undone := firstID(t, c, "attribute_superseded")
	if code, _, errOut := c.run("", "undo", undone); code != 0 {
		t.Fatalf("undo: %s", errOut)
	}
	revert := firstID(t, c, "supersession_reverted")

	code, out, errOut := c.run("", "history", "--event", "attribute_superseded", "--format", "json")
	if code != 0 {
		t.Fatalf("history: %s", errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two supersessions: %s", out)
	}
	seen := map[string]*string{}
	for _, l := range lines {
		var e struct {
			ID       string  `json:"id"`
			UndoneBy *string `json:"undone_by"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		seen[e.ID] = e.UndoneBy
	}
	for id, by := range seen {
		switch {
		case id == undone && (by == nil || *by != revert):
			t.Errorf("undone supersession %s: undone_by %v, want %s", id, by, revert)
		case id != undone && by != nil:
			t.Errorf("supersession %s was not undone, yet undone_by %s", id, *by)
		}
	}

	_, table, _ := c.run("", "history", "--event", "attribute_superseded")
	rows := strings.Split(strings.TrimSpace(table), "\n")[1:]
	for _, row := range rows {
		marked := strings.Contains(row, "attribute_superseded (undone)")
		if strings.HasSuffix(row, undone) != marked {
			t.Errorf("row marked %v, want %v:\n%s", marked, !marked, table)
		}
	}
}
