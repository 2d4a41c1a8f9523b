package compaction

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/metrics"
)

const namespace = "supersessiond"

// Metrics are the job's own collectors.
type Metrics struct {
	Retries        prometheus.Counter     // attempts claimed (counted before the LLM call)
	Completed      prometheus.Counter     // events re-compacted
	Rescheduled    prometheus.Counter     // attempts that failed and were given a next_attempt_at
	Failed         *prometheus.CounterVec // reason: max_attempts | no_range | messages_gone
	LLMErrors      *prometheus.CounterVec // kind: timeout | unavailable | http_status | garbage | canceled | not_configured
	FactsInserted  prometheus.Counter
	Backlog        prometheus.Gauge // stale pending events within lookback
	OldestStale    prometheus.Gauge // seconds
	BeyondLookback prometheus.Gauge
	AtStackCap     prometheus.Gauge   // where the job watches: pending at the stack's own retry cap
	Watching       prometheus.Gauge   // 1 where the job only watches
	ClaimsBlocked  prometheus.Counter // passes that stopped claiming: the stack's recovery held its lock
}

// NewMetrics creates the job's collectors and registers them on reg (when
// non-nil). Registering twice on one registry (two Job values in a process)
// shares the first registration's collectors instead of panicking.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Retries: metrics.Shared(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_retries_total",
			Help: "Retry attempts of stale compaction events, counted when claimed (before the LLM call).",
		})),
		Completed: metrics.Shared(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_completed_total",
			Help: "Stale compaction events re-compacted and marked completed.",
		})),
		Rescheduled: metrics.Shared(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_rescheduled_total",
			Help: "Failed retry attempts given a later next_attempt_at (exponential backoff with jitter).",
		})),
		Failed: metrics.Shared(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_failed_total",
			Help: "Compaction events given up (marked failed) by reason: max_attempts, no_range, messages_gone.",
		}, []string{"reason"})),
		LLMErrors: metrics.Shared(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_llm_errors_total",
			Help: "Failed re-compaction LLM calls by kind (timeout, unavailable, http_status, garbage, canceled, not_configured).",
		}, []string{"kind"})),
		FactsInserted: metrics.Shared(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_facts_inserted_total",
			Help: "Fact memories inserted by re-compaction (a repeated retry inserts nothing twice).",
		})),
		Backlog: metrics.Shared(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "compaction_stale_events",
			Help: "Pending compaction events older than staleAfter and within lookback, after the last run.",
		})),
		OldestStale: metrics.Shared(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "compaction_oldest_stale_age_seconds",
			Help: "Age of the oldest stale pending compaction event within lookback, after the last run (0 when none).",
		})),
		BeyondLookback: metrics.Shared(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "compaction_pending_beyond_lookback",
			Help: "Pending compaction events older than lookback: never retried automatically, they need an operator.",
		})),
		AtStackCap: metrics.Shared(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "compaction_at_stack_cap_events",
			Help: "Pending compaction events at the stack's own retry cap (clawbolt: 3), which it never retries again; counted where the daemon cannot re-compact and only watches (0 elsewhere).",
		})),
		Watching: metrics.Shared(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "compaction_watching",
			Help: "1 when the compaction job only watches (clawbolt's encrypted conversations: it cannot re-compact), 0 when it retries.",
		})),
		ClaimsBlocked: metrics.Shared(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "compaction_claims_blocked_total",
			Help: "Compaction passes that stopped claiming because the stack's own recovery (clawbolt's compaction_recovery:cleanup) held its advisory lock.",
		})),
	}
	// The labelled series exist at zero before the first event, so that a
	// healthy new daemon's dashboard shows zeros, not "No data".
	for _, reason := range []string{reasonMaxAttempts, reasonNoRange, reasonMessagesGone} {
		m.Failed.WithLabelValues(reason)
	}
	for _, kind := range append(llm.Kinds, kindNotConfigured) {
		m.LLMErrors.WithLabelValues(kind)
	}
	return m
}
