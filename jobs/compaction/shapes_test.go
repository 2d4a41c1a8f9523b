package compaction

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// clawbolt declares summary_len NOT NULL: an event with no seq range must
// still end failed, in one pass, its summary_len kept (not NULLed), and
// retry_count never climbs past maxAttempts however often it is claimed.
func TestSummaryLenNotNullAndRetryCountCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exec(`UPDATE compaction_events SET summary_len = 0 WHERE summary_len IS NULL`)
	e.exec(`ALTER TABLE compaction_events ALTER COLUMN summary_len SET DEFAULT 0`)
	e.exec(`ALTER TABLE compaction_events ALTER COLUMN summary_len SET NOT NULL`)
	noRange := e.event("a", stale, "pending", nil, nil)
	atMax := e.event("a", 2*stale, "pending", int64(1), int64(4))
	e.messages("a", 1, 4)
	e.exec(`UPDATE compaction_events SET retry_count = $2 WHERE id = $1`, atMax, e.cfg.MaxAttempts)
	e.llm.setHandler(func(w http.ResponseWriter, r *http.Request, prompt string) {
		http.Error(w, "down", http.StatusBadGateway)
	})

	j, _ := e.job()
	if _, err := j.Pass(context.Background(), e.cfg); err != nil {
		t.Fatalf("a NOT NULL summary_len must not fail the pass: %v", err)
	}
	if r := e.row(noRange); r.Status != "failed" || r.SummaryLen == nil || *r.SummaryLen != 0 {
		t.Fatalf("the event without a range: %+v", r)
	}
	r := e.row(atMax)
	if r.Status != "failed" || r.RetryCount != e.cfg.MaxAttempts {
		t.Fatalf("the event at maxAttempts: status %s, retry_count %d (max %d)", r.Status, r.RetryCount, e.cfg.MaxAttempts)
	}
}

// A stack whose idempotency key is unique only through a partial index (or
// not at all) still gets each fact once, however often an event is retried.
func TestFactsLandOnceWithAPartialUniqueIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exec(`ALTER TABLE memories DROP CONSTRAINT memories_idempotency_key_key`)
	e.exec(`CREATE UNIQUE INDEX stack_idem ON memories (idempotency_key) WHERE idempotency_key IS NOT NULL`)
	e.messages("a", 1, 4)
	id := e.event("a", stale, "pending", int64(1), int64(4))
	e.llm.setHandler(replyFacts("Lives in Lisbon", "Has a cat named Miso", "lives in   LISBON"))
	e.pass()
	e.exec(`UPDATE compaction_events SET status = 'pending', next_attempt_at = NULL WHERE id = $1`, id)
	e.pass()
	if mems := e.memories(id); len(mems) != 2 {
		t.Fatalf("%d facts stored, want 2 (each once): %+v", len(mems), mems)
	}
}

// Messages encrypted at rest (clawbolt's clw1 envelopes, Fernet tokens) are
// never sent to the LLM nor quoted in a summary.
func TestCiphertextNeverReachesTheLLMOrASummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exec(`INSERT INTO messages (agent_id, seq, direction, body) VALUES
		('a', 1, 'inbound', 'clw1.local.c2VjcmV0LWtleQ.gAAAAABmAAAAAAAAAAAAAAAAAAAA'),
		('a', 2, 'outbound', 'gAAAAABmBBBBBBBBBBBBBBBBBBBBBBBBB'),
		('a', 3, 'inbound', 'I moved to Porto last week'),
		('b', 1, 'inbound', 'clw1.local.b3RoZXI.gAAAAABmCCCC'),
		('b', 2, 'outbound', 'clw1.local.b3RoZXI.gAAAAABmDDDD')`)
	mixed := e.event("a", stale, "pending", int64(1), int64(3))
	sealed := e.event("b", stale, "pending", int64(1), int64(2))
	e.llm.setHandler(replyFacts("Lives in Porto"))
	e.pass()
	for _, p := range e.llm.received() {
		if strings.Contains(p, "clw1.") || strings.Contains(p, "gAAAAA") {
			t.Fatalf("ciphertext sent to the LLM:\n%s", p)
		}
	}
	if r := e.row(mixed); r.Status != "completed" {
		t.Fatalf("the event with a readable message: %+v", r)
	}
	r := e.row(sealed)
	if r.Status != "failed" || r.LastError == nil || !strings.Contains(*r.LastError, "encrypted at rest") {
		t.Fatalf("the event whose messages are all encrypted: %+v", r)
	}
	for _, m := range e.memories(sealed) {
		if strings.Contains(m.Content, "clw1.") || strings.Contains(m.Content, "gAAAAA") {
			t.Fatalf("ciphertext in a summary: %q", m.Content)
		}
	}
	if d := (digest{MinSeq: 1, MaxSeq: 3, Total: 3, Inbound: 2, Outbound: 1,
		User: []string{"clw1.local.x.gAAAAABm", "I moved to Porto"}, Assistant: []string{"gAAAAABmZZZZ"}}); strings.Contains(summarize(d), "gAAAAA") {
		t.Fatalf("the deterministic summary quotes ciphertext: %s", summarize(d))
	}
}
