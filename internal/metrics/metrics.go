// Package metrics holds the daemon's Prometheus registry (its own, never the
// global default one, so tests and several daemons in one process cannot
// collide) and the runtime's metrics: job runs, durations and errors, config
// reloads, readiness, plus the Go, process and connection-pool collectors.
// Each job defines the metrics it owns next to its code, like its SQL, and
// registers them on Registry; the HTTP server exposes Registry at /metrics.
package metrics

import (
	"database/sql"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const namespace = "supersessiond"

// Metrics holds the collectors.
type Metrics struct {
	Registry *prometheus.Registry

	// Scheduled jobs.
	JobRuns        *prometheus.CounterVec   // job, result: ok | error | skipped
	JobErrors      *prometheus.CounterVec   // job
	JobDuration    *prometheus.HistogramVec // job
	JobLastSuccess *prometheus.GaugeVec     // job; unix seconds, 0 until the first success
	JobInterval    *prometheus.GaugeVec     // job; seconds, 0 while the job is off

	// Configuration and health.
	ConfigReloads      *prometheus.CounterVec // result: ok | error
	ConfigLastReloadOK prometheus.Gauge       // 1 when the last reload succeeded (or none happened)
	DatabaseUp         prometheus.Gauge
	Ready              prometheus.Gauge
}

// New registers the daemon's metrics plus the Go runtime, process and (when
// db is non-nil) connection-pool collectors.
func New(db *sql.DB) *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		JobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "job_runs_total",
			Help: "Scheduled job runs by result (ok, error, or skipped because another replica holds the tick or the previous run is still going).",
		}, []string{"job", "result"}),
		JobErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "job_errors_total",
			Help: "Job runs that ended in an error.",
		}, []string{"job"}),
		JobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "job_duration_seconds",
			Help:    "Duration of job runs.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10), // 10ms .. ~45min
		}, []string{"job"}),
		JobLastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "job_last_success_timestamp_seconds",
			Help: "Unix time of the job's last successful run.",
		}, []string{"job"}),
		JobInterval: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "job_interval_seconds",
			Help: "Longest gap between the job's next scheduled runs under the schedule in force; 0 while the job is off. Alerts measure the age of the last success in these.",
		}, []string{"job"}),
		ConfigReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "config_reloads_total",
			Help: "Configuration reloads by result; a failed reload keeps the previous configuration running.",
		}, []string{"result"}),
		ConfigLastReloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "config_last_reload_successful",
			Help: "1 if the last configuration reload succeeded (or none was attempted), 0 if it failed.",
		}),
		DatabaseUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "database_up",
			Help: "1 if the database answered the last health check.",
		}),
		Ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "ready",
			Help: "1 when /readyz reports ready.",
		}),
	}
	m.ConfigLastReloadOK.Set(1)
	for _, result := range []string{"ok", "error"} {
		m.ConfigReloads.WithLabelValues(result)
	}
	r.MustRegister(m.JobRuns, m.JobErrors, m.JobDuration, m.JobLastSuccess, m.JobInterval,
		m.ConfigReloads, m.ConfigLastReloadOK, m.DatabaseUp, m.Ready,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if db != nil {
		r.MustRegister(collectors.NewDBStatsCollector(db, "agent"))
	}
	return m
}

// jobResults are the values of job_runs_total's result label.
var jobResults = []string{"ok", "error", "skipped"}

// AddJob creates a scheduled job's series at zero, so that /metrics shows
// them from the start, before the job's first run: an alert on "no success
// for a while" needs a series that exists when the job never succeeded, and
// increase() needs the zero before the first error. A last-success time of 0
// means never.
func (m *Metrics) AddJob(name string) {
	for _, result := range jobResults {
		m.JobRuns.WithLabelValues(name, result)
	}
	m.JobErrors.WithLabelValues(name)
	m.JobDuration.WithLabelValues(name)
	m.JobLastSuccess.WithLabelValues(name)
	m.JobInterval.WithLabelValues(name)
}

// Shared registers c on reg and returns it, or returns the collector of the
// same description registered before: a job or engine built twice in one
// process (the console's engine beside the daemon's) counts in one series.
// A nil reg leaves c counted but not exported (one-shot commands).
func Shared[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("metrics: register " + err.Error())
	}
	return c
}
