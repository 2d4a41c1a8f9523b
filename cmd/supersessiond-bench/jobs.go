package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/supersessiond/supersessiond/internal/bench"
)

type tombstoneResult struct {
	Documents     int     `json:"documents"`
	SoftDeleted   int     `json:"soft_deleted"`
	Seconds       float64 `json:"seconds"`
	Preserved     int     `json:"preserved"`
	Deleted       int     `json:"deleted"`
	PerSec        float64 `json:"tombstones_per_sec"`
	PeakRSS       int64   `json:"peak_rss_bytes"`
	NaiveSeconds  float64 `json:"naive_seconds"`
	NaivePerSec   float64 `json:"naive_tombstones_per_sec"`
	NaiveCoverage string  `json:"naive_coverage"`
	Ratio         float64 `json:"speedup"`
	BatchSize     int     `json:"batch_size"`
}

// tombstones measures one reconcile pass over a generated documents table
// and the per-document baseline on an identical copy.
func (e *benchEnv) tombstones(ctx context.Context) (*tombstoneResult, error) {
	db, dbURL, err := e.newDB(ctx, "tombstones")
	if err != nil {
		return nil, err
	}
	corpus := bench.DefaultTombstoneCorpus()
	corpus.Documents = e.o.documents
	corpus.SoftDeleted = int(float64(e.o.documents) * e.o.deletedShare)
	logf("tombstones: generating %d documents, %d soft-deleted", corpus.Documents, corpus.SoftDeleted)
	stats, err := bench.GenerateTombstones(ctx, db, corpus)
	if err != nil {
		return nil, err
	}
	naiveDB, _, err := e.cloneDB(ctx, db, dbURL, "tombstones_naive")
	if err != nil {
		return nil, err
	}
	defer naiveDB.Close()

	cfgEnv, cleanup, err := writeConfig(fmt.Sprintf("maintenance:\n  tombstones:\n    batchSize: %d\n  log:\n    level: warn\n", e.o.tombstoneBatch))
	if err != nil {
		return nil, err
	}
	defer cleanup()
	logf("tombstones: supersessiond reconcile --once (batchSize %d)", e.o.tombstoneBatch)
	out, elapsed, rss, err := e.runBinary(dbURL, cfgEnv, "reconcile", "--once", "--json", "--budget", "30m")
	if err != nil {
		return nil, err
	}
	var rep struct {
		Examined  int `json:"examined"`
		Preserved int `json:"preserved"`
		Deleted   int `json:"deleted"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("reconcile report: %w: %s", err, out)
	}
	r := &tombstoneResult{
		Documents: int(stats.Documents), SoftDeleted: int(stats.SoftDeleted),
		Seconds: elapsed.Seconds(), Preserved: rep.Preserved, Deleted: rep.Deleted, PeakRSS: rss, BatchSize: e.o.tombstoneBatch,
	}
	r.PerSec = float64(rep.Examined) / r.Seconds

	logf("tombstones: naive baseline (one dependent query per document)")
	naive, err := bench.NaiveReconcile(ctx, naiveDB, 5*time.Minute, e.o.tombstoneBatch, 0)
	if err != nil {
		return nil, err
	}
	if naive.Preserved != rep.Preserved || naive.Deleted != rep.Deleted {
		return nil, fmt.Errorf("tombstones: the baseline disagrees: it preserved %d and deleted %d, the daemon %d and %d",
			naive.Preserved, naive.Deleted, rep.Preserved, rep.Deleted)
	}
	r.NaiveSeconds = naive.Took.Seconds()
	r.NaivePerSec = float64(naive.Examined) / r.NaiveSeconds
	r.NaiveCoverage = "all tombstones, same result"
	r.Ratio = r.PerSec / r.NaivePerSec
	return r, nil
}

type compactionResult struct {
	Events      int     `json:"events"`
	Completed   int     `json:"completed"`
	Seconds     float64 `json:"seconds"`
	PerSec      float64 `json:"events_per_sec"`
	LLMLatency  string  `json:"llm_latency"`
	Concurrency int     `json:"concurrency"`
}

// compaction measures one retry pass over a backlog of stale events against
// a local fake LLM answering after a set latency.
func (e *benchEnv) compaction(ctx context.Context) (*compactionResult, error) {
	db, dbURL, err := e.newDB(ctx, "compaction")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	logf("compaction: %d stale events", e.o.events)
	if _, _, _, err := bench.InsertCompactionBacklog(ctx, db, bench.CompactionBacklog{Events: e.o.events}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: bench.CompactionLLM(e.o.llmLatency)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfgEnv, cleanup, err := writeConfig(fmt.Sprintf(`maintenance:
  llm:
    endpoint: http://%s/v1
    model: bench
    maxConcurrency: %d
  log:
    level: warn
`, ln.Addr(), e.o.llmConcurrency))
	if err != nil {
		return nil, err
	}
	defer cleanup()
	logf("compaction: supersessiond compact --once (LLM latency %s, concurrency %d)", e.o.llmLatency, e.o.llmConcurrency)
	out, elapsed, _, err := e.runBinary(dbURL, cfgEnv, "compact", "--once", "--json")
	if err != nil {
		return nil, err
	}
	var rep struct {
		Completed int `json:"completed"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("compact report: %w: %s", err, out)
	}
	return &compactionResult{
		Events: e.o.events, Completed: rep.Completed, Seconds: elapsed.Seconds(),
		PerSec: float64(rep.Completed) / elapsed.Seconds(), LLMLatency: e.o.llmLatency.String(), Concurrency: e.o.llmConcurrency,
	}, nil
}
