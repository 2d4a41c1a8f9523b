package audit_test

import (
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// The queue stays fast on a large memory_history: whatever the filters, the
// proposals are found through an index, and so is each one's review,
// application and revert; never a scan of the table.
func TestProposalQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	// 200,000 history rows: a quarter proposals, the rest the agent's own
	// events, reviews, supersessions and reverts referring to them.
	if _, err := db.Exec(`
		INSERT INTO memory_history (id, memory_id, event, changed_by, metadata, created_at)
		SELECT 'h' || g, 'm' || g,
		       (ARRAY['supersession_proposal', 'agent_wrote', 'supersession_proposal_rejected', 'attribute_superseded'])[1 + g % 4],
		       'x',
		       CASE g % 4
		         WHEN 0 THEN jsonb_build_object('agent_id', 'agent-' || (g % 50), 'old_attribute_id', 'o' || g, 'new_attribute_id', 'n' || g,
		                                        'confidence', (g % 10) / 10.0,
		                                        'signals', jsonb_build_array(jsonb_build_object('name', (ARRAY['value_conflict', 'antonym'])[1 + g % 3 % 2])))
		         WHEN 1 THEN jsonb_build_object('agent_id', 'agent-' || (g % 50))
		         ELSE jsonb_build_object('agent_id', 'agent-' || (g % 50), 'proposal_id', 'h' || (g - g % 4), 'old_attribute_id', 'o' || (g - g % 4),
		                                 'new_attribute_id', 'n' || (g - g % 4))
		       END,
		       now() - g * interval '1 second'
		FROM generate_series(1, 200000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ANALYZE memory_history`); err != nil {
		t.Fatal(err)
	}
	f := func(x float64) any { return x }
	cases := []struct {
		name                  string
		agent, signal, before string
		min, max              any
		ids                   []string
		status                string
	}{
		{name: "newest"},
		{name: "pending", status: "pending"},
		{name: "by agent", agent: "agent-8"},
		{name: "by agent and status", agent: "agent-8", status: "rejected"},
		{name: "by signal", signal: "antonym"},
		{name: "by confidence", min: f(0.5), max: f(0.8)},
		{name: "next page", before: "h100000"},
		{name: "ids", ids: []string{"h4", "h8"}},
	}
	for _, c := range cases {
		ids := c.ids
		if ids == nil {
			ids = []string{}
		}
		plan := explain(t, db, audit.ProposalsSQL, c.agent, c.signal, c.min, c.max, c.before, pq.Array(ids), c.status, 50)
		if strings.Contains(plan, "Seq Scan on memory_history") || !strings.Contains(plan, "supersessiond_history_") {
			t.Errorf("%s: proposals must use indexes:\n%s", c.name, plan)
		}
	}
	plan := explain(t, db, audit.AttributeHistorySQL, pq.Array([]string{"o4", "n4"}), "agent-4")
	if strings.Contains(plan, "Seq Scan on memory_history") {
		t.Errorf("an attribute's history must use indexes:\n%s", plan)
	}
}

func explain(t *testing.T, db *pgtest.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		_ = rows.Scan(&line)
		plan = append(plan, line)
	}
	return strings.Join(plan, "\n")
}
