package audit_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/audit"
)

// Every row an operator writes says who: the channel in changed_by, the
// session and request in their columns, the operator's name (and how it is
// known) in the metadata; the queue shows who accepted, applied and undid.
func TestOperatorRowsSayWho(t *testing.T) {
	t.Parallel()
	db, _, ids := queueFixture(t)
	alice := opsOf(db.DB).As(audit.Operator{Channel: audit.ChannelConsole, Name: "alice", Source: audit.SourceToken,
		SessionID: "sess-1", RequestID: "req-1"})
	bob := opsOf(db.DB).As(audit.Operator{Channel: audit.ChannelAPI, Name: "bob", Source: audit.SourceToken, RequestID: "req-2"})
	carol := opsOf(db.DB).As(audit.Operator{Channel: audit.ChannelCLI, Name: "carol", Source: audit.SourceOSUser, RequestID: "cli-3"})

	if _, err := alice.Review(ctx, ids["a-home-1"], true, "seen"); err != nil {
		t.Fatal(err)
	}
	applied := bob.Apply(ctx, cfg(), []string{ids["a-home-1"]})[0]
	if applied.Err != nil {
		t.Fatal(applied.Err)
	}
	if _, err := carol.Undo(ctx, cfg(), applied.HistoryID); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.ReviewAll(ctx, audit.BulkReview{Filter: audit.ProposalFilter{Agent: "b"}, Accept: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Protect(ctx, cfg(), "a-diet-1", true); err != nil {
		t.Fatal(err)
	}

	type row struct {
		Event, ChangedBy, ActorType, Operator, Source, Session, Request string
	}
	var rows []row
	if err := db.Select(&rows, `SELECT event AS "event", changed_by AS "changedby", coalesce(actor_type, '') AS "actortype",
		coalesce(metadata->>'operator', '') AS "operator", coalesce(metadata->>'operator_source', '') AS "source",
		coalesce(session_id, '') AS "session", coalesce(request_id, '') AS "request"
		FROM memory_history WHERE event <> 'supersession_proposal' ORDER BY created_at, id`); err != nil {
		t.Fatal(err)
	}
	want := []row{
		{"supersession_proposal_accepted", "supersessiond:console", "operator", "alice", "token", "sess-1", "req-1"},
		{"attribute_superseded", "supersessiond:api", "operator", "bob", "token", "", "req-2"},
		{"supersession_reverted", "supersessiond:cli", "operator", "carol", "os_user", "", "cli-3"},
		{"supersession_proposal_rejected", "supersessiond:api", "operator", "bob", "token", "", "req-2"},
		{"attribute_protected", "supersessiond:console", "operator", "alice", "token", "sess-1", "req-1"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows: %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}

	ps, err := opsOf(db.DB).Proposals(ctx, audit.ProposalFilter{IDs: []string{ids["a-home-1"], ids["b-home-1"]}})
	if err != nil || len(ps) != 2 {
		t.Fatalf("%v %v", ps, err)
	}
	var js bytes.Buffer
	if err := audit.WriteProposalsJSON(&js, ps); err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		byID[p["id"].(string)] = p
	}
	home := byID[ids["a-home-1"]]
	by := func(p map[string]any, path ...string) string {
		var v any = p
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		s, _ := v.(string)
		return s
	}
	for _, c := range []struct{ path, want string }{
		{"review.by.operator", "alice"}, {"review.by.channel", "console"}, {"review.by.session_id", "sess-1"},
		{"applied_by.operator", "bob"}, {"applied_by.channel", "api"},
		{"reverted_by.operator", "carol"}, {"reverted_by.channel", "cli"}, {"reverted_by.operator_source", "os_user"},
	} {
		if got := by(home, strings.Split(c.path, ".")...); got != c.want {
			t.Errorf("proposals --format json: %s = %q, want %q\n%s", c.path, got, c.want, js.String())
		}
	}
	if got := by(byID[ids["b-home-1"]], "review", "by", "operator"); got != "bob" {
		t.Errorf("a bulk review's author: %q", got)
	}
	entries, err := opsOf(db.DB).History(ctx, audit.Filter{Event: "supersession_reverted"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v %v", entries, err)
	}
	var table bytes.Buffer
	if err := audit.WriteTable(&table, entries); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "BY") || !strings.Contains(table.String(), "carol (cli)") {
		t.Errorf("history's table names who:\n%s", table.String())
	}
}
