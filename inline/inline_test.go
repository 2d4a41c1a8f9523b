package inline_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/inline"
	"github.com/supersessiond/supersessiond/memtest"
	"github.com/supersessiond/supersessiond/pgtest"
	"github.com/supersessiond/supersessiond/supersession"
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
	engine := supersession.New(db.DB, log, supersession.NewMetrics(reg), nil)
	m := inline.NewMetrics(reg)
	h := inline.New(db.DB, log, engine, m)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{hook: h, metrics: m, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = h.Run(ctx, func() *config.Config { return cfg })
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	eventually(t, "listener connected", func() bool { return h.Ready() == nil })
	return r
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out: %s", what)
}

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
	eventually(t, "startup drain", func() bool { return s.Count(`SELECT count(*) FROM supersessiond_classified`) == 0 })

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
	eventually(t, "outbox drained", func() bool { return s.Count(`SELECT count(*) FROM supersessiond_classified`) == 0 })
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
			s.Count(`SELECT count(*) FROM supersessiond_classified`) == 0
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
	s.Exec(`INSERT INTO supersessiond_classified (attribute_id, agent_id, aspect_id, attempts) VALUES ('ghost', 'a', 'nowhere', 99)`)
	r := startHook(t, db, cfgWithPoll(50*time.Millisecond, db.URL))
	eventually(t, "given up", func() bool { return s.Count(`SELECT count(*) FROM supersessiond_classified`) == 0 })
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
	eventually(t, "classification handled", func() bool { return s.Count(`SELECT count(*) FROM supersessiond_classified`) == 0 })
	if st, _ := s.Status("v1"); st != "active" {
		t.Fatal("the hook applied a pair a reviewer rejected")
	}
}
