package supersession

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the supersession engine's, shared by the sweep and the inline
// hook (the source label tells them apart).
type Metrics struct {
	Supersessions *prometheus.CounterVec // source
	Proposals     *prometheus.CounterVec // source, mode
	Skips         *prometheus.CounterVec // source, reason
	LLMCalls      *prometheus.CounterVec // result: ok | timeout | unavailable | http_status | garbage | canceled
	LLMCacheHits  prometheus.Counter
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
			Help: "Semantic contradiction questions asked of the LLM, by result.",
		}, []string{"result"}),
		LLMCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "semantic_cache_hits_total",
			Help: "Semantic verdicts answered from the cache instead of the LLM.",
		}),
	}
	if reg != nil { // nil: counted but not exported (one-shot commands)
		reg.MustRegister(m.Supersessions, m.Proposals, m.Skips, m.LLMCalls, m.LLMCacheHits)
	}
	return m
}
