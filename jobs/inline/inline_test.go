package inline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type running struct {
	hook    *inline.Hook
	metrics *inline.Metrics
	cancel  context.CancelFunc
	done    chan struct{}
}

func startHook(t *testing.T, db *pgtest.DB, cfg *config.Config) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: log, Registry: reg})
	h := inline.New(jobs.Deps{DB: db.DB, Logger: log, Registry: reg}, engine)
	m := h.Metrics()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{hook: h, metrics: m, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = h.Run(ctx, func() inline.Settings { return settings(cfg) })
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	eventually(t, "listener connected", func() bool { return h.Ready() == nil })
	return r
}

// eventually waits for cond: at once when it holds, a minute at most (a
// deadline for a hook that never decides, generous because a loaded machine
// runs many test clusters at once; no test asserts how long it took).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out: %s", what)
}

// settings are what the hook runs under with cfg, as the daemon makes them.
func settings(cfg *config.Config) inline.Settings { return daemon.SettingsOf(cfg).Inline }

func cfgWithPoll(d time.Duration, dbURL string) *config.Config {
	c := config.Default()
	c.Maintenance.InlineHook.PollInterval = d
	c.Maintenance.Database.URL = dbURL
	return c
}

// An attribute that gets its aspect_id while the hook runs is decided at
// once: the notification wakes the hook (the poll is an hour away).
func TestClassificationIsDecidedPromptly(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "h1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "h2", Agent: "a", Content: "Lives in Winnipeg"}, // not classified yet
	)
	r := startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	eventually(t, "startup drain", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })

	start := time.Now()
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'h2'`, asp)
	eventually(t, "h1 superseded", func() bool { st, _ := s.Status("h1"); return st == "superseded" })
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
	if st, by := s.Status("h1"); by != "h2" {
		t.Fatalf("h1: %s by %q", st, by)
	}
	var changedBy string
	if err := db.Get(&changedBy, `SELECT changed_by FROM memory_history WHERE event = 'attribute_superseded'`); err != nil || changedBy != "supersessiond:inline" {
		t.Fatalf("changed_by %q %v", changedBy, err)
	}
	eventually(t, "outbox drained", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if n := testutil.CollectAndCount(r.metrics.Lag); n != 1 {
		t.Fatalf("lag histogram not exported: %d", n)
	}
}

// A late-classified OLDER attribute is superseded by its newer sibling: the
// hook decides the new attribute on both sides of its pairs.
func TestLateClassifiedOlderAttributeIsSuperseded(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "diet")
	s.Add(
		memtest.Attr{ID: "d1", Agent: "a", Content: "Is vegetarian"},
		memtest.Attr{ID: "d2", Agent: "a", Aspect: asp, Content: "Is no longer vegetarian"},
	)
	startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'd1'`, asp)
	eventually(t, "d1 superseded by d2", func() bool { st, by := s.Status("d1"); return st == "superseded" && by == "d2" })
}

// Classifications made while no hook runs are decided when it starts:
// the outbox, not the notification, is the record.
func TestNothingMissedWhileDown(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "pets")
	s.Add(
		memtest.Attr{ID: "p1", Agent: "a", Aspect: asp, Content: "Has a dog named Rex"},
		memtest.Attr{ID: "p2", Agent: "a", Content: "No longer has a dog named Rex"},
	)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'p2'`, asp)
	startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	eventually(t, "p1 superseded", func() bool { st, _ := s.Status("p1"); return st == "superseded" })
}

// The listener's connection is killed: the hook reports not-ready, reconnects
// by itself, and what was classified meanwhile is decided.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "car")
	s.Add(
		memtest.Attr{ID: "k1", Agent: "a", Aspect: asp, Content: "Drives a Honda Civic"},
		memtest.Attr{ID: "k2", Agent: "a", Content: "No longer drives a Honda Civic"},
	)
	r := startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	s.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'k2'`, asp)
	eventually(t, "k1 superseded after reconnect", func() bool { st, _ := s.Status("k1"); return st == "superseded" })
	eventually(t, "ready again", func() bool { return r.hook.Ready() == nil })
}

// Shadow mode: the hook proposes, changes nothing.
func TestShadowModeProposes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(memtest.Attr{ID: "x1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"})
	cfg := cfgWithPoll(time.Hour, db.URL)
	cfg.Memory.PipelineV2.ShadowMode = true
	startHook(t, db, cfg)
	s.Add(memtest.Attr{ID: "x2", Agent: "a", Aspect: asp, Content: "Lives in Edmonton"})
	eventually(t, "proposal", func() bool {
		return s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`) == 1
	})
	if st, _ := s.Status("x1"); st != "active" {
		t.Fatal("shadow mode must not supersede")
	}
}

// Two hooks (two daemons) and a sweep-like burst of classifications: each
// classification is decided, nothing twice.
func TestTwoHooksShareTheOutbox(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	var aspects []string
	for i := range 30 {
		asp := s.Aspect("a", "p"+string(rune('A'+i%26))+string(rune('a'+i/26)), "home")
		aspects = append(aspects, asp)
		s.Add(memtest.Attr{ID: "old" + asp, Agent: "a", Aspect: asp, Content: "Lives in Toronto"})
		s.Add(memtest.Attr{ID: "new" + asp, Agent: "a", Content: "Lives in Quebec City"})
	}
	cfg := cfgWithPoll(50*time.Millisecond, db.URL)
	startHook(t, db, cfg)
	startHook(t, db, cfg)
	var wg sync.WaitGroup
	for _, asp := range aspects {
		wg.Go(func() { s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, asp, "new"+asp) })
	}
	wg.Wait()
	eventually(t, "all decided", func() bool {
		return s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`) == 30 &&
			s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0
	})
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != 30 {
		t.Fatalf("%d history rows for 30 supersessions", n)
	}
}

// A classification whose processing keeps failing is given up after a few
// attempts instead of blocking the outbox forever.
func TestPoisonRowIsGivenUp(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Exec(`INSERT INTO supersessiond.classified (attribute_id, agent_id, aspect_id, attempts) VALUES ('ghost', 'a', 'nowhere', 99)`)
	r := startHook(t, db, cfgWithPoll(50*time.Millisecond, db.URL))
	eventually(t, "given up", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if v := testutil.ToFloat64(r.metrics.Processed.WithLabelValues("given_up")); v != 1 {
		t.Fatalf("given_up = %v", v)
	}
}

// A pair a reviewer rejected is never applied by the hook either.
func TestVetoedPairIsNotAppliedInline(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "v1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "v2", Agent: "a", Content: "Lives in Saskatoon"},
	)
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata) VALUES
		('rej', 'v1', 'supersession_proposal_rejected', 'supersessiond:cli', '{"agent_id":"a","proposal_id":"p","old_attribute_id":"v1","new_attribute_id":"v2"}')`)
	startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'v2'`, asp)
	eventually(t, "classification handled", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if st, _ := s.Status("v1"); st != "active" {
		t.Fatal("the hook applied a pair a reviewer rejected")
	}
}

// "Lives in Oslo", created in February but classified after "Lives in
// Rome" (March), must not take "Lives in Paris" (January): Rome, newer and
// active, contradicts Paris too, and the newest contradicting sibling wins.
func TestLateClassificationDoesNotStealAnOlderSiblingFromANewerOne(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	at := func(m time.Month) time.Time { return time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC) }
	s.Add(
		memtest.Attr{ID: "paris", Agent: "a", Content: "Lives in Paris", At: at(time.January)},
		memtest.Attr{ID: "oslo", Agent: "a", Content: "Lives in Oslo", At: at(time.February)},
		memtest.Attr{ID: "rome", Agent: "a", Content: "Lives in Rome", At: at(time.March)},
	)
	// Paris and Rome were classified while no daemon ran (the outbox rows
	// are dropped, as if the sweep were to find them later).
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id IN ('paris', 'rome')`, asp)
	s.Exec(`DELETE FROM supersessiond.classified`)
	startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'oslo'`, asp)
	eventually(t, "oslo superseded", func() bool { st, _ := s.Status("oslo"); return st == "superseded" })
	if st, by := s.Status("paris"); st != "superseded" || by != "rome" {
		t.Fatalf("paris is %s by %q, want superseded by rome (the newest contradicting sibling)", st, by)
	}
	if _, by := s.Status("oslo"); by != "rome" {
		t.Fatalf("oslo superseded by %q, want rome", by)
	}
}

// A row the driver cannot read, next to classifications of other agents,
// is skipped: the other classifications are decided, the batch is not
// retried until given up, and the hook stays ready.
func TestUnreadableRowDoesNotFailTheBatch(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	bad := s.Aspect("bad", "Ana", "home")
	good := s.Aspect("good", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "bad-1", Agent: "bad", Aspect: bad, Content: "Lives in Lima"},
		memtest.Attr{ID: "bad-inf", Agent: "bad", Content: "Lives in Oslo"},
		memtest.Attr{ID: "good-1", Agent: "good", Aspect: good, Content: "Lives in Toronto"},
		memtest.Attr{ID: "good-2", Agent: "good", Content: "Lives in Vancouver"},
	)
	s.Exec(`UPDATE entity_attributes SET created_at = 'infinity' WHERE id = 'bad-inf'`)
	s.Exec(`DELETE FROM supersessiond.classified`)
	r := startHook(t, db, cfgWithPoll(50*time.Millisecond, db.URL))
	s.Exec(`UPDATE entity_attributes SET aspect_id = CASE agent_id WHEN 'bad' THEN $1 ELSE $2 END WHERE id IN ('bad-inf', 'good-2')`, bad, good)
	eventually(t, "good-1 superseded", func() bool { st, _ := s.Status("good-1"); return st == "superseded" })
	eventually(t, "outbox drained", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if v := testutil.ToFloat64(r.metrics.Processed.WithLabelValues("given_up")); v != 0 {
		t.Fatalf("%v classifications given up", v)
	}
	if err := r.hook.Ready(); err != nil {
		t.Fatalf("hook not ready: %v", err)
	}
}

// Two daemons drain one outbox while the LLM takes longer than a claim
// lasts: the batch never waits for the LLM (its window goes to the
// background asker) and the window's claim keeps the other daemon from
// asking it again, so the LLM is asked once.
func TestSlowLLMBatchIsNotTakenOver(t *testing.T) {
	t.Parallel()
	url, asked := fakeLLM(t, func() <-chan struct{} { // well past the claim below
		answer := make(chan struct{})
		time.AfterFunc(7*time.Second, func() { close(answer) })
		return answer
	})
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "project")
	s.Add(
		memtest.Attr{ID: "s1", Agent: "a", Aspect: asp, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Content: "The billing service keeps invoices inside DynamoDB tables"},
	)
	cfg := withLLM(cfgWithPoll(100*time.Millisecond, db.URL), url, 10*time.Second)
	for range 2 {
		// Renewed every second: a slow machine must miss three renewals in
		// a row (with a 2 s claim, a box loaded by a parallel build once did).
		runLLMHook(t, db, cfg, 3*time.Second)
	}
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 's2'`, asp)
	eventually(t, "classification decided", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'answered'`) == 1 &&
			s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0
	})
	time.Sleep(3 * time.Second) // a second daemon that took over would be asking now
	if n := asked.Load(); n != 1 {
		t.Fatalf("the LLM was asked %d times about one pair", n)
	}
}

// fakeLLM is an OpenAI-compatible endpoint that answers every question
// "compatible" once the channel wait returns for it is closed (or the
// request ends), and counts the questions. It lives as long as the test.
func fakeLLM(t *testing.T, wait func() <-chan struct{}) (url string, asked *atomic.Int32) {
	asked = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-r.Context().Done():
			return
		case <-wait():
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": `{"reasoning": "compatible", "retired": []}`}}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", asked
}

// withLLM turns the semantic fallback on, asking the LLM at url.
func withLLM(cfg *config.Config, url string, timeout time.Duration) *config.Config {
	cfg.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
	cfg.Maintenance.LLM.Endpoint, cfg.Maintenance.LLM.Model = url, "m"
	cfg.Maintenance.LLM.Timeout = timeout
	return cfg
}

// runLLMHook runs, until the test ends, a hook whose engine asks the LLM
// cfg names, its claims lasting claimFor.
func runLLMHook(t *testing.T, db *pgtest.DB, cfg *config.Config, claimFor time.Duration) *inline.Hook {
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: log, Registry: reg, LLM: llm.NewProvider(func(string) string { return "" }, nil)})
	h := inline.New(jobs.Deps{DB: db.DB, Logger: log, Registry: reg}, engine)
	h.ClaimFor = claimFor
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx, func() inline.Settings { return settings(cfg) }) }()
	t.Cleanup(func() { cancel(); <-done; engine.WaitAsked() })
	return h
}

// A slow LLM never holds up the hook (SPEC §13): a batch hands its window
// to the background asker and is done, its classification consumed while
// the LLM is still answering; a classification made meanwhile in another
// aspect is decided too.
func TestSlowLLMNeverHoldsUpTheHook(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release) // the waiting request ends with the test
	url, asked := fakeLLM(t, func() <-chan struct{} { return release })
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	slow, home := s.Aspect("a", "Sam", "project"), s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "s1", Agent: "a", Aspect: slow, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Content: "The billing service keeps invoices inside DynamoDB tables"},
		memtest.Attr{ID: "h1", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "h2", Agent: "a", Content: "Lives in Winnipeg"},
	)
	h := runLLMHook(t, db, withLLM(cfgWithPoll(time.Hour, db.URL), url, time.Minute), time.Minute)
	eventually(t, "listener connected", func() bool { return h.Ready() == nil })

	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 's2'`, slow)
	eventually(t, "the LLM asked", func() bool { return asked.Load() == 1 })
	eventually(t, "s2's classification consumed while the LLM answers", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.classified WHERE attribute_id = 's2'`) == 0
	})
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'h2'`, home)
	eventually(t, "h1 superseded while the LLM answers", func() bool { st, _ := s.Status("h1"); return st == "superseded" })
	if n := s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state = 'claimed'`); n != 1 {
		t.Fatalf("%d windows claimed, want the one the LLM is still answering", n)
	}
}

// A hook whose drains keep failing is not ready, whatever its listener says.
func TestFailingDrainsMakeTheHookNotReady(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	r := startHook(t, db, cfgWithPoll(50*time.Millisecond, db.URL))
	s.Exec(`ALTER TABLE supersessiond.classified RENAME TO classified_gone`)
	eventually(t, "not ready", func() bool { err := r.hook.Ready(); return err != nil })
	if err := r.hook.Ready(); !strings.Contains(err.Error(), "drain failed") {
		t.Fatalf("Ready() = %v", err)
	}
	s.Exec(`ALTER TABLE supersessiond.classified_gone RENAME TO classified`)
	eventually(t, "ready again", func() bool { return r.hook.Ready() == nil })
}

// largeAspect seeds agent a's aspect with 40 compatible siblings: enough
// for a key digest.
func largeAspect(t *testing.T) (db *pgtest.DB, s *memtest.Seeder, cfg *config.Config, asp string) {
	db = pgtest.New(t)
	s = memtest.New(t, db.DB)
	cfg = cfgWithPoll(time.Hour, db.URL)
	asp = s.Aspect("a", "Sam", "life")
	likes := strings.Fields(`apples pears plums figs dates limes kiwis mangos melons grapes olives lemons
		cherries peaches apricots guavas papayas quinces lychees berries raisins prunes almonds cashews
		pecans walnuts peanuts hazelnuts pistachios chestnuts coconuts oranges bananas`)
	for i := range 40 {
		s.Add(memtest.Attr{ID: fmt.Sprintf("f%d", i), Agent: "a", Aspect: asp, Content: "Likes " + likes[i%len(likes)]})
	}
	return db, s, cfg, asp
}

// fullPass does what a full sweep leaves behind for the aspect: its pairs
// decided, its key digest stored, its change records and outbox rows gone.
func fullPass(t *testing.T, db *pgtest.DB, cfg *config.Config, agent, aspect string) {
	t.Helper()
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	groups, err := engine.LoadAspects(t.Context(), []string{agent}, []string{aspect})
	if err != nil {
		t.Fatal(err)
	}
	pass := supersession.Pass{Actor: supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system"}, Source: "sweep", Digests: true}
	if _, err := engine.Process(t.Context(), settings(cfg).Engine, groups, pass); err != nil {
		t.Fatal(err)
	}
	if err := engine.StoreKeys(t.Context(), db.DB, supersession.Fragments(groups), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM supersessiond.changes; DELETE FROM supersessiond.classified`); err != nil {
		t.Fatal(err)
	}
}

// With a key digest, a batch loads only what its classifications can meet,
// and that includes a sibling whose change the digest has not seen yet (its
// change record names it): here "Likes jazz" became "Lives in Bergen" after
// the digest was made. The batch then adds the keys of what it decided and
// consumes those change records.
func TestNarrowedBatchFindsASiblingChangedSinceItsDigest(t *testing.T) {
	t.Parallel()
	db, s, cfg, asp := largeAspect(t)
	s.Add(
		memtest.Attr{ID: "e1", Agent: "a", Aspect: asp, Content: "Likes jazz"},
		memtest.Attr{ID: "n1", Agent: "a", Content: "Lives in Lisbon"},
	)
	fullPass(t, db, cfg, "a", asp)
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp); n != 1 {
		t.Fatalf("%d digest fragments after the full pass, want 1", n)
	}
	s.Exec(`UPDATE entity_attributes SET content = 'Lives in Bergen' WHERE id = 'e1'`)

	startHook(t, db, cfg)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'n1'`, asp)
	eventually(t, "e1 superseded by n1", func() bool { st, by := s.Status("e1"); return st == "superseded" && by == "n1" })
	eventually(t, "outbox drained", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp); n != 2 {
		t.Fatalf("%d digest fragments, want 2 (the full pass's and the batch's)", n)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id IN ('e1', 'n1')`); n != 0 {
		t.Fatalf("%d change records of the decided attributes left", n)
	}
	for _, id := range []string{"f0", "f39"} {
		if st, _ := s.Status(id); st != "active" {
			t.Fatalf("%s: %s", id, st)
		}
	}
}

// An aspect without a digest is read whole, and the batch stores its
// complete digest; the next batch in that aspect is narrowed by it and
// decides as a whole read would.
func TestWholeReadAspectGetsADigestTheNextBatchUses(t *testing.T) {
	t.Parallel()
	db, s, cfg, asp := largeAspect(t)
	s.Add(
		memtest.Attr{ID: "o1", Agent: "a", Aspect: asp, Content: "Lives in Oslo"},
		memtest.Attr{ID: "n1", Agent: "a", Content: "Works at Figma"},
		memtest.Attr{ID: "n2", Agent: "a", Content: "Lives in Lisbon"},
	)
	if _, err := db.Exec(`DELETE FROM supersessiond.changes; DELETE FROM supersessiond.classified`); err != nil {
		t.Fatal(err)
	}
	startHook(t, db, cfg)
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'n1'`, asp)
	eventually(t, "n1 handled", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	eventually(t, "a complete digest stored", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp) == 1
	})
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'n2'`, asp)
	eventually(t, "o1 superseded by n2", func() bool { st, by := s.Status("o1"); return st == "superseded" && by == "n2" })
	eventually(t, "the second batch's keys added", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp) == 2
	})
	if st, _ := s.Status("n1"); st != "active" {
		t.Fatalf("n1: %s", st)
	}
}
