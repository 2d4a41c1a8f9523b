package sweep_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// An LLM endpoint with credentials in its URL, and a server that echoes the
// request's Authorization header in its error: the semantic path's log
// lines carry neither.
func TestSemanticFailuresLogNoCredentials(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied for "+r.Header.Get("Authorization")+" at "+r.URL.String(), http.StatusUnauthorized)
	}))
	defer srv.Close()
	db := pgtest.New(t)
	seedSemantic(memtest.New(t, db.DB))
	endpoint := strings.Replace(srv.URL, "http://", "http://ops:Hunter2secret@", 1)
	cfg := semanticCfg(endpoint)
	cfg.Maintenance.LLM.APIKeyEnv = "TEST_KEY"
	var logs proctest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	llms := llm.NewProvider(func(k string) string {
		if k == "TEST_KEY" {
			return "sk-Apikey2secret"
		}
		return ""
	}, nil)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: log, Registry: prometheus.NewRegistry(), LLM: llms})
	r, err := sweep.New(jobs.Deps{DB: db.DB, Logger: log}, engine).Once(context.Background(), settings(cfg), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.SemanticFailures != 1 {
		t.Fatalf("the LLM call should have failed: %+v", r)
	}
	out := logs.String()
	if !strings.Contains(out, "semantic contradiction check failed") {
		t.Fatalf("the failure was not logged:\n%s", out)
	}
	for _, secret := range []string{"Hunter2secret", "Apikey2secret"} {
		if strings.Contains(out, secret) {
			t.Fatalf("log leaks %q:\n%s", secret, out)
		}
	}
}

// Each window's answer is stored the moment it arrives, not after the
// whole batch: a daemon that takes a slow batch over finds the answers
// already given.
func TestVerdictsAreCachedAsTheyArrive(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	asked := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		slow := strings.Contains(string(body), "Lisbon")
		mu.Lock()
		asked[map[bool]string{true: "slow", false: "fast"}[slow]] = true
		mu.Unlock()
		if slow {
			<-release
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": windowReply("compatible")}}}})
	}))
	defer srv.Close()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedSemantic(s)
	trip := s.Aspect("a", "Sam", "trip")
	s.Add(
		memtest.Attr{ID: "t1", Agent: "a", Aspect: trip, Content: "The spring conference trip goes through Lisbon airport"},
		memtest.Attr{ID: "t2", Agent: "a", Aspect: trip, Content: "The spring conference trip leaves from Lisbon harbour"},
	)
	cfg := semanticCfg(srv.URL)
	done := make(chan error, 1)
	go func() {
		_, err := newJob(db.DB, llm.NewProvider(func(string) string { return "" }, nil)).Once(context.Background(), settings(cfg), sweep.Options{})
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`) == 0 {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("the fast verdict was not cached while the slow one was still out")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`); n != 2 {
		t.Fatalf("%d windows answered, want 2", n)
	}
}

// An attribute of agent b filed under an aspect of agent a: a's aspect name
// never reaches a prompt about b's attributes (no statement reads another
// agent's rows), and the rows are skipped as having no aspect of their own.
func TestAnotherAgentsAspectNameNeverReachesThePrompt(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		prompts = append(prompts, string(body))
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": windowReply("no")}}}})
	}))
	defer srv.Close()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	secret := s.Aspect("a", "Sam", "confidential-merger-plans")
	s.Add(
		memtest.Attr{ID: "b1", Agent: "b", Aspect: secret, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "b2", Agent: "b", Aspect: secret, Content: "The billing service keeps invoices inside DynamoDB tables"},
	)
	r, err := newJob(db.DB, llm.NewProvider(func(string) string { return "" }, nil)).Once(context.Background(), settings(semanticCfg(srv.URL)), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		if strings.Contains(p, "confidential-merger-plans") {
			t.Fatalf("agent a's aspect name reached a prompt about agent b:\n%s", p)
		}
	}
	if r.Skips[supersession.SkipDanglingAspect] != 2 {
		t.Fatalf("skips = %v, want b's two rows skipped as %s", r.Skips, supersession.SkipDanglingAspect)
	}
}
