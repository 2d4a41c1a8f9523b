package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// tableSums is, for every table and sequence of every schema (the agent's
// and the daemon's own), its row count and a checksum of its rows.
func tableSums(t *testing.T, db *sqlx.DB) map[string]string {
	t.Helper()
	var rels []struct {
		Name string `db:"name"`
		Kind string `db:"kind"`
	}
	err := db.Select(&rels, `
		SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name, c.relkind::text AS kind
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, r := range rels {
		q := `SELECT count(*)::text || ' ' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM ` + r.Name + ` t`
		if r.Kind == "S" {
			q = `SELECT last_value::text || ' ' || is_called::text FROM ` + r.Name
		}
		var sum string
		if err := db.Get(&sum, q); err != nil {
			t.Fatal(err)
		}
		sums[r.Name] = sum
	}
	if len(sums) < 10 {
		t.Fatalf("only %d tables and sequences found", len(sums))
	}
	return sums
}

// seedDryRun: a live contradiction, one in the review band, one only the
// LLM sees, a protected row, and agent b's contradiction.
func seedDryRun(t *testing.T, db *pgtest.DB) {
	s := memtest.New(t, db.DB)
	home, rel, proj := s.Aspect("a", "Sam", "home"), s.Aspect("a", "Sam", "relationship"), s.Aspect("a", "Sam", "project")
	work := s.Aspect("b", "Kim", "work")
	s.Add(
		memtest.Attr{ID: "a0", Agent: "a", Aspect: home, Content: "Lives in Montreal", Protected: true},
		memtest.Attr{ID: "a1", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "a2", Agent: "a", Aspect: home, Content: "Lives in Vancouver"},
		memtest.Attr{ID: "r1", Agent: "a", Aspect: rel, Content: "Is married to Alex"},
		memtest.Attr{ID: "r2", Agent: "a", Aspect: rel, Content: "Is divorced"},
		memtest.Attr{ID: "s1", Agent: "a", Aspect: proj, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Aspect: proj, Content: "The billing service keeps invoices inside DynamoDB tables"},
		memtest.Attr{ID: "b1", Agent: "b", Aspect: work, Content: "Works at Figma"},
		memtest.Attr{ID: "b2", Agent: "b", Aspect: work, Content: "Works at Stripe"},
	)
}

type plannedPair struct {
	Action     string  `json:"action"`
	AgentID    string  `json:"agent_id"`
	OldID      string  `json:"old_attribute_id"`
	NewID      string  `json:"new_attribute_id"`
	OldContent string  `json:"old_content"`
	Confidence float64 `json:"confidence"`
	Signals    []struct {
		Name string `json:"name"`
	} `json:"signals"`
}

func (p plannedPair) key() string {
	return fmt.Sprintf("%s %s→%s %.2f", p.Action, p.OldID, p.NewID, p.Confidence)
}

// writtenPairs are the decisions a real sweep wrote, as a dry run names them.
func writtenPairs(t *testing.T, db *sqlx.DB, runID string) []string {
	t.Helper()
	var out []string
	err := db.Select(&out, `
		SELECT CASE WHEN event = 'attribute_superseded' THEN 'supersede' ELSE 'propose(' || (metadata ->> 'mode') || ')' END
		       || ' ' || (metadata ->> 'old_attribute_id') || '→' || (metadata ->> 'new_attribute_id')
		       || ' ' || to_char((metadata ->> 'confidence')::numeric, 'FM0.00')
		FROM memory_history WHERE request_id = $1 ORDER BY 1`, runID)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sweep --once --dry-run decides through the engine's own path and writes
// nothing at all; what it lists is what the real sweep then writes.
func TestSweepDryRunWritesNothingAndListsWhatASweepWrites(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": `{"reasoning": "the invoices moved", "retired": [{"older": 1, "newer": 2, "confidence": 0.8}]}`}}}})
	}))
	defer srv.Close()
	for _, mode := range []string{"shadow", "live"} {
		t.Run(mode, func(t *testing.T) {
			db := pgtest.New(t)
			seedDryRun(t, db)
			c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL,
				fmt.Sprintf("SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=%v", mode == "shadow"),
				"SUPERSESSIOND_MEMORY__PIPELINEV2__STRUCTURAL__SUPERSESSIONSEMANTICFALLBACK=true",
				"SUPERSESSIOND_MAINTENANCE__LLM__ENDPOINT="+srv.URL+"/v1", "SUPERSESSIOND_MAINTENANCE__LLM__MODEL=m")
			// Agent b's pair is proposed already (shadow) or applied (live):
			// the dry run must know a real sweep would not write it again.
			if code, _, errOut := c.run("", "sweep", "--once", "--agent", "b"); code != 0 {
				t.Fatalf("sweep of b: %s", errOut)
			}
			before := tableSums(t, db.DB)
			asked.Store(0)
			code, out, errOut := c.run("", "sweep", "--once", "--dry-run", "--json")
			if code != 0 {
				t.Fatalf("dry run: exit %d: %s", code, errOut)
			}
			if after := tableSums(t, db.DB); fmt.Sprint(after) != fmt.Sprint(before) {
				for k := range before {
					if before[k] != after[k] {
						t.Errorf("the dry run changed %s: %s → %s", k, before[k], after[k])
					}
				}
				t.FailNow()
			}
			if n := asked.Load(); n != 1 {
				t.Fatalf("the dry run asked the LLM %d times, want once (nothing cached)", n)
			}
			var rep struct {
				Mode    string        `json:"mode"`
				DryRun  bool          `json:"dry_run"`
				Planned []plannedPair `json:"planned"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.DryRun || rep.Mode != mode {
				t.Fatalf("report: %v\n%s", err, out)
			}
			var planned []string
			for _, p := range rep.Planned {
				planned = append(planned, p.key())
			}
			sort.Strings(planned)
			want := "propose(review) r1→r2 0.60,propose(shadow) a1→a2 0.90,propose(shadow) s1→s2 0.80"
			if mode == "live" {
				want = "propose(review) r1→r2 0.60,supersede a1→a2 0.90,supersede s1→s2 0.80"
			}
			if strings.Join(planned, ",") != want {
				t.Fatalf("planned %v, want %s", planned, want)
			}

			// The real sweep writes exactly what the dry run listed.
			code, out, errOut = c.run("", "sweep", "--once", "--json")
			if code != 0 {
				t.Fatalf("sweep: %s", errOut)
			}
			var real struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(out), &real); err != nil {
				t.Fatal(err)
			}
			if got := writtenPairs(t, db.DB, real.RunID); strings.Join(got, ",") != want {
				t.Fatalf("the sweep wrote %v, the dry run listed %s", got, want)
			}
		})
	}
}

// The text form lists the pairs, one line each.
func TestSweepDryRunText(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	seedDryRun(t, db)
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")
	code, out, errOut := c.run("", "sweep", "--once", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"dry run: nothing written", "would be 2 shadow, 1 review",
		`propose(shadow)  a      a1 "Lives in Toronto" → a2 "Lives in Vancouver"`, "0.90  value_conflict",
		`propose(review)  a      r1 "Is married to Alex" → r2 "Is divorced"`, `b1 "Works at Figma" → b2 "Works at Stripe"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := c.run("", "sweep", "--dry-run"); code != exitUsage {
		t.Fatal("--dry-run needs --once like every sweep from the command line")
	}
}
