package tombstones

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the job's own collectors.
type Metrics struct {
	Preserved prometheus.Counter
	Deleted   prometheus.Counter
	Released  prometheus.Counter
	Backlog   prometheus.Gauge
	Held      prometheus.Gauge
}

// NewMetrics registers the job's metrics on reg (nil: not registered, for
// tests that do not look at them).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "supersessiond", "tombstones"
	m := &Metrics{
		Preserved: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "preserved_total",
			Help: "Superseded soft-deleted documents kept as tombstones (embedding removed) because a live document of the same workspace cites them.",
		}),
		Deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "deleted_total",
			Help: "Soft-deleted documents hard-deleted at triage: not superseded, or cited by no live document of their workspace.",
		}),
		Released: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "released_total",
			Help: "Preserved tombstones hard-deleted on a later pass because their last live dependent was gone.",
		}),
		Backlog: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "backlog",
			Help: "Soft-deleted documents older than minAge awaiting triage, as counted at the end of the last pass.",
		}),
		Held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "preserved_held",
			Help: "Preserved tombstones in the database, as counted at the end of the last pass.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.Preserved, m.Deleted, m.Released, m.Backlog, m.Held)
	}
	return m
}
