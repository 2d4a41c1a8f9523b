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

	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/inline"
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
	base := min(e.o.attributes, 50000)
	logf("inline: generating %d classified attributes", base)
	if _, err := bench.GenerateAttributes(ctx, db, bench.AttributeSpec{Attributes: base, Seed: 7}); err != nil {
		return nil, err
	}
	total := int(float64(e.o.classifyRate) * e.o.classifyFor.Seconds())
	type aspect struct {
		ID    string `db:"id"`
		Agent string `db:"agent_id"`
	}
	var aspects []aspect
	if err := db.SelectContext(ctx, &aspects, `SELECT id, agent_id FROM entity_aspects ORDER BY id`); err != nil {
		return nil, err
	}
	// The attributes to classify: written unclassified first (as the agent
	// writes them before its classifier runs); a third restate a city.
	r := rand.New(rand.NewPCG(11, 12))
	ids := make([]string, total)
	targets := make([]string, total)
	agents := make([]string, total)
	contents := make([]string, total)
	for i := range total {
		a := aspects[r.IntN(len(aspects))]
		ids[i], targets[i], agents[i] = fmt.Sprintf("c%d", i), a.ID, a.Agent
		if i%3 == 0 {
			contents[i] = "Lives in " + []string{"Lisbon", "Oslo", "Quito", "Hobart", "Nantes"}[i%5]
		} else {
			contents[i] = fmt.Sprintf("Bought ticket number %d for the %d season", i, 2020+i%7)
		}
	}
	if _, err := db.ExecContext(ctx, `
		INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content, created_at, updated_at)
		SELECT id, agent, 'attribute', content, lower(content), now(), now()
		FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, agent, content)`,
		pq.Array(ids), pq.Array(agents), pq.Array(contents)); err != nil {
		return nil, err
	}

	cfg := config.Default()
	cfg.Maintenance.Database.URL = dbURL
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("BENCH_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	engine := supersession.New(db, nil, log, supersession.NewMetrics(reg), nil)
	hook := inline.New(db, nil, log, engine, inline.NewMetrics(reg))
	var mu sync.Mutex
	var lags []float64
	hook.ObserveLag = func(s float64) { mu.Lock(); lags = append(lags, s); mu.Unlock() }
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = hook.Run(hctx, func() *config.Config { return cfg }) }()
	for deadline := time.Now().Add(10 * time.Second); hook.Ready() != nil; {
		if time.Now().After(deadline) {
			cancel()
			return nil, fmt.Errorf("inline: listener never connected: %v", hook.Ready())
		}
		time.Sleep(10 * time.Millisecond)
	}

	logf("inline: %d classifications at %d/s", total, e.o.classifyRate)
	interval := time.Second / time.Duration(e.o.classifyRate)
	start := time.Now()
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := db.ExecContext(ctx, `UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, targets[i], ids[i]); err != nil {
			cancel()
			return nil, err
		}
	}
	sent := time.Since(start)
	for deadline := time.Now().Add(60 * time.Second); ; {
		var left int
		if err := db.GetContext(ctx, &left, `SELECT count(*) FROM supersessiond.classified`); err != nil {
			cancel()
			return nil, err
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	res := &inlineResult{Classified: total, TargetRate: e.o.classifyRate, AchievedRate: float64(total) / sent.Seconds(), Decided: len(lags)}
	if len(lags) > 0 {
		slices.Sort(lags)
		res.P50ms = lags[len(lags)*50/100] * 1000
		res.P99ms = lags[min(len(lags)-1, len(lags)*99/100)] * 1000
		res.MaxMs = lags[len(lags)-1] * 1000
	}
	return res, nil
}
