package faults_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// The daemon, its inline hook and its sweep asking the scripted LLM: while
// the LLM holds each request, pg_stat_activity shows no session of the
// daemon idle in a transaction (no LLM request inside a transaction, SPEC
// §5), each window is asked once, and the LLM's answer retires what only
// it can read (a pair sharing no word).
func TestNoTransactionIsOpenWhileTheLLMAnswers(t *testing.T) {
	t.Parallel()
	truth, err := llmtest.TruthFromAspects(strings.NewReader(`{"aspect_id":"t","entity":"Sam","aspect":"transport","statements":[` +
		`{"id":"t1","text":"Drives a 2011 Corolla"},{"id":"t2","text":"Bikes everywhere these days"}],"supersedes":[["t1","t2"]]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, truth)
	srv.Set(llmtest.Fault{Kind: llmtest.Slow, Delay: 300 * time.Millisecond})
	db := pgtest.New(t)
	var mu sync.Mutex
	var open []string
	checked := 0
	srv.OnRequest(func(string) {
		var rows []string
		err := db.Select(&rows, `SELECT application_name || ' ' || state || ': ' || left(query, 120) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name LIKE 'supersessiond%' AND state LIKE 'idle in transaction%'`)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rows = append(rows, err.Error())
		}
		open = append(open, rows...)
		checked++
	})
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "transport")
	s.Add(memtest.Attr{ID: "t1", Agent: "a", Aspect: asp, Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: "t2", Agent: "a", Content: "Bikes everywhere these days"})
	cfg := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n" +
		"  llm:\n    endpoint: " + srv.Endpoint() + "\n    model: scripted\n" +
		"memory:\n  pipelineV2:\n    structural:\n      supersessionSemanticFallback: true\n"
	p := start(t, db.URL, cfg)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 't2'`, asp) // the hook's classification
	eventually(t, 60*time.Second, "t1 retired by the LLM's answer", func() bool { st, by := s.Status("t1"); return st == "superseded" && by == "t2" }, p)
	p.stop()
	mu.Lock()
	defer mu.Unlock()
	if checked == 0 || len(open) > 0 {
		t.Fatalf("%d requests checked; sessions idle in a transaction while the LLM answered: %v", checked, open)
	}
	if srv.MaxPerWindow() != 1 {
		t.Fatalf("a window was asked %d times", srv.MaxPerWindow())
	}
}
