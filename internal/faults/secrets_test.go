package faults_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

// The secrets the echoing LLM repeats. Neither is shaped like a credential
// (no sk- prefix, no "bearer"): only their values can give them away.
const (
	echoedKey   = "Q7fL2mZx9RkT4wVb8NcY3hJd"
	echoedToken = "Pl4nkton-Harbour-7781-Quill"
)

// An OpenAI-compatible LLM that repeats the API key it was sent (and the
// admin token, which it could only have from elsewhere) in everything it
// says: reasoning, facts, and the error of a refused request. It sits behind
// an Azure-style endpoint with a query string; a request without the
// query, or with the path after it, gets a 404.
func echoingLLM(t *testing.T, refusals *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openai/v1/chat/completions" || r.URL.Query().Get("api-version") != "2024-06-01" {
			http.NotFound(w, r)
			return
		}
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		body, _ := io.ReadAll(r.Body)
		prompt := string(body)
		echo := fmt.Sprintf("my key is %s and the console's token is %s", key, echoedToken)
		if refusals.Add(1) <= 2 {
			http.Error(w, "refused: "+echo, http.StatusTooManyRequests)
			return
		}
		var content string
		switch {
		case strings.Contains(prompt, "durable facts"):
			b, _ := json.Marshal(map[string]any{"facts": []string{"The user moves to Porto in May; " + echo, "Remember " + key}})
			content = string(b)
		case strings.Contains(prompt, "OneSignal"):
			content = fmt.Sprintf(`{"reasoning": %q, "retired": [{"older": 1, "newer": 2, "confidence": 0.6}]}`, echo)
		default:
			content = fmt.Sprintf(`{"reasoning": %q, "retired": [{"older": 1, "newer": 2, "confidence": 0.9}]}`, echo)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The daemon against an LLM that echoes the API key and the admin token: a
// semantic supersession, a semantic proposal and a re-compaction are
// written, and afterwards neither secret is in any row of any table, in any
// answer of the API or the console, or in the log.
func TestEchoedSecretsAppearNowhere(t *testing.T) {
	t.Parallel()
	var refusals atomic.Int32
	llmSrv := echoingLLM(t, &refusals)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	project := s.Aspect("a", "Sam", "project")
	alerts := s.Aspect("a", "Sam", "alerts")
	s.Add(
		memtest.Attr{ID: "s1", Agent: "a", Aspect: project, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Aspect: project, Content: "The billing service keeps invoices inside DynamoDB tables"},
		memtest.Attr{ID: "d1", Agent: "a", Aspect: alerts, Content: "The mobile app sends push alerts through Firebase"},
		memtest.Attr{ID: "d2", Agent: "a", Aspect: alerts, Content: "The mobile app delivers push alerts using OneSignal"},
	)
	s.Exec(`INSERT INTO messages (agent_id, seq, direction, body) VALUES
		('a', 1, 'inbound', 'We are moving to Porto in May'), ('a', 2, 'outbound', 'Noted: Porto in May')`)
	s.Exec(`INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status)
		VALUES ('a', now() - interval '1 hour', 1, 2, 'pending')`)

	cfg := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"@every 1s\"\n    tombstones: \"off\"\n" +
		"  compaction:\n    backoff:\n      initial: 1s\n      max: 1s\n" +
		"  llm:\n    endpoint: " + llmSrv.URL + "/openai/v1?api-version=2024-06-01\n    model: m\n" +
		"memory:\n  pipelineV2:\n    structural:\n      supersessionSemanticFallback: true\n"
	p := startWithEnv(t, db.URL, cfg, "OPENAI_API_KEY="+echoedKey, "SUPERSESSIOND_ADMIN_TOKEN="+echoedToken)
	// The two refused windows back off a minute before they are asked again.
	eventually(t, 150*time.Second, "a semantic supersession, a proposal and a re-compaction", func() bool {
		return s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`) == 1 &&
			s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`) == 1 &&
			s.Count(`SELECT count(*) FROM compaction_events WHERE status = 'completed'`) == 1
	}, p)
	if n := s.Count(`SELECT count(*) FROM memories WHERE content LIKE 'The user moves to Porto in May%'`); n != 1 {
		t.Fatalf("the re-compaction's fact is not a memory (%d)", n)
	}
	var proposal string
	if err := db.Get(&proposal, `SELECT id FROM memory_history WHERE event = 'supersession_proposal'`); err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, path := range []string{"/api/history", "/api/history?limit=500", "/api/proposals",
		"/api/proposals/" + proposal, "/api/proposals/counts", "/api/stats", "/ui/", "/ui/proposals/" + proposal, "/ui/stats",
		"/healthz", "/readyz", "/metrics"} {
		code, body := getWithToken(p, path, echoedToken)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		answers = append(answers, path+": "+body)
	}
	p.stop()

	for _, secret := range []string{echoedKey, echoedToken} {
		for _, hit := range rowsHolding(t, db, secret) {
			t.Errorf("the database holds %q: %s", secret, hit)
		}
		for _, a := range answers {
			if strings.Contains(a, secret) {
				t.Errorf("an HTTP answer holds %q: %.300s", secret, a)
			}
		}
		if strings.Contains(p.logs.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, p.logs)
		}
	}
	if !strings.Contains(p.logs.String(), "xxxxx") {
		t.Errorf("the refused requests' echo is not in the log, masked:\n%s", p.logs)
	}
}

// rowsHolding lists every row of every table (the agent's, the daemon's)
// whose text form holds s: a row's text form holds each of its columns,
// text and jsonb alike.
func rowsHolding(t *testing.T, db *pgtest.DB, s string) []string {
	t.Helper()
	var tables []string
	if err := db.Select(&tables, `SELECT format('%I.%I', table_schema, table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables found: %v", len(tables), tables)
	}
	var hits []string
	for _, table := range tables {
		var rows []string
		if err := db.Select(&rows, `SELECT r::text FROM `+table+` r WHERE r::text LIKE '%' || $1 || '%'`, s); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			hits = append(hits, table+": "+r)
		}
	}
	return hits
}

// startWithEnv is start with more environment variables.
func startWithEnv(t *testing.T, dbURL, cfgBody string, env ...string) *proc {
	t.Helper()
	port := proctest.FreePort(t)
	cfg := writeConfig(t, fmt.Sprintf("maintenance:\n  http:\n    listen: 127.0.0.1:%d\n%s", port, cfgBody))
	cmd := exec.Command(binary, "run", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+dbURL), env...)
	p := &proc{t: t, cmd: cmd, logs: &logBuffer{}, port: port, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	eventually(t, 30*time.Second, "daemon ready", func() bool { code, _ := p.get("/readyz"); return code == 200 }, p)
	return p
}

// getWithToken is a GET with the admin token, as an operator's script sends
// it.
func getWithToken(p *proc, path, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path), nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
