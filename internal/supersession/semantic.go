package supersession

import (
	"context"
	"fmt"
	"sync"

	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/llm"
)

// resolve finds a verdict for every pending pair: from the cache (one query),
// else from the LLM while the run's budget lasts. Every pair gets an entry;
// one the LLM could not answer (or that is over budget) is marked failed so
// the plan treats it as "no contradiction" this run and asks again next run.
// No transaction is open while the LLM is asked. A dry run (cache false)
// asks but stores nothing.
func (e *Engine) resolve(ctx context.Context, cfg Settings, client *llm.Client, pending map[pairKey]pendingPair,
	groupOf map[*Attribute]*Group, budget *Budget, cache bool, t *Tally) (verdicts, error) {
	out := verdicts{}
	if len(pending) == 0 {
		return out, nil
	}
	olds := make(pq.ByteaArray, 0, len(pending))
	news := make(pq.ByteaArray, 0, len(pending))
	for k := range pending {
		olds = append(olds, k.old[:])
		news = append(news, k.new[:])
	}
	rows, err := e.db.QueryContext(ctx, e.sql.CachedVerdicts, client.Model(), olds, news)
	if err != nil {
		return nil, fmt.Errorf("supersession: read cached verdicts: %w", err)
	}
	for rows.Next() {
		var o, n []byte
		var v semanticVerdict
		if err := rows.Scan(&o, &n, &v.contradicts, &v.confidence, &v.reasoning); err != nil {
			rows.Close()
			return nil, fmt.Errorf("supersession: read cached verdicts: %w", err)
		}
		var k pairKey
		copy(k.old[:], o)
		copy(k.new[:], n)
		// A verdict cached before its secret was known must not carry it
		// into a proposal or a supersession's reason.
		v.reasoning = client.Redact(v.reasoning)
		out[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: read cached verdicts: %w", err)
	}
	t.SemanticCacheHits += len(out)
	e.metrics.LLMCacheHits.Add(float64(len(out)))

	timeout := cfg.SemanticTimeout
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		slots = make(chan struct{}, max(1, cfg.LLM.MaxConcurrency))
	)
	for k, p := range pending {
		if _, ok := out[k]; ok {
			continue
		}
		g := groupOf[p.old]
		if !budget.take() {
			out[k] = semanticVerdict{failed: true}
			t.skip(SkipSemanticPending, 1)
			g.Unsettled = true
			continue
		}
		pair := llm.Pair{Older: p.old.Content.String, OlderAt: p.old.CreatedAt, Newer: p.new.Content.String, NewerAt: p.new.CreatedAt,
			Aspect: g.AspectName}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			v, err := client.Contradiction(ctx, pair, timeout)
			verdict := semanticVerdict{contradicts: v.Contradicts, confidence: v.Confidence, reasoning: v.Reasoning}
			if err == nil && cache {
				// Cached the moment it arrives: another daemon that takes
				// this pair over (its claim expired while the LLM was slow)
				// finds the answer instead of asking again.
				e.cacheVerdict(ctx, client.Model(), k, verdict)
			}
			mu.Lock()
			defer mu.Unlock()
			e.recordAnswer(out, k, verdict, err, t)
			if err != nil {
				g.Unsettled = true
			}
		})
	}
	wg.Wait()
	return out, nil
}

// recordAnswer counts one LLM answer and records its verdict; a failure is
// "no contradiction for now", asked again on a later pass.
func (e *Engine) recordAnswer(out verdicts, k pairKey, v semanticVerdict, err error, t *Tally) {
	t.SemanticAsked++
	if err != nil {
		kind := llm.KindOf(err)
		if kind == "" {
			kind = "error"
		}
		e.metrics.LLMCalls.WithLabelValues(kind).Inc()
		t.SemanticFailures++
		t.skip(SkipSemanticFailed, 1)
		e.log.Warn("semantic contradiction check failed; treating as no contradiction for now", "kind", kind, "err", err)
		out[k] = semanticVerdict{failed: true}
		return
	}
	e.metrics.LLMCalls.WithLabelValues("ok").Inc()
	out[k] = v
}

// cacheVerdict stores one verdict. A failure to store costs a repeated
// question later, never a wrong decision, so it is logged and not returned.
func (e *Engine) cacheVerdict(ctx context.Context, model string, k pairKey, v semanticVerdict) {
	q, args, err := e.sql.StoreVerdicts.Bind(map[string]any{"model": model,
		"old_hashes": pq.ByteaArray{k.old[:]}, "new_hashes": pq.ByteaArray{k.new[:]}, "contradicts": pq.BoolArray{v.contradicts},
		"confidences": pq.Float64Array{v.confidence}, "reasonings": pq.StringArray{v.reasoning}})
	if err == nil {
		_, err = e.db.ExecContext(ctx, q, args...)
	}
	if err != nil {
		e.log.Warn("supersession: could not cache an LLM verdict; the pair may be asked again", "err", err)
	}
}
