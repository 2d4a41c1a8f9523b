package tombstones

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
)

// BenchmarkReconcile measures one full pass over the corpus —
// 1,000,000 documents, 100,000 of them soft-deleted — set-based, then the
// per-document way (Honcho PR #457's shape) on an identical corpus, and
// reports the ratio. Generation is not timed.
//
//	go test -run='^$' -bench=Reconcile -benchtime=1x -timeout=30m ./tombstones/
//
// SUPERSESSIOND_BENCH_DOCUMENTS and SUPERSESSIOND_BENCH_TOMBSTONES change the
// scale; SUPERSESSIOND_BENCH_NAIVE_LIMIT > 0 times the per-document way on
// that many tombstones only and extrapolates.
func BenchmarkReconcile(b *testing.B) {
	corpus := bench.DefaultTombstoneCorpus()
	corpus.Documents = envInt(b, "SUPERSESSIOND_BENCH_DOCUMENTS", corpus.Documents)
	corpus.SoftDeleted = envInt(b, "SUPERSESSIOND_BENCH_TOMBSTONES", corpus.SoftDeleted)
	naiveLimit := envInt(b, "SUPERSESSIOND_BENCH_NAIVE_LIMIT", 0)
	cfg := Settings{Mode: jobs.ModeLive, MinAge: 5 * time.Minute, BatchSize: 500, KeepDeleted: 168 * time.Hour} // the defaults
	ctx := context.Background()

	var setBased *Report
	b.Run("set-based", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			db := pgtest.New(b)
			stats, err := bench.GenerateTombstones(ctx, db.DB, corpus)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("corpus: %d documents (%d MB with indexes), %d soft-deleted, %d of them superseded, %d citing; generated in %s",
				stats.Documents, stats.TableBytes>>20, stats.SoftDeleted, stats.Superseded, stats.Citing, stats.Took.Round(time.Second))
			for _, s := range planStatements(b, db.DB, cfg.BatchSize)[:2] {
				text, _, err := explain(ctx, db.DB, true, s.query, s.args...)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("EXPLAIN ANALYZE %s (first batch):\n%s", s.name, text)
			}
			job := New(jobs.Deps{DB: db.DB}, Options{Budget: time.Hour})
			b.StartTimer()
			r, err := job.Reconcile(ctx, cfg)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if r.Examined != int(stats.SoftDeleted) || r.Backlog != 0 || r.BudgetExhausted() {
				b.Fatalf("the pass did not cover the corpus: %+v", r)
			}
			b.Logf("set-based pass:\n%s", r.Text())
			b.ReportMetric(r.Duration().Seconds(), "s/pass")
			b.ReportMetric(float64(r.Duration().Nanoseconds())/float64(r.Examined), "ns/tombstone")
			setBased = r
		}
	})
	b.Run("per-document", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			db := pgtest.New(b)
			if _, err := bench.GenerateTombstones(ctx, db.DB, corpus); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			r, err := bench.NaiveReconcile(ctx, db.DB, cfg.MinAge, cfg.BatchSize, naiveLimit)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			var per time.Duration // mean time per examined tombstone
			if r.Examined > 0 {
				per = r.Took / time.Duration(r.Examined)
			}
			full := per * time.Duration(corpus.SoftDeleted)
			how := "measured in full"
			if naiveLimit > 0 {
				how = "extrapolated from " + strconv.Itoa(r.Examined) + " tombstones"
			}
			b.Logf("per-document pass: %d examined, %d preserved, %d deleted in %s; %s per tombstone; full pass %s (%s)",
				r.Examined, r.Preserved, r.Deleted, r.Took.Round(time.Millisecond), per, full.Round(time.Millisecond), how)
			b.ReportMetric(full.Seconds(), "s/pass")
			b.ReportMetric(float64(per.Nanoseconds()), "ns/tombstone")
			if setBased != nil {
				if naiveLimit == 0 && (r.Preserved != setBased.Preserved || r.Deleted != setBased.Deleted) {
					b.Fatalf("the two ways disagree: per-document %d preserved, %d deleted; set-based %d, %d",
						r.Preserved, r.Deleted, setBased.Preserved, setBased.Deleted)
				}
				speedup := full.Seconds() / setBased.Duration().Seconds()
				b.ReportMetric(speedup, "x-slower-than-set-based")
				b.Logf("set-based is %.1fx faster (%s vs %s for %d tombstones)", speedup,
					setBased.Duration().Round(time.Millisecond), full.Round(time.Millisecond), corpus.SoftDeleted)
			}
		}
	})
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}
