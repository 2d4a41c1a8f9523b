package supersession

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/metrics"
)

// Metrics are the supersession engine's, shared by the sweep and the inline
// hook (the source label tells them apart).
type Metrics struct {
	Supersessions *prometheus.CounterVec // source
	Proposals     *prometheus.CounterVec // source, mode
	Skips         *prometheus.CounterVec // source, reason
	LLMCalls      *prometheus.CounterVec // result: ok | timeout | unavailable | http_status | garbage | canceled
	LLMCacheHits  prometheus.Counter     // windows answered from the table
	LLMTokens     *prometheus.CounterVec // kind: prompt | completion (the reply's usage)
	LLMLatency    prometheus.Histogram
	LLMDeferred   *prometheus.CounterVec // reason: budget | claimed | backoff | later
	LLMIgnored    *prometheus.CounterVec // reason: not_listed | not_older | constraint | malformed | duplicate
}

// NewMetrics registers the engine's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Supersessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "supersessions_total",
			Help: "Attributes superseded by automatic jobs.",
		}, []string{"source"}),
		Proposals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "proposals_total",
			Help: "supersession_proposal rows written (mode shadow: would have applied; review: below supersessionMinConfidence).",
		}, []string{"source", "mode"}),
		Skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "supersession_skips_total",
			Help: "Attributes or pairs skipped, by reason (protected, constraint, empty_content, vetoed_by_operator, changed_since_decision, ...).",
		}, []string{"source", "reason"}),
		LLMCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_llm_calls_total",
			Help: "Requests to the LLM judge (one per window of an aspect), by result.",
		}, []string{"result"}),
		LLMCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_cache_hits_total",
			Help: "Windows answered from supersessiond.llm_windows instead of the LLM.",
		}),
		LLMTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_llm_tokens_total",
			Help: "Tokens the LLM judge's replies say they cost (usage), by kind: prompt or completion.",
		}, []string{"kind"}),
		LLMLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "supersessiond", Name: "semantic_llm_request_seconds",
			Help:    "Time the LLM judge took to answer one window, from sending the request to reading the answer.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 120},
		}),
		LLMDeferred: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_windows_deferred_total",
			Help: "Windows not asked on a pass and left for a later one, by reason: budget (maxRequestsPerHour), claimed (another asker has it), backoff (its last answer failed), later (handed to the background asker).",
		}, []string{"reason"}),
		LLMIgnored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_answer_items_ignored_total",
			Help: "Retirements an LLM reply named that were ignored, by reason: not_listed, not_older, constraint, malformed, duplicate.",
		}, []string{"reason"}),
	}
	// nil: counted but not exported (one-shot commands). A second engine
	// of the process (the console's, on its own pool) counts in the first
	// one's series.
	m.Supersessions = metrics.Shared(reg, m.Supersessions)
	m.Proposals = metrics.Shared(reg, m.Proposals)
	m.Skips = metrics.Shared(reg, m.Skips)
	m.LLMCalls = metrics.Shared(reg, m.LLMCalls)
	m.LLMCacheHits = metrics.Shared(reg, m.LLMCacheHits)
	m.LLMTokens = metrics.Shared(reg, m.LLMTokens)
	m.LLMLatency = metrics.Shared(reg, m.LLMLatency)
	m.LLMDeferred = metrics.Shared(reg, m.LLMDeferred)
	m.LLMIgnored = metrics.Shared(reg, m.LLMIgnored)
	for _, result := range append([]string{"ok"}, llm.Kinds...) {
		m.LLMCalls.WithLabelValues(result)
	}
	return m
}

// skipReasons are the reasons an automatic pass skips for, and
// proposalModes the modes it proposes in.
var (
	skipReasons = []string{SkipProtected, SkipConstraint, SkipEmptyContent, SkipInvalidUTF8, SkipTooLong, SkipBadTime,
		SkipUnknownKind, SkipDanglingAspect, SkipVetoed, SkipSemanticFailed, SkipSemanticPending, SkipChanged,
		SkipDuplicate, SkipWriteFailed, SkipHeuristicsFailed}
	proposalModes = []Mode{ModeShadow, ModeReview}
)

// CountsFor makes the engine's series for a job that decides with it
// (pass.Source), at zero for every known label value, so that a healthy
// new daemon's dashboard shows zeros, not "No data", before the first
// event.
func (e *Engine) CountsFor(source string) {
	e.metrics.Supersessions.WithLabelValues(source)
	for _, m := range proposalModes {
		e.metrics.Proposals.WithLabelValues(source, string(m))
	}
	for _, reason := range skipReasons {
		e.metrics.Skips.WithLabelValues(source, reason)
	}
}

// Metrics are the engine's metrics (tests, the bench).
func (e *Engine) Metrics() *Metrics { return e.metrics }
