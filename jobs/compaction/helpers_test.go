package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// secretKey is the API key tests give the LLM client; it must never reach
// the database.
const secretKey = "sk-test-0123456789abcdef"

// clock is a settable clock shared by a test's jobs.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// fakeLLM is an OpenAI-compatible server. It records every compaction
// prompt it receives and answers with handle (default: one fact per user
// line).
type fakeLLM struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
	handle  func(w http.ResponseWriter, r *http.Request, prompt string)
}

func newFakeLLM(t *testing.T) *fakeLLM {
	t.Helper()
	f := &fakeLLM{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		prompt := ""
		if len(req.Messages) == 2 {
			prompt = req.Messages[1].Content
		}
		f.mu.Lock()
		f.prompts = append(f.prompts, prompt)
		h := f.handle
		f.mu.Unlock()
		if h == nil {
			h = answerFactsPerUserLine
		}
		h(w, r, prompt)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLLM) setHandler(h func(w http.ResponseWriter, r *http.Request, prompt string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handle = h
}

func (f *fakeLLM) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prompts...)
}

func reply(w http.ResponseWriter, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}},
	})
}

func replyFacts(facts ...string) func(http.ResponseWriter, *http.Request, string) {
	if facts == nil {
		facts = []string{} // {"facts": []}, not null
	}
	return func(w http.ResponseWriter, _ *http.Request, _ string) {
		b, _ := json.Marshal(map[string]any{"facts": facts})
		reply(w, string(b))
	}
}

var promptLine = regexp.MustCompile(`(?m)^\[(-?\d+)\] (user|assistant): (.*)$`)

type promptMsg struct {
	seq  int64
	who  string
	body string
}

// transcript parses the messages out of a compaction prompt.
func transcript(prompt string) []promptMsg {
	var out []promptMsg
	for _, m := range promptLine.FindAllStringSubmatch(prompt, -1) {
		seq, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, promptMsg{seq, m[2], m[3]})
	}
	return out
}

// answerFactsPerUserLine answers with one fact per user message.
func answerFactsPerUserLine(w http.ResponseWriter, r *http.Request, prompt string) {
	var facts []string
	for _, m := range transcript(prompt) {
		if m.who == "user" {
			facts = append(facts, "User said: "+m.body)
		}
	}
	b, _ := json.Marshal(map[string]any{"facts": facts})
	reply(w, string(b))
}

// env is one test's world: its database, clock, LLM and configuration.
type env struct {
	t     *testing.T
	db    *pgtest.DB
	clock *clock
	llm   *fakeLLM
	cfg   Settings
	prov  *llm.Provider
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, db: pgtest.New(t), clock: newClock(), llm: newFakeLLM(t)}
	e.cfg = Settings{
		Mode:       jobs.ModeLive,
		StaleAfter: 10 * time.Minute, MaxAttempts: 5, Lookback: 168 * time.Hour,
		BackoffInitial: time.Minute, BackoffMax: time.Hour,
		LLM: llm.Config{Endpoint: e.llm.URL + "/v1", Model: "test-model", APIKeyEnv: "TEST_LLM_KEY",
			Timeout: 5 * time.Second, MaxConcurrency: 4},
	}
	e.prov = llm.NewProvider(func(k string) string {
		if k == "TEST_LLM_KEY" {
			return secretKey
		}
		return ""
	}, nil)
	return e
}

// job returns a new Job on the env's database and clock, with its own
// metrics registry.
func (e *env) job() (*Job, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return New(jobs.Deps{DB: e.db.DB, Registry: reg, LLM: e.prov, Now: e.clock.Now}, Options{}), reg
}

// pass runs one pass with a fresh job and fails the test on error.
func (e *env) pass() *Report {
	e.t.Helper()
	j, _ := e.job()
	rep, err := j.Pass(context.Background(), e.cfg)
	if err != nil {
		e.t.Fatalf("pass: %v", err)
	}
	return rep
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.db.Exec(q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// messages inserts agent's messages with seqs lo..hi: odd seqs from the
// user, even from the assistant, bodies "<agent>-<seq> ...".
func (e *env) messages(agent string, lo, hi int64) {
	e.t.Helper()
	e.exec(`
INSERT INTO messages (agent_id, seq, direction, body)
SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'inbound' ELSE 'outbound' END, $1 || '-' || g || ' says hello'
FROM generate_series($2::bigint, $3::bigint) AS g`, agent, lo, hi)
}

// event inserts a compaction event and returns its id. age is how long
// before the database's now() it was triggered; lo/hi nil mean a NULL seq.
func (e *env) event(agent string, age time.Duration, status string, lo, hi any) int64 {
	e.t.Helper()
	var id int64
	err := e.db.Get(&id, `
INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status)
VALUES ($1, now() - make_interval(secs => $2), $3, $4, $5)
RETURNING id`, agent, age.Seconds(), lo, hi, status)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// eventRow is a compaction_events row.
type eventRow struct {
	ID            int64      `db:"id"`
	AgentID       string     `db:"agent_id"`
	TriggeredAt   time.Time  `db:"triggered_at"`
	MinSeq        *int64     `db:"min_message_seq"`
	MaxSeq        *int64     `db:"max_message_seq"`
	Status        string     `db:"status"`
	RetryCount    int        `db:"retry_count"`
	MemoryUpdated bool       `db:"memory_updated"`
	SummaryLen    *int       `db:"summary_len"`
	LastError     *string    `db:"last_error"`
	NextAttemptAt *time.Time `db:"next_attempt_at"`
	CompletedAt   *time.Time `db:"completed_at"`
}

func (e *env) row(id int64) eventRow {
	e.t.Helper()
	var r eventRow
	if err := e.db.Get(&r, `SELECT * FROM compaction_events WHERE id = $1`, id); err != nil {
		e.t.Fatal(err)
	}
	return r
}

type memoryRow struct {
	ID             string  `db:"id"`
	AgentID        string  `db:"agent_id"`
	Type           string  `db:"type"`
	Content        string  `db:"content"`
	Normalized     *string `db:"normalized_content"`
	SourceType     *string `db:"source_type"`
	SourceID       *string `db:"source_id"`
	IdempotencyKey *string `db:"idempotency_key"`
}

// memories returns the memories whose source is event id, facts first, by content.
func (e *env) memories(id int64) []memoryRow {
	e.t.Helper()
	var rows []memoryRow
	if err := e.db.Select(&rows, `
SELECT id, agent_id, type, content, normalized_content, source_type, source_id, idempotency_key
FROM memories WHERE source_id = $1 ORDER BY type, content`, strconv.FormatInt(id, 10)); err != nil {
		e.t.Fatal(err)
	}
	return rows
}

type historyRow struct {
	ID         string  `db:"id"`
	MemoryID   string  `db:"memory_id"`
	Event      string  `db:"event"`
	NewContent *string `db:"new_content"`
	ChangedBy  string  `db:"changed_by"`
	Reason     *string `db:"reason"`
	Metadata   []byte  `db:"metadata"`
	meta       map[string]any
}

// history returns the event's history rows by attempt.
func (e *env) history(id int64) []historyRow {
	e.t.Helper()
	var rows []historyRow
	if err := e.db.Select(&rows, `
SELECT id, memory_id, event, new_content, changed_by, reason, metadata
FROM memory_history WHERE metadata ->> 'event_id' = $1
ORDER BY (metadata ->> 'attempt')::int`, strconv.FormatInt(id, 10)); err != nil {
		e.t.Fatal(err)
	}
	for i := range rows {
		if err := json.Unmarshal(rows[i].Metadata, &rows[i].meta); err != nil {
			e.t.Fatal(err)
		}
	}
	return rows
}

// snapshot renders every row the job could change, to prove it did not.
func (e *env) snapshot() string {
	e.t.Helper()
	var parts []string
	for _, q := range []string{
		`SELECT coalesce(json_agg(c ORDER BY id), '[]')::text FROM compaction_events c`,
		`SELECT coalesce(json_agg(m ORDER BY id), '[]')::text FROM memories m`,
		`SELECT coalesce(json_agg(h ORDER BY id), '[]')::text FROM memory_history h`,
		`SELECT coalesce(json_agg(m ORDER BY id), '[]')::text FROM messages m`,
	} {
		var s string
		if err := e.db.Get(&s, q); err != nil {
			e.t.Fatal(err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// metric returns the value of a counter or gauge (with labels, if given as
// name{k="v"}) from reg.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	base, labels, _ := strings.Cut(name, "{")
	labels = strings.TrimSuffix(labels, "}")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != base {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, lp := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			if strings.Join(ls, ",") != labels {
				continue
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return 0
}
