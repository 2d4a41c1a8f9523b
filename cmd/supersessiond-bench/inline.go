package main

import (
	"context"
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
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/inline"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

type inlineResult struct {
	Classified   int     `json:"classified"`
	TargetRate   int     `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Decided      int     `json:"decided"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	MaxMs        float64 `json:"max_ms"`
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
	w, err := prepareClassifications(ctx, db, min(e.o.attributes, 50000), total)
	if err != nil {
		return nil, err
	}
	h, err := startHook(ctx, db, dbURL)
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
	lags := h.lags()
	res := &inlineResult{Classified: total, TargetRate: e.o.classifyRate, AchievedRate: float64(total) / sent.Seconds(), Decided: len(lags)}
	res.P50ms, res.P99ms, res.MaxMs = percentile(lags, 50), percentile(lags, 99), percentile(lags, 100)
	return res, nil
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
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	seen   []float64
}

func startHook(ctx context.Context, db *sqlx.DB, dbURL string) (*runningHook, error) {
	cfg := config.Default()
	cfg.Maintenance.Database.URL = dbURL
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("BENCH_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	deps := job.Deps{DB: db, Logger: log, Registry: prometheus.NewRegistry()}
	h := &runningHook{hook: inline.New(deps, supersession.New(deps)), done: make(chan struct{})}
	h.hook.ObserveLag = func(s float64) { h.mu.Lock(); h.seen = append(h.seen, s); h.mu.Unlock() }
	hctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	go func() { defer close(h.done); _ = h.hook.Run(hctx, func() *config.Config { return cfg }) }()
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
