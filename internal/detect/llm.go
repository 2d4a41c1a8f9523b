package detect

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// LLMJudge is the configured LLM as `eval --llm` uses it: it judges as the
// daemon would (SPEC §13), the heuristics first, then windows of what they
// left.
type LLMJudge struct {
	Model         string
	Gate          supersession.Gate
	MaxStatements int
	// Concurrency is how many aspects are judged at once (the client
	// bounds its requests in flight on its own).
	Concurrency int
	Ask         supersession.Asker
	// Now is the clock latencies are measured with; default time.Now.
	Now func() time.Time
}

// LLMCounts is what the LLM did and cost in an evaluation.
type LLMCounts struct {
	Model         string
	Gate          supersession.Gate
	MaxStatements int
	// Windows the judgment needed; Requests made for them (a window
	// asked before in the same run is answered from the run's cache).
	Windows, Requests, Cached int
	// Failures are the requests that got no usable answer, by kind.
	Failures map[string]int
	// Ignored are the retirements replies named that the window check
	// refused, by reason; Unowned those of pairs a window did not settle.
	Ignored map[string]int
	Unowned int
	Usage   llm.Usage
	// Latencies of the requests, failed ones included.
	Latencies []time.Duration
	// Settled are the labelled pairs the LLM settled (the others were the
	// heuristics' or nobody's), scored: retired at or above the minimum
	// confidence versus the label.
	Settled Counts
}

// Percentile is the nearest-rank percentile of the latencies (p in 0..100).
func (c *LLMCounts) Percentile(p float64) time.Duration {
	if len(c.Latencies) == 0 {
		return 0
	}
	ls := slices.Clone(c.Latencies)
	slices.Sort(ls)
	rank := int(p/100*float64(len(ls))+0.999999) - 1
	return ls[min(max(rank, 0), len(ls)-1)]
}

// Per1000 is n per 1,000 of units.
func Per1000(n, units int) float64 {
	if units == 0 {
		return 0
	}
	return float64(n) * 1000 / float64(units)
}

// asker wraps the LLM for one evaluation: it asks each distinct window
// once (concurrent aspects with the same window wait for one answer), and
// counts requests, failures, refusals, tokens and latency.
type asker struct {
	j      LLMJudge
	mu     sync.Mutex
	asked  map[[32]byte]*answer
	counts *LLMCounts
}

type answer struct {
	done chan struct{}
	v    llm.WindowVerdict
	err  error
}

func newAsker(j LLMJudge) *asker {
	if j.Now == nil {
		j.Now = time.Now
	}
	return &asker{j: j, asked: map[[32]byte]*answer{}, counts: &LLMCounts{Model: j.Model, Gate: j.Gate,
		MaxStatements: j.MaxStatements, Failures: map[string]int{}, Ignored: map[string]int{}}}
}

func (a *asker) ask(ctx context.Context, req llm.WindowRequest) (llm.WindowVerdict, error) {
	k := req.Key(a.j.Model)
	a.mu.Lock()
	a.counts.Windows++
	if ans, ok := a.asked[k]; ok {
		a.counts.Cached++
		a.mu.Unlock()
		<-ans.done
		return ans.v, ans.err
	}
	ans := &answer{done: make(chan struct{})}
	a.asked[k] = ans
	a.mu.Unlock()
	began := a.j.Now()
	ans.v, ans.err = a.j.Ask(ctx, req)
	took := a.j.Now().Sub(began)
	close(ans.done)

	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.counts
	c.Requests++
	c.Latencies = append(c.Latencies, took)
	c.Usage = c.Usage.Add(ans.v.Usage)
	if ans.err != nil {
		kind := llm.KindOf(ans.err)
		if kind == "" {
			kind = "error"
		}
		c.Failures[kind]++
	}
	for why, n := range ans.v.Ignored {
		c.Ignored[why] += n
	}
	return ans.v, ans.err
}

// judgeAll judges the groups, LLM or not, Concurrency at a time, and
// returns the judgments in the groups' order.
func judgeAll(groups []*supersession.Group, th supersession.Thresholds, a *asker) []supersession.Judgment {
	out := make([]supersession.Judgment, len(groups))
	if a == nil {
		for i, g := range groups {
			out[i] = supersession.Judge(g, th)
		}
		return out
	}
	wj := supersession.WindowJudge{Gate: a.j.Gate, MaxStatements: a.j.MaxStatements, Ask: a.ask}
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(a.j.Concurrency, 1))
	for i, g := range groups {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			out[i] = supersession.JudgeWindows(context.Background(), g, th, wj)
		})
	}
	wg.Wait()
	for _, j := range out {
		for _, w := range j.Windows {
			a.counts.Unowned += w.Unowned
		}
	}
	return out
}

// settled scores a pair the LLM settled.
func (c *LLMCounts) settle(v supersession.PairVerdict, label bool, min float64) {
	if v.Method == supersession.MethodSemantic {
		c.Settled.add(label, v.Confidence > 0 && v.Confidence >= min)
	}
}

// write prints what the LLM did and cost; units names what per1000 counts
// ("statements", "pairs").
func (c *LLMCounts) write(w io.Writer, units string, n int) {
	fmt.Fprintf(w, "\nLLM judge: model %s, gate %s, at most %d statements a window\n", c.Model, c.Gate, c.MaxStatements)
	fmt.Fprintf(w, "  windows %d: %d requests, %d answered from this run's cache; %d failed%s\n", c.Windows, c.Requests, c.Cached,
		total(c.Failures), byReason(c.Failures))
	fmt.Fprintf(w, "  tokens %d prompt + %d completion = %d; latency p50 %s, p95 %s\n", c.Usage.PromptTokens, c.Usage.CompletionTokens,
		c.Usage.Total(), c.Percentile(50).Round(time.Millisecond), c.Percentile(95).Round(time.Millisecond))
	fmt.Fprintf(w, "  per 1,000 %s: %.1f requests, %.0f tokens\n", units, Per1000(c.Requests, n), Per1000(c.Usage.Total(), n))
	p, pok := c.Settled.Precision()
	r, rok := c.Settled.Recall()
	fmt.Fprintf(w, "  pairs the LLM settled: %d (TP %d, FP %d, FN %d, TN %d; precision %s, recall %s)\n", c.Settled.N(),
		c.Settled.TP, c.Settled.FP, c.Settled.FN, c.Settled.TN, pct(p, pok), pct(r, rok))
	if n := total(c.Ignored); n > 0 || c.Unowned > 0 {
		fmt.Fprintf(w, "  retirements ignored: %d refused by the window check%s, %d of pairs the window did not settle\n", n,
			byReason(c.Ignored), c.Unowned)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func byReason(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
