package compaction_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/compaction"
)

// BenchmarkPass measures re-compaction throughput: passes over 1,000 stale
// events (8 messages each) with an LLM answering in 50 ms, at
// maxConcurrency 8. The ceiling is 8 / 50 ms = 160 events/s.
//
//	go test -run='^$' -bench=. ./compaction/
func BenchmarkPass(b *testing.B) {
	db := pgtest.New(b)
	db.SetMaxOpenConns(16) // as store.Open configures the daemon's pool
	srv := httptest.NewServer(bench.CompactionLLM(50 * time.Millisecond))
	defer srv.Close()
	c := config.Default()
	c.Maintenance.LLM = config.LLM{Endpoint: srv.URL + "/v1", Model: "bench", Timeout: 10 * time.Second, MaxConcurrency: 8}
	cfg := daemon.SettingsOf(c).Compaction
	job := compaction.New(jobs.Deps{DB: db.DB, LLM: llm.NewProvider(func(string) string { return "" }, nil)}, compaction.Options{})
	ctx := context.Background()
	const perPass = 1000
	var events int
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if _, _, _, err := bench.InsertCompactionBacklog(ctx, db, bench.CompactionBacklog{Events: perPass}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rep, err := job.Pass(ctx, cfg)
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Completed != perPass {
			b.Fatalf("completed %d of %d: %s", rep.Completed, perPass, rep.Text())
		}
		events += rep.Completed
	}
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
}
