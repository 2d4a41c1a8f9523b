package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestCompactOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	llmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": `{"facts": ["Has a cat named Miso"]}`}}}})
	}))
	defer llmSrv.Close()
	for _, q := range []string{
		`INSERT INTO messages (agent_id, seq, direction, body) VALUES ('a', 1, 'inbound', 'I adopted a cat, Miso'), ('a', 2, 'outbound', 'Congratulations!')`,
		`INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status) VALUES ('a', now() - interval '1 hour', 1, 2, 'pending')`,
		`INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status) VALUES ('a', now() - interval '1 hour', NULL, NULL, 'pending')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"SUPERSESSIOND_DATABASE_URL=" + db.URL,
		"SUPERSESSIOND_MAINTENANCE__LLM__ENDPOINT=" + llmSrv.URL + "/v1", "SUPERSESSIOND_MAINTENANCE__LLM__MODEL=m"}

	if code, _, errOut := newCLI(t, env...).run("", "compact"); code != exitUsage || !strings.Contains(errOut, "--once is required") {
		t.Fatalf("compact without --once: exit %d: %s", code, errOut)
	}

	// Shadow mode: what would be retried, nothing changed.
	code, out, errOut := newCLI(t, append(env, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")...).run("", "compact", "--once")
	if code != 0 || !strings.Contains(out, "shadow mode: nothing changed") || !strings.Contains(out, "would retry 2 events") {
		t.Fatalf("shadow: exit %d\n%s\n%s", code, out, errOut)
	}
	var pending int
	if err := db.Get(&pending, `SELECT count(*) FROM compaction_events WHERE status = 'pending' AND retry_count = 0`); err != nil || pending != 2 {
		t.Fatalf("shadow pass changed events: %d pending untouched, %v", pending, err)
	}

	code, out, errOut = newCLI(t, env...).run("", "compact", "--once", "--json")
	if code != 0 {
		t.Fatalf("compact --once --json: exit %d: %s", code, errOut)
	}
	var rep struct {
		Mode      string `json:"mode"`
		Claimed   int    `json:"claimed"`
		Completed int    `json:"completed"`
		Failed    int    `json:"failed"`
		Events    []struct {
			Outcome string `json:"outcome"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("--json must print one JSON document: %v\n%s", err, out)
	}
	if rep.Mode != "live" || rep.Claimed != 2 || rep.Completed != 1 || rep.Failed != 1 || len(rep.Events) != 2 {
		t.Fatalf("report: %s", out)
	}
	var facts int
	if err := db.Get(&facts, `SELECT count(*) FROM memories WHERE type = 'fact' AND source_type = 'compaction'`); err != nil || facts != 1 {
		t.Fatalf("facts: %d %v", facts, err)
	}

	// Nothing left: a second pass says so in text.
	code, out, _ = newCLI(t, env...).run("", "compact", "--once")
	if code != 0 || !strings.Contains(out, "claimed 0") || !strings.Contains(out, "backlog: 0 stale pending events") {
		t.Fatalf("second pass: exit %d\n%s", code, out)
	}
}
