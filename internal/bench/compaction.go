package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Execer is what the generators need of a database handle: *sql.DB,
// *sqlx.DB and their transactions all fit.
type Execer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// CompactionBacklog describes stale pending compaction events to insert.
type CompactionBacklog struct {
	Events           int           // how many events
	Agents           int           // spread round-robin over this many agents (default 10)
	AgentPrefix      string        // agent ids are AgentPrefix + n (default "bench-agent-")
	MessagesPerEvent int           // messages in each event's seq range (default 8), alternating user/assistant
	Age              time.Duration // how long before now() the events were triggered (default 1h: stale under the default staleAfter)
}

// insertBacklogSQL inserts the messages and the events in one set-based
// statement. Seqs start after the largest seq already in messages, so the
// generator can be called repeatedly on one database.
// $1 agent prefix, $2 agents, $3 messages per event, $4 events, $5 age in seconds.
const insertBacklogSQL = `
WITH base AS (
  SELECT coalesce(max(seq), 0) AS s FROM messages
),
msgs AS (
  INSERT INTO messages (agent_id, seq, direction, body)
  SELECT $1 || (g % $2), base.s + (g / $2) * $3 + i + 1,
         CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
         CASE WHEN i % 2 = 0 THEN 'I moved to city ' || g || ' last week and my favourite tea is number ' || i
              ELSE 'Noted: city ' || g || ', tea number ' || (i - 1) || '. Anything else?' END
  FROM base, generate_series(0, $4 - 1) AS g, generate_series(0, $3 - 1) AS i
  RETURNING 1
),
evs AS (
  INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status)
  SELECT $1 || (g % $2), now() - make_interval(secs => $5),
         base.s + (g / $2) * $3 + 1, base.s + (g / $2) * $3 + $3, 'pending'
  FROM base, generate_series(0, $4 - 1) AS g
  RETURNING id
)
SELECT coalesce(min(id), 0), coalesce(max(id), 0), (SELECT count(*) FROM msgs)
FROM evs`

// InsertCompactionBacklog inserts b.Events stale pending compaction events
// with their message ranges, and returns the first and last event id and the
// number of messages inserted. 10,000 events of 8 messages take about a
// second.
func InsertCompactionBacklog(ctx context.Context, db Execer, b CompactionBacklog) (firstID, lastID, messages int64, err error) {
	if b.Agents <= 0 {
		b.Agents = 10
	}
	if b.AgentPrefix == "" {
		b.AgentPrefix = "bench-agent-"
	}
	if b.MessagesPerEvent <= 0 {
		b.MessagesPerEvent = 8
	}
	if b.Age <= 0 {
		b.Age = time.Hour
	}
	if b.Events <= 0 {
		return 0, 0, 0, nil
	}
	err = db.QueryRowContext(ctx, insertBacklogSQL, b.AgentPrefix, b.Agents, b.MessagesPerEvent, b.Events, b.Age.Seconds()).
		Scan(&firstID, &lastID, &messages)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("bench: insert %d compaction events: %w", b.Events, err)
	}
	return firstID, lastID, messages, nil
}

var userLine = regexp.MustCompile(`(?m)^\[-?\d+\] user: (.*)$`)

// CompactionLLM is a fake OpenAI-compatible chat-completions server for
// compaction prompts: after latency (cut short if the client gives up) it
// answers POST .../chat/completions with {"facts": [...]}, one fact per user
// message of the prompt (at most 5), so every event gets valid, distinct
// facts.
func CompactionLLM(latency time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		facts := []string{}
		for _, m := range userLine.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, 5) {
			facts = append(facts, "The user said: "+m[1])
		}
		content, _ := json.Marshal(map[string]any{"facts": facts})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"object":  "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(content)}}},
		})
	})
}
