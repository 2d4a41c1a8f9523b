package sweep_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// transport is an aspect whose one true update shares no word with what
// it retires, and no heuristic reads: only the LLM can see it.
const transport = `{"aspect_id":"t","entity":"Sam","aspect":"transport","statements":[` +
	`{"id":"t1","text":"Drives a 2011 Corolla"},{"id":"t2","text":"Bikes everywhere these days"},` +
	`{"id":"t3","text":"Keeps a spare helmet at the office"}],"supersedes":[["t1","t2"]]}`

// family is another such aspect.
const family = `{"aspect_id":"f","entity":"Kim","aspect":"family","statements":[` +
	`{"id":"f1","text":"Expecting twins in June"},{"id":"f2","text":"The twins arrived last week"},` +
	`{"id":"f3","text":"Works from home on Fridays"}],"supersedes":[["f1","f2"]]}`

func seedFamily(s *memtest.Seeder) {
	asp := s.Aspect("a", "Kim", "family")
	s.Add(
		memtest.Attr{ID: "k1", Agent: "a", Aspect: asp, Content: "Expecting twins in June"},
		memtest.Attr{ID: "k2", Agent: "a", Aspect: asp, Content: "The twins arrived last week"},
		memtest.Attr{ID: "k3", Agent: "a", Aspect: asp, Content: "Works from home on Fridays"},
	)
}

// seedTransport adds the transport aspect of agent a (prefix names its
// attributes, entity its entity) and returns its aspect id.
func seedTransport(s *memtest.Seeder, entity, prefix string) string {
	asp := s.Aspect("a", entity, "transport")
	s.Add(
		memtest.Attr{ID: prefix + "1", Agent: "a", Aspect: asp, Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: prefix + "2", Agent: "a", Aspect: asp, Content: "Bikes everywhere these days"},
		memtest.Attr{ID: prefix + "3", Agent: "a", Aspect: asp, Content: "Keeps a spare helmet at the office"},
	)
	return asp
}

func scripted(t *testing.T, lines ...string) *llmtest.Server {
	truth, err := llmtest.TruthFromAspects(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return llmtest.New(t, truth)
}

// llmCfg is live mode with the semantic fallback asking the scripted LLM.
func llmCfg(srv *llmtest.Server) *config.Config {
	c := live()
	c.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
	c.Maintenance.LLM.Endpoint = srv.Endpoint()
	c.Maintenance.LLM.Model = "test-model"
	return c
}

// policyJob is a sweep whose engine (a replica of its own: its own client,
// metrics and background asker) runs under pol.
func policyJob(db *sqlx.DB, pol supersession.Policy) (*sweep.Job, *supersession.Metrics) {
	deps := jobs.Deps{DB: db, Logger: quiet, LLM: llm.NewProvider(func(string) string { return "" }, nil), Registry: prometheus.NewRegistry()}
	engine := supersession.New(deps).WithPolicy(func() supersession.Policy { return pol })
	return sweep.New(deps, engine), engine.Metrics()
}

func once(t *testing.T, j *sweep.Job, cfg *config.Config, opt sweep.Options) *sweep.Report {
	t.Helper()
	r, err := j.Once(context.Background(), daemon.SettingsOf(cfg).Sweep, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The aspect is the gate (SPEC §13): a pair sharing no word reaches the
// LLM, which retires it; Signet's overlap rule never lets it reach it.
func TestAPairSharingNoWordReachesTheLLM(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gate     supersession.Gate
		requests int
		status   string
	}{{supersession.GateAspect, 1, "superseded"}, {supersession.GateOverlap, 0, "active"}} {
		t.Run(string(tc.gate), func(t *testing.T) {
			t.Parallel()
			srv := scripted(t, transport)
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			seedTransport(s, "Sam", "t")
			j, _ := policyJob(db.DB, supersession.Policy{Gate: tc.gate})
			r := once(t, j, llmCfg(srv), sweep.Options{})
			if srv.Requests() != tc.requests || r.SemanticAsked != tc.requests {
				t.Fatalf("%d requests (%d in the report), want %d", srv.Requests(), r.SemanticAsked, tc.requests)
			}
			if st, by := s.Status("t1"); st != tc.status || (st == "superseded" && by != "t2") {
				t.Fatalf("t1 is %s by %q, want %s", st, by, tc.status)
			}
			if srv.Unframed() != 0 || srv.Unmatched() != 0 {
				t.Fatalf("%d requests unframed, %d statements the truth does not hold", srv.Unframed(), srv.Unmatched())
			}
		})
	}
}

// One request per window: an aspect's undecided pairs (three here, or
// eleven in a larger aspect) are one question while the aspect fits a
// window; a larger one is several windows, each asked once, fewer than its
// pairs.
func TestOneRequestPerWindow(t *testing.T) {
	t.Parallel()
	srv := scripted(t, transport)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedTransport(s, "Sam", "t")
	j, m := policyJob(db.DB, supersession.Policy{})
	r := once(t, j, llmCfg(srv), sweep.Options{})
	if srv.Requests() != 1 || r.Pairs != 3 {
		t.Fatalf("%d requests for %d pairs, want one", srv.Requests(), r.Pairs)
	}
	if got := testutil.ToFloat64(m.LLMCalls.WithLabelValues("ok")); got != 1 {
		t.Fatalf("requests metric %v, want 1", got)
	}
	if u := srv.Usage(); u.Total() == 0 || testutil.ToFloat64(m.LLMTokens.WithLabelValues("prompt")) != float64(u.PromptTokens) ||
		testutil.ToFloat64(m.LLMTokens.WithLabelValues("completion")) != float64(u.CompletionTokens) || r.SemanticTokens != u.Total() {
		t.Fatalf("tokens: metric %v+%v, report %d, want the replies' usage %+v", testutil.ToFloat64(m.LLMTokens.WithLabelValues("prompt")),
			testutil.ToFloat64(m.LLMTokens.WithLabelValues("completion")), r.SemanticTokens, u)
	}
	if n := testutil.CollectAndCount(m.LLMLatency); n != 1 {
		t.Fatalf("latency histogram has %d series", n)
	}

	big := s.Aspect("a", "Kim", "transport")
	for i, text := range []string{"Drives a 2011 Corolla", "Bikes everywhere these days", "Keeps a spare helmet at the office",
		"Has a monthly transit pass", "Walks the kids to school"} {
		s.Add(memtest.Attr{ID: "k" + string(rune('1'+i)), Agent: "a", Aspect: big, Content: text})
	}
	srv2 := scripted(t, transport)
	j2, _ := policyJob(db.DB, supersession.Policy{MaxStatements: 3})
	r = once(t, j2, llmCfg(srv2), sweep.Options{Agent: "a"})
	if srv2.Requests() < 2 || srv2.Requests() >= r.Pairs || srv2.MaxPerWindow() != 1 || srv2.Windows() != srv2.Requests() {
		t.Fatalf("windows of 3: %d requests, %d windows, at most %d per window, for %d pairs", srv2.Requests(), srv2.Windows(),
			srv2.MaxPerWindow(), r.Pairs)
	}
}

// A window is never asked twice: not by a second replica while the first
// is asking (it finds the claim and defers), not by that replica once the
// answer is stored, not after a restart; and no transaction is open while
// the LLM answers.
func TestAWindowIsNeverAskedTwice(t *testing.T) {
	t.Parallel()
	srv := scripted(t, transport)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedTransport(s, "Sam", "t")
	cfg := llmCfg(srv)
	inFlight, release := make(chan struct{}), make(chan struct{})
	var released sync.Once
	free := func() { released.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server closes: a failed test leaves no request held
	var idle []string
	var first atomic.Bool
	srv.OnRequest(func(string) { // the first request is held until the second replica has run
		var open []string
		err := db.Select(&open, `SELECT coalesce(application_name, '') || ': ' || left(coalesce(query, ''), 80) FROM pg_stat_activity
			WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`)
		if err != nil {
			open = append(open, err.Error())
		}
		idle = append(idle, open...)
		if first.CompareAndSwap(false, true) {
			close(inFlight)
			<-release
		}
	})
	a, _ := policyJob(db.DB, supersession.Policy{})
	b, _ := policyJob(db.DB, supersession.Policy{})
	done := make(chan *sweep.Report, 1)
	go func() {
		r, _ := a.Once(context.Background(), daemon.SettingsOf(cfg).Sweep, sweep.Options{Full: true})
		done <- r
	}()
	<-inFlight
	rb := once(t, b, cfg, sweep.Options{Full: true})
	if rb.SemanticAsked != 0 || rb.SemanticDeferred != 1 {
		t.Fatalf("the second replica, while the first asks: %+v", rb.Tally)
	}
	free()
	ra := <-done
	if ra == nil || ra.SemanticAsked != 1 || ra.Supersessions != 1 {
		t.Fatalf("the first replica: %+v", ra)
	}
	if len(idle) > 0 {
		t.Fatalf("transactions open while the LLM answered: %v", idle)
	}
	restarted, _ := policyJob(db.DB, supersession.Policy{})
	for _, j := range []*sweep.Job{b, restarted} { // the second replica, then a process started afresh
		s.Exec(`UPDATE entity_attributes SET status = 'active', superseded_by = NULL, superseded_at = NULL WHERE id = 't1'`)
		r := once(t, j, cfg, sweep.Options{Full: true})
		if r.SemanticAsked != 0 || r.SemanticCacheHits != 1 || r.Supersessions != 1 {
			t.Fatalf("answered before: %+v", r.Tally)
		}
	}
	if srv.Requests() != 1 {
		t.Fatalf("%d requests, want 1", srv.Requests())
	}
}

// Over maxRequestsPerHour a window is deferred, its aspect recorded as
// changed, and asked on a later run once the hour's budget allows, by
// another process: never dropped.
func TestOverBudgetWindowsAreDeferredAndAskedLater(t *testing.T) {
	t.Parallel()
	srv := scripted(t, transport, family)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedTransport(s, "Sam", "s")
	seedFamily(s)
	cfg := llmCfg(srv)
	pol := supersession.Policy{MaxRequestsPerHour: 1}
	j, m := policyJob(db.DB, pol)
	r := once(t, j, cfg, sweep.Options{})
	if srv.Requests() != 1 || r.SemanticDeferred != 1 || r.Supersessions != 1 {
		t.Fatalf("first run: %d requests, %+v", srv.Requests(), r.Tally)
	}
	if got := testutil.ToFloat64(m.LLMDeferred.WithLabelValues(supersession.DeferBudget)); got != 1 {
		t.Fatalf("deferred metric %v, want 1", got)
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id = ''`); n != 1 { // owed an answer (supersession.OwedAttribute)
		t.Fatalf("%d aspects recorded again, want the deferred one", n)
	}
	r = once(t, j, cfg, sweep.Options{})
	if r.Kind != sweep.KindIncremental || srv.Requests() != 1 || r.SemanticDeferred != 1 {
		t.Fatalf("same hour: %d requests, %+v", srv.Requests(), r)
	}
	s.Exec(`UPDATE supersessiond.llm_spend SET minute = minute - interval '2 hours'`) // the hour passes
	restarted, _ := policyJob(db.DB, pol)
	r = once(t, restarted, cfg, sweep.Options{})
	if r.Kind != sweep.KindIncremental || srv.Requests() != 2 || r.SemanticAsked != 1 || r.Supersessions != 1 {
		t.Fatalf("next hour, restarted: %d requests, %+v", srv.Requests(), r)
	}
	for _, id := range []string{"s1", "k1"} {
		if st, _ := s.Status(id); st != "superseded" {
			t.Fatalf("%s is %s", id, st)
		}
	}
	if n := s.Count(`SELECT count(*) FROM supersessiond.changes`); n != 0 {
		t.Fatalf("%d change records left once every window is answered", n)
	}
}

// With the semantic fallback on, the sweep reads changed aspects whole
// (the LLM's candidates are not in the digests), and keeps the digests
// whole all the same: the inline hook narrows by them with the fallback
// on too. The full pass stores an aspect's digest; an incremental pass
// that reads the aspect for a change replaces it with one holding the
// changed attribute's new keys.
func TestSemanticSweepKeepsTheKeyDigests(t *testing.T) {
	t.Parallel()
	srv := scripted(t, transport)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspect := s.Aspect("a", "Sam", "life")
	addVisits(s, aspect, 40)
	j, _ := policyJob(db.DB, supersession.Policy{})
	cfg := llmCfg(srv)
	if r := run(t, j, cfg); r.Kind != sweep.KindFull || !r.Complete {
		t.Fatalf("first run: want a complete full pass: %+v", r)
	}
	keys := `SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`
	if n := s.Count(keys, aspect); n != 1 {
		t.Fatalf("the full pass with the LLM judge on stored %d key digests for an aspect of 40", n)
	}
	s.Exec(`UPDATE entity_attributes SET content = 'Lives in Regina' WHERE id = 'f10'`)
	s.Exec(`UPDATE supersessiond.aspect_keys SET heuristics = heuristics || '-before'`) // marks the full pass's
	if r := run(t, j, cfg); r.Kind != sweep.KindIncremental || r.ReadWhole["semantic"] != 1 {
		t.Fatalf("after an edit: want the aspect read whole for the LLM: %+v", r)
	}
	if n := s.Count(keys+` AND heuristics NOT LIKE '%-before'`, aspect); n != 1 {
		t.Fatalf("%d key digests stored by the incremental pass, want the whole one that replaces the full pass's", n)
	}
	if n := s.Count(keys, aspect); n != 1 {
		t.Fatalf("%d key digests, want 1", n)
	}
}
