// Command supersessiond-bench measures the daemon at scale against the naive
// baselines, on a throwaway PostgreSQL (or --database-url), and prints a
// table followed, as its last line, by one JSON object with every figure.
//
// The sweep, tombstone and compaction passes run the real supersessiond
// binary (--binary), so the time and peak RSS reported are the daemon's own;
// the inline hook runs in-process so every lag can be observed exactly.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

type options struct {
	binary           string
	databaseURL      string
	attributes       int
	baselineAspects  int
	documents        int
	deletedShare     float64
	tombstoneBatch   int
	events           int
	llmLatency       time.Duration
	llmConcurrency   int
	classifyRate     int
	classifyFor      time.Duration
	inlineRates      []int
	inlineLLMLatency time.Duration
	inlineStep       time.Duration
	changeShare      float64
	observations     int
	peers            int
	only             string
}

// result is every figure, in the JSON printed last.
type result struct {
	Machine string `json:"machine"`

	Heuristics struct {
		DecisionsPerSec float64 `json:"decisions_per_sec"`
		Decisions       int     `json:"decisions"`
	} `json:"heuristics"`

	Sweep *sweepResult `json:"sweep,omitempty"`

	Inline *inlineResult `json:"inline,omitempty"`
	// InlineLLM is the inline hook's lag with the LLM judge on.
	InlineLLM *inlineLLMResult `json:"inline_llm,omitempty"`

	Tombstones *tombstoneResult `json:"tombstones,omitempty"`

	Compaction *compactionResult `json:"compaction,omitempty"`

	Honcho *honchoResult `json:"honcho,omitempty"`
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/supersessiond", "the supersessiond binary to measure")
	flag.StringVar(&o.databaseURL, "database-url", "", "a PostgreSQL server URL where databases may be created (default: start a throwaway cluster)")
	flag.IntVar(&o.attributes, "attributes", 200000, "active attributes for the sweep")
	flag.IntVar(&o.baselineAspects, "baseline-aspects", 0, "aspects the naive sweep covers (0: all; otherwise extrapolated per attribute)")
	flag.IntVar(&o.documents, "documents", 200000, "documents for tombstone reconciliation")
	flag.Float64Var(&o.deletedShare, "deleted-share", 0.1, "share of documents soft-deleted")
	flag.IntVar(&o.tombstoneBatch, "tombstone-batch", 500, "maintenance.tombstones.batchSize for the reconcile pass")
	flag.IntVar(&o.events, "events", 1000, "stale compaction events")
	flag.DurationVar(&o.llmLatency, "llm-latency", 50*time.Millisecond, "latency of the fake LLM for compaction")
	flag.IntVar(&o.llmConcurrency, "llm-concurrency", 8, "maintenance.llm.maxConcurrency for compaction")
	flag.IntVar(&o.classifyRate, "classify-rate", 500, "classifications per second for the inline-hook lag")
	flag.DurationVar(&o.classifyFor, "classify-for", 20*time.Second, "how long to sustain the classification rate")
	rates := flag.String("inline-rates", "100,200,300,400,500,750,1000,1500,2000,3000,4000", "classification rates the inline search tries, in order (it stops at the first that misses)")
	flag.DurationVar(&o.inlineStep, "inline-step", 8*time.Second, "how long the inline search sustains each rate")
	flag.DurationVar(&o.inlineLLMLatency, "inline-llm-latency", 300*time.Millisecond, "how long the scripted LLM takes to answer a window, for the inline lag with the LLM on")
	flag.Float64Var(&o.changeShare, "change-share", 0.001, "share of the attributes changed before the incremental sweep")
	flag.IntVar(&o.observations, "observations", 1_000_000, "Honcho observations for the honcho run")
	flag.IntVar(&o.peers, "peers", 10_000, "Honcho peers the observations are spread over (Zipf sizes)")
	flag.StringVar(&o.only, "only", "", "comma-separated subset: heuristics,sweep,inline,inline-llm,tombstones,compaction,honcho")
	flag.Parse()
	for _, r := range strings.Split(*rates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: --inline-rates: %q is not a positive rate\n", r)
			os.Exit(2)
		}
		o.inlineRates = append(o.inlineRates, n)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (o options) want(part string) bool {
	if o.only == "" {
		return true
	}
	for _, p := range strings.Split(o.only, ",") {
		if strings.TrimSpace(p) == part {
			return true
		}
	}
	return false
}

func run(o options, out io.Writer) error {
	ctx := context.Background()
	bin, err := filepath.Abs(o.binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no supersessiond binary at %s: run `make build` (make bench does)", bin)
	}
	o.binary = bin
	server := o.databaseURL
	if server == "" {
		logf("starting a throwaway PostgreSQL")
		c, err := pgcluster.Start(ctx, pgcluster.Options{ExtraSettings: map[string]string{
			"shared_buffers": "1GB", "work_mem": "64MB", "maintenance_work_mem": "512MB", "max_wal_size": "4GB",
		}})
		if err != nil {
			return err
		}
		defer c.Stop()
		defer c.StopOnSignal()()
		server = c.URL("postgres")
	}
	env := &benchEnv{server: server, o: o}
	defer env.dropAll()
	var res result
	res.Machine = fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())

	if o.want("heuristics") {
		logf("heuristics: deciding pairs for 3s on one goroutine")
		res.Heuristics.Decisions, res.Heuristics.DecisionsPerSec = benchHeuristics(3 * time.Second)
	}
	if o.want("sweep") {
		if res.Sweep, err = env.sweep(ctx); err != nil {
			return err
		}
	}
	if o.want("inline") {
		if res.Inline, err = env.inline(ctx); err != nil {
			return err
		}
	}
	if o.want("inline-llm") {
		if res.InlineLLM, err = env.inlineLLM(ctx); err != nil {
			return err
		}
	}
	if o.want("tombstones") {
		if res.Tombstones, err = env.tombstones(ctx); err != nil {
			return err
		}
	}
	if o.want("compaction") {
		if res.Compaction, err = env.compaction(ctx); err != nil {
			return err
		}
	}
	if o.want("honcho") {
		if res.Honcho, err = env.honcho(ctx); err != nil {
			return err
		}
	}
	printTable(out, res)
	line, _ := json.Marshal(res)
	fmt.Fprintln(out, string(line))
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// benchEnv creates databases on the server and runs the binary against them.
type benchEnv struct {
	server  string
	o       options
	n       int
	created []string // databases to drop at the end
}

// createDB creates database name with stmt (CREATE DATABASE name ...),
// replacing one of that name a previous run left, and remembers to drop it.
func (e *benchEnv) createDB(ctx context.Context, name, stmt string) error {
	admin, err := sqlx.Open("postgres", e.server)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := admin.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	e.created = append(e.created, name)
	return nil
}

// dropAll drops the databases the run created: on a server given with
// --database-url they would otherwise stay, gigabytes of them at full scale.
func (e *benchEnv) dropAll() {
	admin, err := sqlx.Open("postgres", e.server)
	if err != nil {
		return
	}
	defer admin.Close()
	for _, name := range e.created {
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			logf("could not drop database %s: %v", name, err)
		}
	}
}

// newDB creates a fresh database (emptyDB) with the reference schema and
// migrations.
func (e *benchEnv) newDB(ctx context.Context, name string) (*sqlx.DB, string, error) {
	db, dbURL, err := e.emptyDB(ctx, name)
	if err != nil {
		return nil, "", err
	}
	if _, err := schema.Migrate(ctx, db, schema.ReferencePlan(), schema.Options{Reference: true}); err != nil {
		db.Close()
		return nil, "", err
	}
	return db, dbURL, nil
}

// liveConfig is the agent.yaml of the binary's runs: live, quiet.
const liveConfig = "memory:\n  pipelineV2:\n    shadowMode: false\nmaintenance:\n  log:\n    level: warn\n"

// writeConfig writes an agent.yaml for one phase and returns the env that
// points the binary at it.
func writeConfig(body string) ([]string, func(), error) {
	dir, err := os.MkdirTemp("", "supersessiond-bench-")
	if err != nil {
		return nil, nil, err
	}
	p := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		return nil, nil, err
	}
	return []string{"SUPERSESSIOND_CONFIG=" + p}, func() { os.RemoveAll(dir) }, nil
}

// cloneDB copies a database with CREATE DATABASE ... TEMPLATE (a file copy,
// much faster than generating the data again). src must have no sessions.
func (e *benchEnv) cloneDB(ctx context.Context, src *sqlx.DB, srcURL, name string) (*sqlx.DB, string, error) {
	src.Close()
	su, err := url.Parse(srcURL)
	if err != nil {
		return nil, "", err
	}
	e.n++
	name = fmt.Sprintf("bench_%s_%d", name, e.n)
	if err := e.createDB(ctx, name, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, strings.TrimPrefix(su.Path, "/"))); err != nil {
		return nil, "", fmt.Errorf("clone database: %w", err)
	}
	su.Path = "/" + name
	db, err := sqlx.Open("postgres", su.String())
	return db, su.String(), err
}

// runBinary runs supersessiond with args against dbURL and returns its
// stdout, wall time and peak RSS.
func (e *benchEnv) runBinary(dbURL string, extraEnv []string, args ...string) ([]byte, time.Duration, int64, error) {
	cmd := exec.Command(e.o.binary, args...)
	cmd.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+dbURL)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stderr = os.Stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, 0, err
	}
	// The child's rusage maxrss would include this process's own peak
	// (Linux folds the pre-exec address space, shared through vfork, into
	// it), so the child's VmHWM is sampled from /proc instead: it belongs to
	// the address space the binary got at exec.
	var rss atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > rss.Load() {
				rss.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-sampled
	elapsed := time.Since(start)
	out := stdout.Bytes()
	if err != nil {
		return out, elapsed, rss.Load(), fmt.Errorf("supersessiond %s: %w", strings.Join(args, " "), err)
	}
	return out, elapsed, rss.Load(), nil
}

// vmHWM reads a process's peak resident set size, or 0 once it is gone.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func printTable(w io.Writer, r result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE\tVALUE\tGOAL\n")
	fmt.Fprintf(tw, "heuristic decisions/s (1 goroutine)\t%.0f\t(on no hot path: the sweep decides analysed pairs)\n", r.Heuristics.DecisionsPerSec)
	if s := r.Sweep; s != nil {
		fmt.Fprintf(tw, "sweep: attributes\t%d (%d aspects with siblings, largest %d, %d pairs)\t\n", s.Data.Attributes, s.Data.AspectsWithSiblings, s.Data.LargestAspect, s.Data.Pairs)
		fmt.Fprintf(tw, "sweep: read floor (one streaming read)\t%.2f s (the faster of: as planned %.2f s, through the sibling index %.2f s)\t\n",
			s.FloorSeconds, s.Floor.Planned, s.Floor.ByIndex)
		fmt.Fprintf(tw, "sweep: full pass\t%.2f s (%.2f× the floor), %d supersessions written\t≤ 2.0× the floor\n", s.Seconds, s.FloorRatio, s.Supersessions)
		fmt.Fprintf(tw, "sweep: full pass again, nothing to write\t%.2f s (%.2f× the floor)\t\n", s.Again.Seconds, s.Again.FloorRatio)
		fmt.Fprintf(tw, "sweep: incremental after %d changes\t%.2f s (%.1f%% of the full pass), %d aspects (%d narrowed by their keys), %d attributes read\t≤ 5%%\n",
			s.Incremental.Changed, s.Incremental.Seconds, 100*s.Incremental.Seconds/s.Seconds, s.Incremental.Aspects,
			s.Incremental.Narrowed, s.Incremental.Attributes)
		fmt.Fprintf(tw, "sweep: throughput\t%.0f attributes/s\t\n", s.AttributesPerSec)
		fmt.Fprintf(tw, "sweep: peak RSS\t%.0f MB\t≤ 150 MB\n", float64(s.PeakRSS)/1e6)
		fmt.Fprintf(tw, "sweep: supersessions / planted\t%d / %d\t\n", s.Supersessions, s.Data.Contradictions)
		fmt.Fprintf(tw, "sweep: naive (query per aspect)\t%.0f attributes/s (%s)\t\n", s.Naive.AttributesPerSec, s.Naive.Coverage)
		fmt.Fprintf(tw, "sweep: speed-up over naive\t%.1f×\t≥ 20×\n", s.Ratio)
	}
	if i := r.Inline; i != nil {
		fmt.Fprintf(tw, "inline: classifications\t%d at %.0f/s\t\n", i.Classified, i.AchievedRate)
		fmt.Fprintf(tw, "inline: lag p50 / p99 / max\t%.1f / %.1f / %.1f ms\tp99 ≤ 100 ms at 500/s\n", i.P50ms, i.P99ms, i.MaxMs)
		fmt.Fprintf(tw, "inline: highest rate with p99 ≤ 100 ms\t%d/s\t≥ 2,000/s\n", i.MaxRate)
	}
	if i := r.InlineLLM; i != nil {
		printInlineLLM(tw, i)
	}
	if t := r.Tombstones; t != nil {
		fmt.Fprintf(tw, "tombstones: documents / soft-deleted\t%d / %d\t\n", t.Documents, t.SoftDeleted)
		fmt.Fprintf(tw, "tombstones: pass\t%.1f s (%d preserved, %d deleted)\t≤ 20 s per 100,000 among 1,000,000\n", t.Seconds, t.Preserved, t.Deleted)
		fmt.Fprintf(tw, "tombstones: throughput\t%.0f tombstones/s\t\n", t.PerSec)
		fmt.Fprintf(tw, "tombstones: naive (query per document)\t%.0f tombstones/s (%s)\t\n", t.NaivePerSec, t.NaiveCoverage)
		fmt.Fprintf(tw, "tombstones: speed-up over naive\t%.1f×\t≥ 20×\n", t.Ratio)
	}
	if c := r.Compaction; c != nil {
		fmt.Fprintf(tw, "compaction: events\t%d in %.1f s (LLM %s, concurrency %d)\t\n", c.Events, c.Seconds, c.LLMLatency, c.Concurrency)
		fmt.Fprintf(tw, "compaction: throughput\t%.0f events/s\t≥ 100 events/s\n", c.PerSec)
	}
	if h := r.Honcho; h != nil {
		fmt.Fprintf(tw, "honcho: observations\t%d over %d peers (largest %d, median %d, %d over 10,000), %d planted\t\n",
			h.Data.Observations, h.Data.Peers, h.Data.LargestPeer, h.Data.MedianPeer, h.Data.PeersOver10k, h.Data.Planted)
		fmt.Fprintf(tw, "honcho: full pass\t%.2f s (%.0f observations/s), %d examined, %d pairs, %d supersessions\t\n",
			h.Seconds, h.PerSec, h.Examined, h.Pairs, h.Supersessions)
		fmt.Fprintf(tw, "honcho: peak RSS\t%.0f MB\t≤ 150 MB\n", float64(h.PeakRSS)/1e6)
		fmt.Fprintf(tw, "honcho: incremental after %d new\t%.2f s (%.1f%% of the full pass, %s), %d scopes (%d narrowed), %d examined\t≤ 5%%\n",
			h.Incremental.Added, h.Incremental.Seconds, 100*h.Incremental.Share, h.Incremental.Kind, h.Incremental.Scopes,
			h.Incremental.Narrowed, h.Incremental.Examined)
	}
	tw.Flush()
}
