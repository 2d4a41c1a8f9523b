package audit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// history stays fast on a large memory_history: every filter combination is
// served by an index created by migrate, never by a scan of the table.
func TestHistoryQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := db.Exec(`
		INSERT INTO memory_history (id, memory_id, event, changed_by, metadata, created_at)
		SELECT 'h' || g, 'm' || g,
		       (ARRAY['supersession_proposal', 'attribute_superseded', 'agent_wrote', 'agent_read'])[1 + g % 4],
		       'x', jsonb_build_object('agent_id', 'agent-' || (g % 50)),
		       now() - g * interval '1 second'
		FROM generate_series(1, 200000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ANALYZE memory_history`); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	cases := []struct {
		name         string
		agent, event string
		since        any
	}{
		{"newest", "", "", nil},
		{"by agent", "agent-7", "", nil},
		{"by event", "", "attribute_superseded", nil},
		{"by agent and event", "agent-7", "supersession_proposal", nil},
		{"since", "", "", since},
		{"agent since", "agent-7", "", since},
	}
	for _, c := range cases {
		q, args, err := audit.HistorySQL.Bind(map[string]any{"agent": c.agent, "event": c.event, "since": c.since, "limit": 50})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(`EXPLAIN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan = append(plan, line)
		}
		rows.Close()
		p := strings.Join(plan, "\n")
		if strings.Contains(p, "Seq Scan on memory_history") || !strings.Contains(p, "supersessiond_history_") {
			t.Errorf("%s: history must use an index:\n%s", c.name, p)
		}
	}
}
