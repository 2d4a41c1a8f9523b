package sweep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// run is one scheduled run of the sweep.
func run(t *testing.T, j *sweep.Job, cfg *config.Config) *sweep.Report {
	t.Helper()
	rep, err := j.Run(t.Context(), settings(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return rep.(*sweep.Report)
}

// dieWhileExamining runs a pass that stops dead (as kill -9 would stop it)
// once it starts examining an aspect, holding claims that expire in a
// second.
func dieWhileExamining(t *testing.T, db *sqlx.DB) {
	t.Helper()
	dead := newJob(db, nil)
	dead.ClaimFor = time.Second
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dead.OnExamine(func(string, string) { cancel() })
	if _, err := dead.Once(ctx, settings(live()), sweep.Options{}); err == nil {
		t.Fatal("the cancelled pass reported no error")
	}
}

// addVisits fills agent a's aspect with n facts that hold together (ids
// f00...), enough for the aspect to get a key digest.
func addVisits(s *memtest.Seeder, aspect string, n int) {
	attrs := make([]memtest.Attr, n)
	for i := range attrs {
		attrs[i] = memtest.Attr{ID: fmt.Sprintf("f%02d", i), Agent: "a", Aspect: aspect,
			Content: fmt.Sprintf("Visited city number %d in %d", i, 1990+i%30)}
	}
	s.Add(attrs...)
}

// examined records the aspects a job's passes examine.
type examined struct {
	mu  sync.Mutex
	ids []string
}

func watch(j *sweep.Job) *examined {
	e := &examined{}
	j.OnExamine(func(agent, aspect string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.ids = append(e.ids, agent+" "+aspect)
	})
	return e
}

func (e *examined) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.ids
	e.ids = nil
	slices.Sort(out)
	return out
}

// The first run is a full pass; the next examines only the aspects whose
// attributes changed, including changes made while no daemon ran, and
// decides them as a full pass would.
func TestAfterAFullPassOnlyChangedAspectsAreExamined(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspects := s.Moves("a", "p", 6, "Toronto", "Halifax")
	j := newJob(db.DB, nil)
	seen := watch(j)

	r := run(t, j, live())
	if r.Kind != sweep.KindFull || !r.Complete || r.Supersessions != 6 {
		t.Fatalf("first run: want a complete full pass with 6 supersessions: %+v", r)
	}
	if got := seen.take(); len(got) != 6 {
		t.Fatalf("full pass examined %v", got)
	}
	// Nothing changed: an incremental pass with nothing to do.
	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Groups != 0 || r.Changes != 0 || !r.Complete {
		t.Fatalf("second run: want an empty incremental pass: %+v", r)
	}

	// While no daemon runs: a new contradiction in aspect 2, a compatible
	// fact in aspect 4, an edit in aspect 5 that makes a contradiction.
	s.Add(memtest.Attr{ID: "p2-3", Agent: "a", Aspect: aspects[2], Content: "Lives in Calgary"},
		memtest.Attr{ID: "p4-3", Agent: "a", Aspect: aspects[4], Content: "Has a balcony garden"},
		memtest.Attr{ID: "p5-3", Agent: "a", Aspect: aspects[5], Content: "Has a cat"})
	s.Exec(`UPDATE entity_attributes SET content = 'Lives in Regina' WHERE id = 'p5-3'`)
	// Changes that call for no decision are not recorded: a supersession, an
	// attribute protected, an importance updated.
	s.Exec(`UPDATE entity_attributes SET protected = true WHERE id = 'p1-2'`)
	s.Exec(`UPDATE entity_attributes SET importance = 0.9 WHERE id = 'p3-2'`)

	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || !r.Complete || r.Supersessions != 2 {
		t.Fatalf("third run: want an incremental pass with 2 supersessions: %+v", r)
	}
	want := []string{"a " + aspects[2], "a " + aspects[4], "a " + aspects[5]}
	if got := seen.take(); !slices.Equal(got, want) {
		t.Fatalf("incremental pass examined %v, want %v", got, want)
	}
	for old, by := range map[string]string{"p2-2": "p2-3", "p5-2": "p5-3"} {
		if st, b := s.Status(old); st != "superseded" || b != by {
			t.Errorf("%s: %s by %q, want superseded by %s", old, st, b, by)
		}
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes`); n != 0 {
		t.Errorf("%d change records left after a complete pass", n)
	}
	// An undo reactivates the old attribute: its aspect is examined again
	// (and the vetoed pair is not redone).
	s.Exec(`UPDATE entity_attributes SET status = 'active', superseded_by = NULL, superseded_at = NULL WHERE id = 'p0-1'`)
	r = run(t, j, live())
	if got := seen.take(); !slices.Equal(got, []string{"a " + aspects[0]}) || r.Kind != sweep.KindIncremental {
		t.Fatalf("after a reactivation: %s pass examined %v", r.Kind, got)
	}
}

// What changes the judgment (the thresholds, the LLM fallback, the mode)
// forces a full pass, and so does fullSweepEvery and --full.
func TestJudgmentChangeForcesAFullPass(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	s.Moves("a", "p", 3, "Toronto", "Halifax")
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	deps := jobs.Deps{DB: db.DB, Logger: quiet, Now: func() time.Time { return now }}
	j := sweep.New(deps, supersession.New(deps))

	if r := run(t, j, live()); r.Kind != sweep.KindFull {
		t.Fatalf("first run: %s", r.Kind)
	}
	if r := run(t, j, live()); r.Kind != sweep.KindIncremental {
		t.Fatalf("unchanged: %s (%s)", r.Kind, r.Why)
	}
	for name, change := range map[string]func(*config.Config){
		"min":    func(c *config.Config) { c.Memory.PipelineV2.Structural.SupersessionMinConfidence = 0.8 },
		"review": func(c *config.Config) { c.Memory.PipelineV2.Structural.SupersessionReviewConfidence = 0.4 },
		"shadow": func(c *config.Config) { c.Memory.PipelineV2.ShadowMode = true },
	} {
		cfg := live()
		change(cfg)
		r := run(t, j, cfg)
		if r.Kind != sweep.KindFull || !r.Complete {
			t.Fatalf("%s changed: want a full pass, got %s", name, r.Kind)
		}
		// Back to the first judgment: full again, once.
		if r := run(t, j, live()); r.Kind != sweep.KindFull {
			t.Fatalf("%s changed back: want a full pass, got %s", name, r.Kind)
		}
		if r := run(t, j, live()); r.Kind != sweep.KindIncremental {
			t.Fatalf("%s: the judgment is recorded: want incremental, got %s (%s)", name, r.Kind, r.Why)
		}
	}
	now = now.Add(config.Default().Maintenance.Schedules.FullSweepEvery - time.Minute)
	if r := run(t, j, live()); r.Kind != sweep.KindIncremental {
		t.Fatalf("before fullSweepEvery: %s", r.Kind)
	}
	now = now.Add(time.Minute)
	if r := run(t, j, live()); r.Kind != sweep.KindFull {
		t.Fatalf("after fullSweepEvery: %s", r.Kind)
	}
	r, err := j.Once(t.Context(), settings(live()), sweep.Options{Full: true})
	if err != nil || r.Kind != sweep.KindFull {
		t.Fatalf("--full: %v %+v", err, r)
	}
	r, err = j.Once(t.Context(), settings(live()), sweep.Options{})
	if err != nil || r.Kind != sweep.KindIncremental {
		t.Fatalf("--once: %v %+v", err, r)
	}
}

// A change committed while a pass runs is never lost: neither one to an
// aspect the pass already examined, nor one to the aspect it is examining.
func TestAChangeDuringAPassIsNotLost(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspects := s.Moves("a", "p", 4, "Toronto")
	j := newJob(db.DB, nil)
	j.BatchAspects = 1
	s.Add(memtest.Attr{ID: "late-1", Agent: "a", Aspect: aspects[3], Content: "Has a cat"})

	// During the full pass: when it examines aspect 3, a contradiction lands
	// in aspect 0 (already examined) and in aspect 3 (loaded already).
	n := 0
	j.OnExamine(func(agent, aspect string) {
		if aspect == aspects[3] && n == 0 {
			n++
			s.Add(memtest.Attr{ID: "p0-2", Agent: "a", Aspect: aspects[0], Content: "Lives in Calgary"},
				memtest.Attr{ID: "p3-2", Agent: "a", Aspect: aspects[3], Content: "Lives in Regina"})
		}
	})
	if r := run(t, j, live()); r.Kind != sweep.KindFull || !r.Complete || r.Supersessions != 0 {
		t.Fatalf("full pass: %+v", r)
	}
	r := run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Supersessions != 2 {
		t.Fatalf("next pass: want both late contradictions decided: %+v", r)
	}

	// During an incremental pass, the same.
	s.Add(memtest.Attr{ID: "p1-2", Agent: "a", Aspect: aspects[1], Content: "Has a dog"})
	j.OnExamine(func(agent, aspect string) {
		if aspect == aspects[1] {
			s.Add(memtest.Attr{ID: fmt.Sprintf("p1-%d", 3+n), Agent: "a", Aspect: aspects[1], Content: fmt.Sprintf("Lives in Town %d", n)})
			n++
		}
	})
	if r := run(t, j, live()); r.Supersessions != 0 || r.Groups != 1 {
		t.Fatalf("incremental pass with a change during it: %+v", r)
	}
	j.OnExamine(nil)
	if r := run(t, j, live()); r.Supersessions != 1 {
		t.Fatalf("the change made during the last pass: %+v", r)
	}
	if st, _ := s.Status("p1-1"); st != "superseded" {
		t.Fatalf("p1-1 is %s", st)
	}
}

// Two daemons' passes at once (the CLI beside a daemon, or a lease that
// expired) share the change records: no aspect is examined by both for the
// same change, and every changed aspect is examined.
func TestTwoPassesNeverExamineOneChangeTwice(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspects := s.Moves("a", "p", 60, "Toronto")
	a, b := newJob(db.DB, nil), newJob(db.DB, nil)
	if r := run(t, a, live()); r.Kind != sweep.KindFull {
		t.Fatal(r.Kind)
	}
	for i, asp := range aspects {
		s.Add(memtest.Attr{ID: fmt.Sprintf("p%d-2", i), Agent: "a", Aspect: asp, Content: "Lives in Halifax"},
			memtest.Attr{ID: fmt.Sprintf("p%d-x", i), Agent: "a", Aspect: asp, Content: "Has a cat"})
	}
	a.BatchAspects, b.BatchAspects = 3, 3
	seenA, seenB := watch(a), watch(b)
	var wg sync.WaitGroup
	reports := make([]*sweep.Report, 2)
	for i, j := range []*sweep.Job{a, b} {
		wg.Go(func() {
			r, err := j.Once(context.Background(), settings(live()), sweep.Options{})
			if err != nil {
				t.Error(err)
			}
			reports[i] = r
		})
	}
	wg.Wait()
	ga, gb := seenA.take(), seenB.take()
	for _, x := range ga {
		if slices.Contains(gb, x) {
			t.Errorf("aspect %s examined by both passes", x)
		}
	}
	if len(ga)+len(gb) != len(aspects) {
		t.Errorf("examined %d + %d aspects, want %d", len(ga), len(gb), len(aspects))
	}
	if n := reports[0].Changes + reports[1].Changes; n != 2*len(aspects) {
		t.Errorf("consumed %d change records, want %d", n, 2*len(aspects))
	}
	if n := reports[0].Supersessions + reports[1].Supersessions; n != len(aspects) {
		t.Errorf("%d supersessions, want %d", n, len(aspects))
	}
	t.Logf("pass A examined %d aspects, pass B %d", len(ga), len(gb))
}

// A pass that dies holding claims (kill -9) leaves them to expire; the next
// pass takes them and decides the aspects.
func TestClaimsOfADeadPassExpire(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspects := s.Moves("a", "p", 3, "Toronto")
	j := newJob(db.DB, nil)
	run(t, j, live())
	for i, asp := range aspects {
		s.Add(memtest.Attr{ID: fmt.Sprintf("p%d-2", i), Agent: "a", Aspect: asp, Content: "Lives in Halifax"})
	}
	dieWhileExamining(t, db.DB)
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE claimed_by IS NOT NULL`); n != 3 {
		t.Fatalf("%d claimed records left by the dead pass, want 3", n)
	}
	if r := run(t, j, live()); r.Groups != 0 {
		t.Fatalf("claims taken over before they expired: %+v", r)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := run(t, j, live()); r.Supersessions != 3 || !r.Complete {
		t.Fatalf("after expiry: %+v", r)
	}
}

// An aspect whose pair the LLM could not answer (down, or over the pass's
// question budget) stays recorded: the next incremental pass asks again.
func TestAnUnansweredAspectIsExaminedAgain(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": windowReply("the invoices moved", [2]int{2, 3})}}}})
	}))
	defer srv.Close()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "project")
	s.Add(memtest.Attr{ID: "s0", Agent: "a", Aspect: asp, Content: "Owns the billing service"})
	cfg := semanticCfg(srv.URL)
	j := newJob(db.DB, llm.NewProvider(func(string) string { return "" }, nil))
	if r := run(t, j, cfg); r.Kind != sweep.KindFull {
		t.Fatal(r.Kind)
	}
	s.Add(memtest.Attr{ID: "s1", Agent: "a", Aspect: asp, Content: "The billing service stores invoices in PostgreSQL"},
		memtest.Attr{ID: "s2", Agent: "a", Aspect: asp, Content: "The billing service keeps invoices inside DynamoDB tables"})
	if r := run(t, j, cfg); r.Kind != sweep.KindIncremental || r.SemanticFailures != 1 || r.Supersessions != 0 {
		t.Fatalf("LLM down: %+v", r)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE claimed_by IS NULL`); n != 1 {
		t.Fatalf("%d change records after an unanswered pass, want the aspect recorded again", n)
	}
	up.Store(true)
	// The failed window backs off: the aspect is examined, the LLM not
	// asked, the aspect recorded again.
	if r := run(t, j, cfg); r.Kind != sweep.KindIncremental || r.SemanticAsked != 0 || r.SemanticDeferred != 1 || r.Supersessions != 0 {
		t.Fatalf("backing off: %+v", r)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE claimed_by IS NULL`); n != 1 {
		t.Fatalf("%d change records after a deferred window, want the aspect recorded again", n)
	}
	s.Exec(`UPDATE supersessiond.llm_windows SET next_attempt_at = now() - interval '1 second'`) // the backoff passes
	if r := run(t, j, cfg); r.Kind != sweep.KindIncremental || r.SemanticAsked != 1 || r.Supersessions != 1 {
		t.Fatalf("LLM back: %+v", r)
	}
	if r := run(t, j, cfg); r.Groups != 0 {
		t.Fatalf("answered: nothing left to examine: %+v", r)
	}
}

// After a full pass, a change in a large aspect is examined through the
// aspect's stored keys: only the changed attribute and the siblings its
// keys meet are read, and the decision is the one a pass over the whole
// aspect makes. The keys of what an incremental pass examined are stored
// too, so a later change meets an earlier one; a damaged digest makes the
// aspect read whole, with the same decision.
func TestIncrementalPassReadsOnlyWhatChangedAttributesMeet(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspect := s.Aspect("a", "Sam", "life")
	addVisits(s, aspect, 60)
	s.Add(memtest.Attr{ID: "toronto", Agent: "a", Aspect: aspect, Content: "Lives in Toronto"})
	j := newJob(db.DB, nil)

	r := run(t, j, live())
	if r.Kind != sweep.KindFull || !r.Complete {
		t.Fatalf("first run: want a complete full pass: %+v", r)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, aspect); n != 1 {
		t.Fatalf("the full pass stored %d key digests for an aspect of 61", n)
	}

	// While no daemon runs, a move.
	s.Add(memtest.Attr{ID: "calgary", Agent: "a", Aspect: aspect, Content: "Lives in Calgary"})
	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Narrowed != 1 || r.Supersessions != 1 || r.Attributes > 4 {
		t.Fatalf("after a move: want one narrowed aspect, a few attributes read, one supersession: %+v", r)
	}
	if st, by := s.Status("toronto"); st != "superseded" || by != "calgary" {
		t.Fatalf("toronto: %s by %q, want superseded by calgary", st, by)
	}

	// An older filler edited into another city: it meets Calgary only
	// through the keys the last incremental pass stored.
	s.Exec(`UPDATE entity_attributes SET content = 'Lives in Regina' WHERE id = 'f10'`)
	r = run(t, j, live())
	if r.Narrowed != 1 || r.Supersessions != 1 {
		t.Fatalf("after an edit: want one narrowed aspect and one supersession: %+v", r)
	}
	if st, by := s.Status("f10"); st != "superseded" || by != "calgary" {
		t.Fatalf("f10: %s by %q, want superseded by calgary (the newer move)", st, by)
	}

	// A damaged digest: the aspect is read whole, the decision is the same.
	s.Exec(`UPDATE supersessiond.aspect_keys SET keys = '\x01ff00'::bytea WHERE aspect_id = $1`, aspect)
	s.Add(memtest.Attr{ID: "oslo", Agent: "a", Aspect: aspect, Content: "Lives in Oslo"})
	r = run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Narrowed != 0 || r.Groups != 1 || r.Attributes < 60 || r.Supersessions != 1 || r.ReadWhole["malformed"] != 1 {
		t.Fatalf("with a damaged digest: want the aspect read whole and one supersession: %+v", r)
	}
	if st, by := s.Status("calgary"); st != "superseded" || by != "oslo" {
		t.Fatalf("calgary: %s by %q, want superseded by oslo", st, by)
	}
	// Reading it whole replaced the damaged fragments.
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1 AND keys <> '\x01ff00'::bytea`, aspect); n != 1 ||
		s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, aspect) != 1 {
		t.Fatal("reading the aspect whole did not replace its damaged key digests")
	}
	// A complete full pass replaces the fragments incremental passes added.
	r, err := j.Once(t.Context(), settings(live()), sweep.Options{Full: true})
	if err != nil || !r.Complete {
		t.Fatalf("full pass: %v %+v", err, r)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, aspect); n != 1 {
		t.Fatalf("%d key digests for the aspect after a complete full pass, want 1", n)
	}
}

// Through the key digests as through whole aspects: a change made while a
// narrowed pass runs is decided by the next one, and a pass that dies after
// deciding but before consuming its records stores no keys and leaves the
// records to be taken again.
func TestNarrowedPassesLoseNoChange(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspect := s.Aspect("a", "Sam", "life")
	addVisits(s, aspect, 50)
	j := newJob(db.DB, nil)
	if r := run(t, j, live()); r.Kind != sweep.KindFull || !r.Complete {
		t.Fatalf("first run: %+v", r)
	}

	// During a narrowed pass, a move lands in the aspect being examined.
	s.Add(memtest.Attr{ID: "toronto", Agent: "a", Aspect: aspect, Content: "Lives in Toronto"})
	during := true
	j.OnExamine(func(agent, asp string) {
		if during {
			during = false
			s.Add(memtest.Attr{ID: "calgary", Agent: "a", Aspect: aspect, Content: "Lives in Calgary"})
		}
	})
	if r := run(t, j, live()); r.Narrowed != 1 || r.Supersessions != 0 {
		t.Fatalf("the pass during which the move landed: %+v", r)
	}
	j.OnExamine(nil)
	if r := run(t, j, live()); r.Narrowed != 1 || r.Supersessions != 1 {
		t.Fatalf("the next pass: want the move decided: %+v", r)
	}
	if st, by := s.Status("toronto"); st != "superseded" || by != "calgary" {
		t.Fatalf("toronto: %s by %q", st, by)
	}

	// A pass that dies once it has examined the aspect.
	s.Add(memtest.Attr{ID: "regina", Agent: "a", Aspect: aspect, Content: "Lives in Regina"})
	fragments := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys`)
	dieWhileExamining(t, db.DB)
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys`); n != fragments {
		t.Fatalf("the dead pass stored key fragments: %d, was %d", n, fragments)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := run(t, j, live()); r.Narrowed != 1 || r.Supersessions != 1 {
		t.Fatalf("after the dead pass's claims expired: %+v", r)
	}
	if st, by := s.Status("calgary"); st != "superseded" || by != "regina" {
		t.Fatalf("calgary: %s by %q", st, by)
	}

	// A change whose keys meet a key fifty siblings hold reads the aspect whole.
	s.Add(memtest.Attr{ID: "never", Agent: "a", Aspect: aspect, Content: "No longer visits cities"})
	if r := run(t, j, live()); r.Narrowed != 0 || r.ReadWhole["many"] != 1 || r.Attributes < 50 {
		t.Fatalf("a change meeting a widely held key: %+v", r)
	}
}
