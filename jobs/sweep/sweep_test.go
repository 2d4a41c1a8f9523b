package sweep_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.DiscardHandler)

func newJob(db *sqlx.DB, llms *llm.Provider) *sweep.Job {
	deps := jobs.Deps{DB: db, Logger: quiet, LLM: llms}
	engine := supersession.New(deps)
	sw := sweep.New(deps, engine)
	sw.PruneOutbox = inline.New(deps, engine).Prune
	return sw
}

func live() *config.Config { return config.Default() }

// settings are what a run decides under with cfg, as the daemon makes them.
func settings(cfg *config.Config) sweep.Settings { return daemon.SettingsOf(cfg).Sweep }

func shadow() *config.Config {
	c := config.Default()
	c.Memory.PipelineV2.ShadowMode = true
	return c
}

// seedHome builds agent a's "home" aspect with a real contradiction chain,
// a compatible attribute, a constraint and a protected attribute, plus
// agent b's rows, one of them pointing at a's aspect.
func seedHome(s *memtest.Seeder) (aspect string) {
	aspect = s.Aspect("a", "Sam", "home")
	other := s.Aspect("b", "Kim", "home")
	s.Add(
		memtest.Attr{ID: "a1", Agent: "a", Aspect: aspect, Content: "Lives in Toronto", MemoryID: "mem-a1"},
		memtest.Attr{ID: "a2", Agent: "a", Aspect: aspect, Content: "Has a balcony garden"},
		memtest.Attr{ID: "a3", Agent: "a", Aspect: aspect, Kind: "constraint", Content: "Never share the home address"},
		memtest.Attr{ID: "a4", Agent: "a", Aspect: aspect, Content: "Lives in Vancouver"},
		memtest.Attr{ID: "b1", Agent: "b", Aspect: other, Content: "Lives in Lisbon"},
		memtest.Attr{ID: "b2", Agent: "b", Aspect: other, Content: "Lives in Porto"},
		// Another agent's row pointing at a's aspect: never a sibling of a's rows.
		memtest.Attr{ID: "b3", Agent: "b", Aspect: aspect, Content: "Lives in Berlin"},
	)
	return aspect
}

func TestShadowSweepProposesAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	job := newJob(db.DB, nil)

	r, err := job.Once(ctx, settings(shadow()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ProposalsShadow != 2 || r.Supersessions != 0 || r.Mode != "shadow" || !r.Complete {
		t.Fatalf("want 2 shadow proposals (a1→a4, b1→b2): %+v", r)
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status <> 'active'`); n != 0 {
		t.Fatalf("shadow mode changed %d attributes", n)
	}
	var meta map[string]any
	var raw []byte
	if err := db.Get(&raw, `SELECT metadata FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'old_attribute_id' = 'a1'`); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &meta)
	for _, k := range []string{"agent_id", "old_attribute_id", "new_attribute_id", "aspect_id", "method", "confidence", "signals", "reasoning", "mode"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("proposal metadata lacks %s: %s", k, raw)
		}
	}
	if meta["new_attribute_id"] != "a4" || meta["mode"] != "shadow" || meta["method"] != "heuristic" || meta["agent_id"] != "a" {
		t.Fatalf("proposal metadata: %s", raw)
	}
	var memID, changedBy string
	if err := db.QueryRow(`SELECT memory_id, changed_by FROM memory_history WHERE metadata->>'old_attribute_id' = 'a1'`).Scan(&memID, &changedBy); err != nil {
		t.Fatal(err)
	}
	if memID != "mem-a1" || changedBy != "supersessiond:sweep" {
		t.Fatalf("memory_id %q changed_by %q", memID, changedBy)
	}

	r2, err := job.Once(ctx, settings(shadow()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.ProposalsShadow != 0 || s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`) != 2 {
		t.Fatalf("second shadow sweep must not duplicate proposals: %+v", r2)
	}
}

func TestLiveSweepSupersedesExactlyTheContradicted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	job := newJob(db.DB, nil)

	r, err := job.Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 2 {
		t.Fatalf("want 2 supersessions: %+v", r)
	}
	want := map[string][2]string{
		"a1": {"superseded", "a4"}, "a2": {"active", ""}, "a3": {"active", ""}, "a4": {"active", ""},
		"b1": {"superseded", "b2"}, "b2": {"active", ""}, "b3": {"active", ""},
	}
	for id, w := range want {
		if st, by := s.Status(id); st != w[0] || by != w[1] {
			t.Errorf("%s: status %s superseded_by %q, want %v", id, st, by, w)
		}
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded' AND superseded_at IS NULL`); n != 0 {
		t.Fatal("superseded_at must be set")
	}
	var raw []byte
	if err := db.Get(&raw, `SELECT metadata FROM memory_history WHERE event = 'attribute_superseded' AND metadata->>'old_attribute_id' = 'a1'`); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Undo struct {
			Status       string  `json:"status"`
			SupersededBy *string `json:"superseded_by"`
			UpdatedAt    string  `json:"updated_at"`
		} `json:"undo"`
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(raw, &meta)
	if meta.Undo.Status != "active" || meta.Undo.SupersededBy != nil || meta.Undo.UpdatedAt == "" || meta.Mode != "live" {
		t.Fatalf("undo snapshot: %s", raw)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != 2 {
		t.Fatalf("want one attribute_superseded row per supersession, got %d", n)
	}

	r2, err := job.Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Supersessions != 0 || s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`) != 2 {
		t.Fatalf("second live sweep must change nothing: %+v", r2)
	}
}

func TestNewestContradictingSiblingWinsAndProtectedAreNeverSuperseded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "work")
	s.Add(
		memtest.Attr{ID: "w1", Agent: "a", Aspect: asp, Content: "Works at Shopify"},
		memtest.Attr{ID: "w2", Agent: "a", Aspect: asp, Content: "Works at Stripe", Protected: true},
		memtest.Attr{ID: "w3", Agent: "a", Aspect: asp, Content: "Works at Figma"},
	)
	if _, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, by := s.Status("w1"); st != "superseded" || by != "w3" {
		t.Fatalf("w1 must be superseded by the newest contradicting sibling w3, got %s %q", st, by)
	}
	if st, _ := s.Status("w2"); st != "active" {
		t.Fatal("a protected attribute is never superseded")
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != 1 {
		t.Fatalf("each old attribute superseded at most once: %d rows", n)
	}
}

func TestReviewBandAlwaysProposes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	cfg := live()
	// Nothing reaches 0.99: the contradictions fall in the review band.
	cfg.Memory.PipelineV2.Structural.SupersessionMinConfidence = 0.99
	cfg.Memory.PipelineV2.Structural.SupersessionReviewConfidence = 0.5
	r, err := newJob(db.DB, nil).Once(ctx, settings(cfg), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 0 || r.ProposalsReview != 2 {
		t.Fatalf("want 2 review proposals and no supersession: %+v", r)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'mode' = 'review'`); n != 2 {
		t.Fatalf("review proposals: %d", n)
	}
}

func TestRejectedAndUndonePairsAreNeverAppliedAutomatically(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata) VALUES
		('r1', 'a1', 'supersession_proposal_rejected', 'supersessiond:cli', '{"agent_id":"a","proposal_id":"p","old_attribute_id":"a1","new_attribute_id":"a4"}'),
		('u1', 'b1', 'supersession_reverted', 'supersessiond:cli', '{"agent_id":"b","reverted_history_id":"h","old_attribute_id":"b1","new_attribute_id":"b2"}')`)
	r, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 0 || r.Skips[supersession.SkipVetoed] != 2 {
		t.Fatalf("vetoed pairs applied: %+v", r)
	}
}

func TestSweepOneAgentOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s)
	r, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{Agent: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 1 {
		t.Fatalf("agent b only: %+v", r)
	}
	if st, _ := s.Status("a1"); st != "active" {
		t.Fatal("agent a must be untouched")
	}
}

// Batch boundaries and the budget: tiny batches over many aspects, one
// batch per scheduled run, resumed from the stored cursor, end in the same
// state as one full pass.
func TestResumesFromCursorAcrossRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Moves("a", "p", 7, "Toronto", "Halifax")
	job := newJob(db.DB, nil)
	job.BatchAspects = 2
	job.Budget = time.Nanosecond
	runs := 0
	for {
		runs++
		rep, err := job.Run(ctx, settings(live()))
		if err != nil {
			t.Fatal(err)
		}
		r := rep.(*sweep.Report)
		if r.Batches > 1 {
			t.Fatalf("run %d did %d batches; the budget allows one", runs, r.Batches)
		}
		if r.Resumed != (runs > 1) {
			t.Fatalf("run %d: resumed=%v", runs, r.Resumed)
		}
		if r.Complete {
			break
		}
		if runs > 10 {
			t.Fatal("sweep never completes")
		}
	}
	// 7 aspects in batches of 2: four runs of one batch, and a fifth that
	// finds the end of the pass.
	if runs != 5 {
		t.Fatalf("took %d runs", runs)
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); n != 7 {
		t.Fatalf("%d superseded, want 7", n)
	}
	// The cursor was reset: the next run starts a new pass.
	rep, err := job.Run(ctx, settings(live()))
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.(*sweep.Report); r.Resumed || r.Supersessions != 0 {
		t.Fatalf("new pass: %+v", r)
	}
}

// Signet saw 1,197 siblings in one aspect: thousands must work, in one batch.
func TestAspectWithThousandsOfSiblings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "interests")
	s.Exec(`INSERT INTO entity_attributes (id, aspect_id, agent_id, kind, content, normalized_content, created_at)
		SELECT 'i' || g, $1, 'a', 'attribute', 'Enjoys hobby number ' || g, 'enjoys hobby number ' || g,
		       $2::timestamptz + g * interval '1 hour'
		FROM generate_series(1, 2000) g`, asp, memtest.Base)
	s.Add(
		memtest.Attr{ID: "loc1", Agent: "a", Aspect: asp, Content: "Lives in Toronto", At: memtest.Base.Add(-time.Hour)},
		memtest.Attr{ID: "loc2", Agent: "a", Aspect: asp, Content: "Lives in Calgary", At: memtest.Base.Add(3000 * time.Hour)},
	)
	r, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two million pairs, yet only those whose blocking keys meet are
	// decided: the hobbies cannot contradict each other.
	if r.Attributes != 2002 || r.Pairs > 2002 {
		t.Fatalf("the big aspect must be swept without comparing every pair: %+v", r)
	}
	if st, by := s.Status("loc1"); st != "superseded" || by != "loc2" {
		t.Fatalf("loc1: %s %q", st, by)
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); n != 1 {
		t.Fatalf("%d superseded: the hobbies do not contradict each other", n)
	}
}

// Malformed rows are skipped with a reason, counted, and never crash a run.
func TestMalformedRowsAreSkippedWithReasons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	// An agent database without the reference schema's guard rails.
	s.Exec(`ALTER TABLE entity_attributes DROP CONSTRAINT entity_attributes_kind_check`)
	s.Exec(`ALTER TABLE entity_attributes ALTER COLUMN content DROP NOT NULL`)
	s.Exec(`ALTER TABLE entity_attributes DROP CONSTRAINT entity_attributes_aspect_id_fkey`)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "m1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "m2", Agent: "a", Aspect: asp, Content: ""},
		memtest.Attr{ID: "m3", Agent: "a", Aspect: asp, Kind: "preference", Content: "Lives in Paris"},
		memtest.Attr{ID: "m4", Agent: "a", Aspect: asp, Content: strings.Repeat("Lives in a very long sentence ", 35000)},
		memtest.Attr{ID: "m5", Agent: "a", Aspect: asp, Content: "Lives in Montreal"},
		memtest.Attr{ID: "d1", Agent: "a", Aspect: "no-such-aspect", Content: "Lives in Oslo"},
		memtest.Attr{ID: "d2", Agent: "a", Aspect: "no-such-aspect", Content: "Lives in Bergen"},
	)
	s.Exec(`INSERT INTO entity_attributes (id, aspect_id, agent_id, kind, content, normalized_content, created_at)
		VALUES ('m6', $1, 'a', 'attribute', NULL, '', $2)`, asp, memtest.Base.Add(100*time.Hour))
	r, err := newJob(db.DB, nil).Once(ctx, settings(live()), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Skips[supersession.SkipEmptyContent] != 2 || r.Skips[supersession.SkipUnknownKind] != 1 || r.Skips[supersession.SkipDanglingAspect] != 2 {
		t.Fatalf("skips: %v", r.Skips)
	}
	if st, by := s.Status("m1"); st != "superseded" || by != "m5" {
		t.Fatalf("the well-formed pair is still decided: m1 %s %q", st, by)
	}
	for _, id := range []string{"m2", "m3", "m6", "d1", "d2"} {
		if st, _ := s.Status(id); st != "active" {
			t.Errorf("%s must be untouched, is %s", id, st)
		}
	}
}

func semanticCfg(url string) *config.Config {
	c := live()
	c.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
	c.Maintenance.LLM.Endpoint = url + "/v1"
	c.Maintenance.LLM.Model = "test-model"
	return c
}

// windowReply is an LLM's answer to a window (SPEC §13): the reasoning,
// then the (older, newer) pairs retired, by the window's numbers.
func windowReply(reasoning string, retired ...[2]int) string {
	type r struct {
		Older      int     `json:"older"`
		Newer      int     `json:"newer"`
		Confidence float64 `json:"confidence"`
	}
	reply := struct {
		Reasoning string `json:"reasoning"`
		Retired   []r    `json:"retired"`
	}{Reasoning: reasoning, Retired: []r{}}
	for _, p := range retired {
		reply.Retired = append(reply.Retired, r{p[0], p[1], 0.9})
	}
	b, _ := json.Marshal(reply)
	return string(b)
}

func seedSemantic(s *memtest.Seeder) {
	asp := s.Aspect("a", "Sam", "project")
	s.Add(
		memtest.Attr{ID: "s1", Agent: "a", Aspect: asp, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Aspect: asp, Content: "The billing service keeps invoices inside DynamoDB tables"},
	)
}

func TestSemanticFallbackAsksOnceAndCaches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": windowReply("the invoices moved to another database", [2]int{1, 2})}}}})
	}))
	defer srv.Close()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedSemantic(s)
	cfg := semanticCfg(srv.URL)
	cfg.Memory.PipelineV2.ShadowMode = true
	llms := llm.NewProvider(func(string) string { return "" }, nil)

	r, err := newJob(db.DB, llms).Once(ctx, settings(cfg), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 1 || r.SemanticAsked != 1 || r.ProposalsShadow != 1 {
		t.Fatalf("asked %d: %+v", asked.Load(), r)
	}
	var method string
	if err := db.Get(&method, `SELECT metadata->>'method' FROM memory_history WHERE event = 'supersession_proposal'`); err != nil || method != "semantic" {
		t.Fatalf("method %q %v", method, err)
	}
	// Live now: the cached verdict decides, the LLM is not asked again.
	cfg.Memory.PipelineV2.ShadowMode = false
	r, err = newJob(db.DB, llms).Once(ctx, settings(cfg), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 1 || r.SemanticCacheHits != 1 || r.Supersessions != 1 {
		t.Fatalf("asked %d: %+v", asked.Load(), r)
	}
}

func TestSemanticFallbackFailuresMeanNoContradiction(t *testing.T) {
	t.Parallel()
	cases := map[string]http.HandlerFunc{
		"garbage": func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "I'd rather not say."}}}})
		},
		"error": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		},
		"slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(h)
			defer srv.Close()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			seedSemantic(s)
			cfg := semanticCfg(srv.URL)
			cfg.Maintenance.LLM.Timeout = 300 * time.Millisecond
			r, err := newJob(db.DB, llm.NewProvider(func(string) string { return "" }, nil)).Once(context.Background(), settings(cfg), sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Supersessions != 0 || r.SemanticFailures != 1 || r.Skips[supersession.SkipSemanticFailed] != 1 {
				t.Fatalf("%+v", r)
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.llm_windows WHERE state <> 'failed' OR verdict IS NOT NULL`); n != 0 {
				t.Fatal("a failure must not be stored as an answer")
			}
		})
	}
}

// Two sweeps at once, in shadow and then live mode: no duplicate proposal,
// no attribute superseded twice.
func TestConcurrentSweepsNeverDoubleWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Moves("a", "c", 40, "Toronto", "Ottawa", "Regina")
	for _, cfg := range []*config.Config{shadow(), live()} {
		var wg sync.WaitGroup
		for range 4 {
			job := newJob(db.DB, nil)
			job.BatchAspects = 3
			wg.Go(func() {
				if _, err := job.Once(ctx, settings(cfg), sweep.Options{}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if n := s.Count(`SELECT count(*) FROM (SELECT metadata->>'old_attribute_id', metadata->>'new_attribute_id' FROM memory_history
		WHERE event = 'supersession_proposal' GROUP BY 1, 2 HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d duplicated proposals", n)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`); n != 80 {
		t.Fatalf("want 80 proposals, got %d", n)
	}
	if n := s.Count(`SELECT count(*) FROM (SELECT metadata->>'old_attribute_id' FROM memory_history
		WHERE event = 'attribute_superseded' GROUP BY 1 HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d attributes superseded twice", n)
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); n != 80 {
		t.Fatalf("want 80 superseded, got %d", n)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != 80 {
		t.Fatalf("want 80 history rows, got %d", n)
	}
}

// With the inline hook off nobody drains its outbox: a complete pass, which
// covered everything classified before it started, empties it.
func TestCompletePassPrunesTheOutboxWhenTheHookIsOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedHome(s) // inserted classified: the trigger filled the outbox
	if n := s.Count(`SELECT count(*) FROM supersessiond.classified`); n == 0 {
		t.Fatal("the trigger should have filled the outbox")
	}
	on := live()
	if _, err := newJob(db.DB, nil).Once(ctx, settings(on), sweep.Options{}); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.classified`); n == 0 {
		t.Fatal("with the hook on, the hook owns the outbox")
	}
	off := live()
	off.Maintenance.InlineHook.Enabled = false
	if _, err := newJob(db.DB, nil).Once(ctx, settings(off), sweep.Options{}); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.classified`); n != 0 {
		t.Fatalf("%d outbox rows left after a complete pass with the hook off", n)
	}
}
