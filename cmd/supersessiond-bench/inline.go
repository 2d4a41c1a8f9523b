package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
)

type inlineResult struct {
	Classified   int     `json:"classified"`
	TargetRate   int     `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Decided      int     `json:"decided"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	MaxMs        float64 `json:"max_ms"`
	// MaxRate is the highest rate of the search (Steps) sustained with a
	// p99 lag of at most 100 ms.
	MaxRate int          `json:"max_rate_p99_100ms"`
	Steps   []inlineStep `json:"rate_steps,omitempty"`
}

// inlineStep is one rate of the search.
type inlineStep struct {
	Rate         int     `json:"rate"`
	AchievedRate float64 `json:"achieved_rate"`
	P99ms        float64 `json:"p99_ms"`
	OK           bool    `json:"ok"`
}

// inline sustains a classification rate against a database that already
// holds a memory graph, with the hook running, and reports the lag from each
// classification to its committed decision.
func (e *benchEnv) inline(ctx context.Context) (*inlineResult, error) {
	db, dbURL, err := e.newDB(ctx, "inline")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	total := int(float64(e.o.classifyRate) * e.o.classifyFor.Seconds())
	search := 0
	for _, r := range e.o.inlineRates {
		search += int(float64(r) * e.o.inlineStep.Seconds())
	}
	w, err := prepareClassifications(ctx, db, min(e.o.attributes, 50000), total+search)
	if err != nil {
		return nil, err
	}
	// A daemon running beside a stack has swept it: its full pass leaves the
	// key digests the hook narrows its loads with (SPEC §11).
	logf("inline: supersessiond sweep --once --full (the key digests a running daemon has)")
	cfgEnv, cleanup, err := writeConfig(liveConfig)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if _, _, _, err := e.runBinary(dbURL, cfgEnv, "sweep", "--once", "--full", "--json"); err != nil {
		return nil, fmt.Errorf("inline: full pass: %w", err)
	}
	// The agent's writers keep their connections (database/sql keeps two
	// idle by default: four writers would reconnect all the time); the hook
	// has a pool of its own, sized as the daemon sizes it.
	db.SetMaxIdleConns(8)
	h, err := startHook(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	logf("inline: %d classifications at %d/s", total, e.o.classifyRate)
	sent, err := w.classify(ctx, db, 0, total, e.o.classifyRate)
	if err != nil {
		return nil, err
	}
	if err := waitDrained(ctx, db, 60*time.Second); err != nil {
		return nil, err
	}
	h.waitObserved(total, 5*time.Second)
	lags := h.lags()
	res := &inlineResult{Classified: total, TargetRate: e.o.classifyRate, AchievedRate: float64(total) / sent.Seconds(), Decided: len(lags)}
	res.P50ms, res.P99ms, res.MaxMs = percentile(lags, 50), percentile(lags, 99), percentile(lags, 100)
	if err := e.searchRate(ctx, db, w, h, total, res); err != nil {
		return nil, err
	}
	return res, nil
}

// searchRate sustains each rate of --inline-rates in turn for
// --inline-step, and records the highest with a p99 lag of 100 ms or less
// (and achieved, within 5%), stopping at the first that misses.
func (e *benchEnv) searchRate(ctx context.Context, db *sqlx.DB, w *classifications, h *runningHook, from int, res *inlineResult) error {
	for _, rate := range e.o.inlineRates {
		n := int(float64(rate) * e.o.inlineStep.Seconds())
		logf("inline: %d classifications at %d/s", n, rate)
		sent, err := w.classifyParallel(ctx, db, from, n, rate)
		if err != nil {
			return err
		}
		from += n
		if err := waitDrained(ctx, db, 60*time.Second); err != nil {
			return err
		}
		h.waitObserved(n, 5*time.Second)
		lags := h.lags()
		st := inlineStep{Rate: rate, AchievedRate: float64(n) / sent.Seconds(), P99ms: percentile(lags, 99)}
		st.OK = st.P99ms <= 100 && st.AchievedRate >= 0.95*float64(rate) && len(lags) >= n*95/100
		res.Steps = append(res.Steps, st)
		logf("inline: %d/s: achieved %.0f/s, p99 %.1f ms, %d decided", rate, st.AchievedRate, st.P99ms, len(lags))
		if !st.OK {
			break
		}
		res.MaxRate = rate
	}
	return nil
}

// classifyParallel classifies [from, from+n) at rate per second from four
// connections, as an agent with several workers would: one connection's
// round trips cannot carry thousands of statements a second.
func (w *classifications) classifyParallel(ctx context.Context, db *sqlx.DB, from, n, rate int) (time.Duration, error) {
	const conns = 4
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for c := range conns {
		wg.Go(func() {
			part := w.every(from, n, c, conns)
			_, errs[c] = part.classify(ctx, db, 0, len(part.ids), max(1, rate/conns))
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// every is the c-th of k interleaved parts of [from, from+n).
func (w *classifications) every(from, n, c, k int) *classifications {
	part := &classifications{}
	for i := from + c; i < from+n; i += k {
		part.ids, part.targets = append(part.ids, w.ids[i]), append(part.targets, w.targets[i])
	}
	return part
}

// classifications are attributes written unclassified (as the agent writes
// them before its classifier runs) and the aspect each will get; a third
// restate a city, so some decisions supersede.
type classifications struct{ ids, targets []string }

func prepareClassifications(ctx context.Context, db *sqlx.DB, graph, total int) (*classifications, error) {
	logf("inline: generating %d classified attributes", graph)
	if _, err := bench.GenerateAttributes(ctx, db, bench.AttributeSpec{Attributes: graph, Seed: 7}); err != nil {
		return nil, err
	}
	var aspects []struct {
		ID    string `db:"id"`
		Agent string `db:"agent_id"`
	}
	if err := db.SelectContext(ctx, &aspects, `SELECT id, agent_id FROM entity_aspects ORDER BY id`); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(11, 12))
	w := &classifications{ids: make([]string, total), targets: make([]string, total)}
	agents, contents := make([]string, total), make([]string, total)
	for i := range total {
		a := aspects[r.IntN(len(aspects))]
		w.ids[i], w.targets[i], agents[i] = fmt.Sprintf("c%d", i), a.ID, a.Agent
		if i%3 == 0 {
			contents[i] = "Lives in " + []string{"Lisbon", "Oslo", "Quito", "Hobart", "Nantes"}[i%5]
		} else {
			contents[i] = fmt.Sprintf("Bought ticket number %d for the %d season", i, 2020+i%7)
		}
	}
	_, err := db.ExecContext(ctx, `
		INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content, created_at, updated_at)
		SELECT id, agent, 'attribute', content, lower(content), now(), now()
		FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, agent, content)`,
		pq.Array(w.ids), pq.Array(agents), pq.Array(contents))
	return w, err
}

// classify classifies attributes [from, from+n) at rate per second, as the
// agent's classifier would, one statement each; it returns how long that
// took.
func (w *classifications) classify(ctx context.Context, db *sqlx.DB, from, n, rate int) (time.Duration, error) {
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := db.ExecContext(ctx, `UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, w.targets[from+i], w.ids[from+i]); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// waitDrained waits until the hook's outbox is empty.
func waitDrained(ctx context.Context, db *sqlx.DB, limit time.Duration) error {
	for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
		var left int
		if err := db.GetContext(ctx, &left, `SELECT count(*) FROM supersessiond.classified`); err != nil {
			return err
		}
		if left == 0 || time.Now().After(deadline) {
			return nil
		}
	}
}

// runningHook is the inline hook running in this process, its lags
// observed exactly (the histogram's buckets are too coarse for a p99).
type runningHook struct {
	hook   *inline.Hook
	engine *supersession.Engine
	db     *sqlx.DB
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	seen   []float64
}

func startHook(ctx context.Context, dbURL string) (*runningHook, error) {
	return startHookWith(ctx, dbURL, nil, supersession.DefaultPolicy())
}

// startHookWith starts the hook on a configuration edit makes of the
// defaults, its engine under pol (and asking the LLM that configuration
// names).
func startHookWith(ctx context.Context, dbURL string, edit func(*config.Config), pol supersession.Policy) (*runningHook, error) {
	cfg := config.Default()
	cfg.Maintenance.Database.URL = dbURL
	if edit != nil {
		edit(cfg)
	}
	settings := daemon.SettingsOf(cfg)
	db, err := store.Open(ctx, dbURL, settings.Pool, 10*time.Second)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("BENCH_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	deps := jobs.Deps{DB: db, Logger: log, Registry: prometheus.NewRegistry(), LLM: llm.NewProvider(func(string) string { return "" }, nil)}
	std := daemon.NewStandard(deps, daemon.StandardOptions{Policy: func() supersession.Policy { return pol }})
	h := &runningHook{hook: std.Hook, engine: std.Engine, db: db, done: make(chan struct{})}
	h.hook.ObserveLag = func(s float64) { h.mu.Lock(); h.seen = append(h.seen, s); h.mu.Unlock() }
	hctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	go func() { defer close(h.done); _ = h.hook.Run(hctx, func() inline.Settings { return settings.Inline }) }()
	for deadline := time.Now().Add(10 * time.Second); h.hook.Ready() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.stop()
			return nil, fmt.Errorf("inline: listener never connected: %v", h.hook.Ready())
		}
	}
	return h, nil
}

func (h *runningHook) stop() {
	h.cancel()
	<-h.done
	h.engine.WaitAsked()
	_ = h.db.Close()
}

// waitObserved waits until n lags were observed since lags was last
// called, or limit passes: the hook observes a batch's lags just after the
// commit that empties the outbox, so an empty outbox alone can come a
// batch early on a busy machine (a smoke run once counted 85 of 100).
func (h *runningHook) waitObserved(n int, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		seen := len(h.seen)
		h.mu.Unlock()
		if seen >= n {
			return
		}
	}
}

// lags returns the lags observed so far, in seconds, and forgets them.
func (h *runningHook) lags() []float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.seen
	h.seen = nil
	return out
}

// percentile is the p-th percentile of lags in milliseconds (0 for none).
func percentile(lags []float64, p int) float64 {
	if len(lags) == 0 {
		return 0
	}
	s := slices.Clone(lags)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)] * 1000
}
