package supersession

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/supersessiond/supersessiond/internal/llm"
)

// asking is how one pass asks the LLM.
type asking struct {
	client  *llm.Client
	policy  Policy
	timeout time.Duration // one request's
	budget  *Budget       // the run's windows
	dryRun  bool          // ask, store nothing, claim nothing
}

// claimFor is how long a window's claim lasts: past the request's timeout,
// so that a slow answer is not asked again by another replica meanwhile.
func (a asking) claimFor() time.Duration { return a.timeout + time.Minute }

// Why a window was not asked this pass (the deferred-windows metric).
const (
	DeferBudget  = "budget"  // maxRequestsPerHour, or the run's own budget, is spent
	DeferClaimed = "claimed" // another asker (replica, the hook, a sweep) is asking it
	DeferBackoff = "backoff" // its last answer failed; it waits before it is asked again
	DeferLater   = "later"   // an aspect the background asker had no room for (counted per aspect): the sweep asks
)

// asked is one window of a pass and its key.
type asked struct {
	w   *Window
	key [32]byte
}

// resolve finds a verdict for every pending pair, a window at a time (SPEC
// §13): the pending pairs of each group are covered by windows
// (planWindows); a window answered before (by any replica, before any
// restart) is answered from the table; the others are claimed within the
// budgets and asked, outside any transaction, concurrently. A window that
// is not answered this pass (over budget, claimed by another asker, backing
// off, failed) leaves its pairs failed,
// "no contradiction for now", and its group Unsettled: its aspect stays
// recorded as changed and is asked on a later pass.
func (e *Engine) resolve(ctx context.Context, a asking, pending map[pairKey]pendingPair, groupOf map[*Attribute]*Group, t *Tally) (verdicts, error) {
	out := verdicts{}
	windows := windowsOf(pending, groupOf, a.policy.MaxStatements)
	keys := make([][32]byte, len(windows))
	for i, w := range windows {
		keys[i] = w.Key(a.client.Model())
	}
	states, err := e.windows.read(ctx, keys)
	if err != nil {
		return nil, err
	}
	var open []asked
	for i, w := range windows {
		st := states[keys[i]]
		switch {
		case st.answered:
			st.verdict.Reasoning = a.client.Redact(st.verdict.Reasoning) // stored before a secret was known
			e.settle(out, w, st.verdict, t)
			t.SemanticCacheHits++
			e.metrics.LLMCacheHits.Inc()
		case st.busy:
			e.deferWindow(out, w, DeferClaimed, t)
		case st.waiting:
			e.deferWindow(out, w, DeferBackoff, t)
		default:
			open = append(open, asked{w, keys[i]})
		}
	}
	if len(open) > 0 {
		e.askNow(ctx, a, open, out, t)
	}
	return out, nil
}

// windowsOf covers the pending pairs of each group with windows, groups in
// (agent, aspect) order so a pass asks in a stable order.
func windowsOf(pending map[pairKey]pendingPair, groupOf map[*Attribute]*Group, limit int) []*Window {
	byGroup := map[*Group][]pendingPair{}
	var groups []*Group
	for _, pp := range pending {
		g := groupOf[pp.old]
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], pp)
	}
	slices.SortFunc(groups, func(a, b *Group) int {
		if a.AgentID != b.AgentID {
			return cmpString(a.AgentID, b.AgentID)
		}
		return cmpString(a.AspectID, b.AspectID)
	})
	var out []*Window
	for _, g := range groups {
		out = append(out, planWindows(g, byGroup[g], limit)...)
	}
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// askNow claims the open windows within the run's and the hour's budgets
// (a dry run claims nothing) and asks the claimed ones concurrently (the
// client bounds how many at once); the others are deferred.
func (e *Engine) askNow(ctx context.Context, a asking, open []asked, out verdicts, t *Tally) {
	claimed := map[[32]byte]bool{}
	spentOut := false
	if a.dryRun {
		for _, o := range open {
			if a.budget.take() {
				claimed[o.key] = true
			}
		}
	} else if n := a.budget.left; n > 0 {
		keys := make([][32]byte, len(open))
		for i, o := range open {
			keys[i] = o.key
		}
		var err error
		claimed, spentOut, err = e.windows.claim(ctx, keys, a.client.Model(), n, a.policy.MaxRequestsPerHour, a.claimFor())
		if err != nil {
			// Asked nothing: every window waits for a later pass, as
			// over budget.
			e.log.Warn("supersession: could not claim the LLM's windows; they are asked on a later pass", "err", err)
			claimed = map[[32]byte]bool{}
		}
		a.budget.left -= len(claimed)
	}
	var ask []asked
	for _, o := range open {
		if claimed[o.key] {
			ask = append(ask, o)
			continue
		}
		why := DeferBudget
		if !spentOut && a.budget.left > 0 {
			why = DeferClaimed // claimed by another between our read and our claim
		}
		e.deferWindow(out, o.w, why, t)
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, o := range ask {
		wg.Go(func() {
			v, err := e.ask(ctx, a, o)
			mu.Lock()
			defer mu.Unlock()
			e.tallyAnswer(v, err, t)
			if err != nil {
				o.w.failed(out)
				o.w.Group.Unsettled = true
				return
			}
			e.settle(out, o.w, v, t)
		})
	}
	wg.Wait()
}

// ask puts one claimed window to the LLM and stores the answer the moment
// it arrives (another asker that finds the window then reuses it), or gives
// the claim back to back off. A dry run stores nothing.
func (e *Engine) ask(ctx context.Context, a asking, o asked) (llm.WindowVerdict, error) {
	v, err := a.client.Window(ctx, o.w.Request(), a.timeout)
	e.countAnswer(v, err)
	if a.dryRun {
		return v, err
	}
	if err != nil {
		if ferr := e.windows.fail(context.WithoutCancel(ctx), o.key, err); ferr != nil {
			e.log.Warn("supersession: could not record a failed LLM window; its claim expires", "err", ferr)
		}
		e.log.Warn("semantic contradiction check failed; treating as no contradiction for now", "kind", kindOf(err), "err", err)
		return v, err
	}
	if serr := e.windows.answer(context.WithoutCancel(ctx), o.key, v); serr != nil {
		e.log.Warn("supersession: could not store an LLM window's answer; the window may be asked again", "err", serr)
	}
	return v, nil
}

// backgroundBatches is how many batches the background asker holds at
// once (asker.go); a batch beyond them is left to the sweep (its aspects
// recorded as owed the LLM's answer, unclaimed).
const backgroundBatches = 2

// WaitAsked waits until the windows handed to the background asker are
// answered or given up (tests, and a clean stop).
func (e *Engine) WaitAsked() { e.pending.Wait() }

// settle maps a window's answer onto the pairs it settles and counts what
// the reply named and was ignored.
func (e *Engine) settle(out verdicts, w *Window, v llm.WindowVerdict, t *Tally) {
	// Retirements of pairs the window does not settle (another window's,
	// or the heuristics') are no error of the reply: they are not used.
	got, _ := w.answer(v)
	for k, sv := range got {
		out[k] = sv
	}
	t.SemanticIgnored += v.IgnoredTotal()
}

// deferWindow leaves a window's pairs unanswered this pass, its group to be
// decided again later.
func (e *Engine) deferWindow(out verdicts, w *Window, why string, t *Tally) {
	w.failed(out)
	w.Group.Unsettled = true
	t.SemanticDeferred++
	t.skip(SkipSemanticPending, len(w.Pairs))
	e.metrics.LLMDeferred.WithLabelValues(why).Inc()
}

// tallyAnswer counts one answer in the pass's tally.
func (e *Engine) tallyAnswer(v llm.WindowVerdict, err error, t *Tally) {
	t.SemanticAsked++
	t.SemanticTokens += v.Usage.Total()
	if err != nil {
		t.SemanticFailures++
		t.skip(SkipSemanticFailed, 1)
	}
}

// countAnswer counts one request in the metrics: its result, its tokens
// (the reply's usage, even when unreadable), its latency and what the
// reply named that was ignored.
func (e *Engine) countAnswer(v llm.WindowVerdict, err error) {
	result := "ok"
	if err != nil {
		result = kindOf(err)
	}
	e.metrics.LLMCalls.WithLabelValues(result).Inc()
	e.metrics.LLMTokens.WithLabelValues("prompt").Add(float64(v.Usage.PromptTokens))
	e.metrics.LLMTokens.WithLabelValues("completion").Add(float64(v.Usage.CompletionTokens))
	if v.Latency > 0 {
		e.metrics.LLMLatency.Observe(v.Latency.Seconds())
	}
	for why, n := range v.Ignored {
		e.metrics.LLMIgnored.WithLabelValues(why).Add(float64(n))
	}
}

func kindOf(err error) string {
	if k := llm.KindOf(err); k != "" {
		return k
	}
	return "error"
}
