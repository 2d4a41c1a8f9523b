package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
)

// inlineLLMResult is the inline hook's lag with the LLM judge on (SPEC
// §13): the scripted LLM answering each window after --inline-llm-latency,
// at the default maxConcurrency (4). The lags are the heuristic
// decisions' (the hook never waits for the LLM); the requests are the
// windows the background asker put to it, the rest deferred to the sweep.
type inlineLLMResult struct {
	Classified     int     `json:"classified"`
	AchievedRate   float64 `json:"achieved_rate"`
	Decided        int     `json:"decided"`
	P50ms          float64 `json:"p50_ms"`
	P99ms          float64 `json:"p99_ms"`
	MaxMs          float64 `json:"max_ms"`
	LLMLatency     string  `json:"llm_latency"`
	MaxConcurrency int     `json:"max_concurrency"`
	Requests       int     `json:"llm_requests"`
	Deferred       int     `json:"llm_windows_deferred"`
	Tokens         int     `json:"llm_tokens"`
	// Per1000 are requests and tokens per 1,000 classifications.
	RequestsPer1000 float64 `json:"llm_requests_per_1000"`
	TokensPer1000   float64 `json:"llm_tokens_per_1000"`
}

// inlineLLM sustains --classify-rate for --classify-for with the semantic
// fallback on, the scripted LLM answering slowly, and reports the lag and
// what the LLM was asked.
func (e *benchEnv) inlineLLM(ctx context.Context) (*inlineLLMResult, error) {
	db, dbURL, err := e.newDB(ctx, "inline_llm")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	total := int(float64(e.o.classifyRate) * e.o.classifyFor.Seconds())
	w, err := prepareClassifications(ctx, db, min(e.o.attributes, 50000), total)
	if err != nil {
		return nil, err
	}
	// As for the hook without the LLM: a daemon running beside a stack has
	// swept it, and its full pass left the key digests the hook narrows its
	// loads with, with the fallback on too (the pass here asks no LLM: the
	// digests are the heuristics' keys either way).
	logf("inline with the LLM: supersessiond sweep --once --full (the key digests a running daemon has)")
	cfgEnv, cleanup, err := writeConfig(liveConfig)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if _, _, _, err := e.runBinary(dbURL, cfgEnv, "sweep", "--once", "--full", "--json"); err != nil {
		return nil, fmt.Errorf("inline with the LLM: full pass: %w", err)
	}
	truth, err := llmtest.TruthFromAspects(strings.NewReader(""))
	if err != nil {
		return nil, err
	}
	srv := llmtest.Start(truth) // a truth that holds nothing: every window retires nothing
	defer srv.Close()
	srv.Set(llmtest.Fault{Kind: llmtest.Slow, Delay: e.o.inlineLLMLatency})
	edit := func(c *config.Config) {
		c.Memory.PipelineV2.Structural.SupersessionSemanticFallback = true
		c.Maintenance.LLM.Endpoint, c.Maintenance.LLM.Model = srv.Endpoint(), "scripted" // maxConcurrency: the default, 4
	}
	pol := supersession.DefaultPolicy()
	pol.MaxRequestsPerHour = 1 << 30 // the hook's capacity, not the budget, is measured
	db.SetMaxIdleConns(8)
	h, err := startHookWith(ctx, dbURL, edit, pol)
	if err != nil {
		return nil, err
	}
	logf("inline with the LLM: %d classifications at %d/s, the LLM answering in %s", total, e.o.classifyRate, e.o.inlineLLMLatency)
	sent, err := w.classifyParallel(ctx, db, 0, total, e.o.classifyRate)
	if err != nil {
		h.stop()
		return nil, err
	}
	if err := waitDrained(ctx, db, 60*time.Second); err != nil {
		h.stop()
		return nil, err
	}
	h.waitObserved(total, 5*time.Second)
	lags := h.lags()
	h.stop() // waits for the windows asked in the background
	res := &inlineLLMResult{Classified: total, AchievedRate: float64(total) / sent.Seconds(), Decided: len(lags),
		LLMLatency: e.o.inlineLLMLatency.String(), MaxConcurrency: config.Default().Maintenance.LLM.MaxConcurrency,
		Requests: srv.Requests(), Tokens: srv.Usage().Total()}
	res.P50ms, res.P99ms, res.MaxMs = percentile(lags, 50), percentile(lags, 99), percentile(lags, 100)
	for _, why := range []string{supersession.DeferBudget, supersession.DeferClaimed, supersession.DeferBackoff, supersession.DeferLater} {
		res.Deferred += int(testutil.ToFloat64(h.engine.Metrics().LLMDeferred.WithLabelValues(why)))
	}
	if total > 0 {
		res.RequestsPer1000 = 1000 * float64(res.Requests) / float64(total)
		res.TokensPer1000 = 1000 * float64(res.Tokens) / float64(total)
	}
	return res, nil
}

// printInlineLLM is the table's lines for r.
func printInlineLLM(tw io.Writer, r *inlineLLMResult) {
	fmt.Fprintf(tw, "inline+LLM: classifications\t%d at %.0f/s (LLM answering in %s, maxConcurrency %d)\t\n", r.Classified, r.AchievedRate, r.LLMLatency, r.MaxConcurrency)
	fmt.Fprintf(tw, "inline+LLM: heuristic lag p50 / p99 / max\t%.1f / %.1f / %.1f ms\tp99 ≤ 100 ms at 500/s\n", r.P50ms, r.P99ms, r.MaxMs)
	fmt.Fprintf(tw, "inline+LLM: LLM windows / tokens per 1,000 classifications\t%.1f / %.0f (%d requests, %d windows deferred to the sweep)\t\n",
		r.RequestsPer1000, r.TokensPer1000, r.Requests, r.Deferred)
}
