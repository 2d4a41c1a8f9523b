package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
	"github.com/supersessiond/supersessiond/jobs"
)

// cli runs the real binary against a database and returns its output.
func cli(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+dbURL)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var historyID = regexp.MustCompile(`\(([0-9a-f-]{36})\)`)

// The reproduction, with the real binary: a live `sweep --once`
// stalls between deciding and writing (another session holds a row lock its
// write batch needs), the operator runs `supersede` then `undo` on a pair
// the sweep decided, the lock is released. The undo stays undone.
func TestUndoDuringAStalledSweepStaysUndone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("a", "Sam", "home")
	job := s.Aspect("a", "Sam", "job")
	s.Add(
		memtest.Attr{ID: "x-old", Agent: "a", Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "x-new", Agent: "a", Aspect: home, Content: "Lives in Vancouver"},
		memtest.Attr{ID: "y-old", Agent: "a", Aspect: job, Content: "Works at Figma"},
		memtest.Attr{ID: "y-new", Agent: "a", Aspect: job, Content: "Works at Stripe"},
	)
	holder, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.Exec(`SELECT 1 FROM entity_attributes WHERE id = 'x-old' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out string
		err error
	}
	swept := make(chan result, 1)
	go func() {
		out, err := cli(t, db.URL, "sweep", "--once", "--json")
		swept <- result{out, err}
	}()
	eventually(t, 30*time.Second, "the sweep to wait on the held lock", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)
		return n > 0
	})
	out, err := cli(t, db.URL, "supersede", "--agent", "a", "--by", "y-new", "y-old")
	if err != nil {
		t.Fatalf("supersede: %v\n%s", err, out)
	}
	m := historyID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no history id in %q", out)
	}
	if out, err := cli(t, db.URL, "undo", m[1]); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	r := <-swept
	if r.err != nil {
		t.Fatalf("sweep: %v\n%s", r.err, r.out)
	}
	if st, _ := s.Status("y-old"); st != "active" {
		t.Fatalf("y-old is %s: the sweep redid the undone supersession\n%s", st, r.out)
	}
	if st, _ := s.Status("x-old"); st != "superseded" {
		t.Fatalf("x-old is %s: the sweep's other decision was lost", st)
	}
}

// The race run many times: three daemons (a one-second sweep and the inline
// hook each) decide contradictions as they are classified, while operators
// supersede each new pair by hand and undo it at once, and the agent's own
// transactions hold row locks now and then (stalling a write batch between
// its decision and its write). However the interleaving falls, no
// automatic supersession of a pair is written after that pair's undo.
func TestUndoVersusSweepRaceManyTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	cfg := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n  inlineHook:\n    pollInterval: 200ms\n"
	var procs []*proc
	for range 3 {
		procs = append(procs, start(t, db.URL, cfg))
	}
	live := config.Default()
	deadline := time.Now().Add(12 * time.Second)
	var undos, pairs atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				old, nw := fmt.Sprintf("w%d-%d-old", w, i), fmt.Sprintf("w%d-%d-new", w, i)
				aspect := s.Aspect("a", fmt.Sprintf("w%d-%d", w, i), "home")
				s.Add(
					memtest.Attr{ID: old, Agent: "a", Aspect: aspect, Content: "Lives in Toronto", At: memtest.Base},
					memtest.Attr{ID: nw, Agent: "a", Aspect: aspect, Content: "Lives in Vancouver", At: memtest.Base.Add(time.Hour)},
				)
				pairs.Add(1)
				// Undo whichever supersession of the pair exists, the hook's
				// or the operator's own.
				for range 3 {
					var hist string
					err := db.GetContext(ctx, &hist, `SELECT id FROM memory_history h WHERE event = 'attribute_superseded'
						AND metadata ->> 'old_attribute_id' = $1 AND NOT EXISTS (SELECT 1 FROM memory_history r
						  WHERE r.event = 'supersession_reverted' AND r.metadata ->> 'reverted_history_id' = h.id)
						ORDER BY created_at DESC LIMIT 1`, old)
					if err != nil {
						applied, serr := opsOf(db.DB).Supersede(ctx, live, audit.SupersedeRequest{Agent: "a", New: nw, Olds: []string{old}})
						if serr != nil {
							continue // a daemon was quicker: undo its write
						}
						hist = applied[0].HistoryID
					}
					if _, err := opsOf(db.DB).Undo(ctx, live, hist); err == nil {
						undos.Add(1)
						break
					}
				}
			}
		})
	}
	wg.Go(func() {
		r := rand.New(rand.NewPCG(99, 7))
		for time.Now().Before(deadline) {
			tx, err := db.BeginTxx(ctx, nil)
			if err != nil {
				return
			}
			_, _ = tx.Exec(`SELECT 1 FROM entity_attributes WHERE status = 'active' ORDER BY random() LIMIT 3 FOR UPDATE SKIP LOCKED`)
			time.Sleep(time.Duration(20+r.IntN(60)) * time.Millisecond)
			_ = tx.Commit()
			time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
		}
	})
	wg.Wait()
	time.Sleep(2500 * time.Millisecond) // two more sweeps after the last undo
	for _, p := range procs {
		p.stop()
	}
	if undos.Load() < 50 {
		t.Fatalf("only %d undos of %d pairs: the race was not exercised", undos.Load(), pairs.Load())
	}
	var redone []string
	if err := db.Select(&redone, `SELECT DISTINCT s.metadata ->> 'old_attribute_id' FROM memory_history s
		JOIN memory_history r ON r.event = 'supersession_reverted'
		  AND r.metadata ->> 'old_attribute_id' = s.metadata ->> 'old_attribute_id'
		  AND r.metadata ->> 'new_attribute_id' = s.metadata ->> 'new_attribute_id'
		WHERE s.event = 'attribute_superseded' AND s.changed_by IN ('supersessiond:sweep', 'supersessiond:inline')
		  AND s.created_at > r.created_at`); err != nil {
		t.Fatal(err)
	}
	if len(redone) > 0 {
		t.Fatalf("%d of %d undone pairs were superseded again automatically: %v", len(redone), undos.Load(), redone)
	}
	t.Logf("%d pairs undone while three daemons raced to decide them; none redone", undos.Load())
}

// mutationsFrozen set while a live sweep of a large graph runs: the reload
// is seen before the pass ends, and from the next write batch on the pass
// writes no supersession.
func TestBrakeMidRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := bench.GenerateAttributes(ctx, db.DB, bench.AttributeSpec{Attributes: 400000, Seed: 11, ContradictionShare: 0.3}); err != nil {
		t.Fatal(err)
	}
	base := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n  inlineHook:\n    enabled: false\n  log:\n    level: info\n"
	p := start(t, db.URL, base)
	eventually(t, 60*time.Second, "the first supersessions", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`)
		return n > 0
	}, p)
	cfgPath := p.cmd.Args[3]
	body, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	tmp := cfgPath + ".new"
	if err := os.WriteFile(tmp, append(body, []byte("memory:\n  pipelineV2:\n    mutationsFrozen: true\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfgPath); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the reload", func() bool { return len(p.logs.records("configuration reloaded")) > 0 }, p)
	var atReload int
	if err := db.Get(&atReload, `SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); err != nil {
		t.Fatal(err)
	}
	eventually(t, 120*time.Second, "the pass to end", func() bool { return len(p.logs.records("job done")) > 0 }, p)
	p.stop()
	var after int
	if err := db.Get(&after, `SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); err != nil {
		t.Fatal(err)
	}
	// At most the write batch that was in flight when the reload landed.
	if after-atReload > 500 {
		t.Fatalf("%d supersessions written after mutationsFrozen was in force (%d before)", after-atReload, atReload)
	}
	var proposals int
	if err := db.Get(&proposals, `SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`); err != nil {
		t.Fatal(err)
	}
	if proposals == 0 {
		t.Fatal("the braked rest of the pass should have proposed what it would have applied")
	}
	t.Logf("%d supersessions before the brake, %d after; %d proposals", atReload, after-atReload, proposals)
}

// agent.yaml a symbolic link, as the README suggests: an edit of the link's
// target is in force without a signal, and /readyz says so.
func TestSymlinkedConfigReload(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	target := filepath.Join(t.TempDir(), "agent.yaml")
	port := proctest.FreePort(t)
	body := fmt.Sprintf("maintenance:\n  http:\n    listen: 127.0.0.1:%d\n  schedules:\n    sweep: \"off\"\n", port)
	if err := os.WriteFile(target, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", "--config", link)
	cmd.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+db.URL)
	p := &proc{t: t, cmd: cmd, logs: &logBuffer{}, port: port, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	eventually(t, 30*time.Second, "ready", func() bool { code, _ := p.get("/readyz"); return code == 200 }, p)

	if err := os.WriteFile(target, []byte(body+"memory:\n  pipelineV2:\n    shadowMode: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the edit of the target in force", func() bool {
		code, body := p.get("/readyz")
		return code == 200 && strings.Contains(body, "shadow_mode=true")
	}, p)
	p.stop()
}

// Poisoned rows, with the real binary: an 'infinity' creation time, a
// history row the stack's foreign key rejects, and (in a SQL_ASCII
// database) bytes that are not UTF-8. Each is skipped with its reason in
// the --json report; every other agent's contradictions are decided; the
// exit code is 0 and the pass complete.
func TestPoisonedRows(t *testing.T) {
	t.Parallel()
	seed := func(s *memtest.Seeder) {
		s.Moves("good", "g", 5, "Toronto", "Vancouver")
		home := s.Aspect("bad", "Ana", "home")
		s.Add(
			memtest.Attr{ID: "bad-1", Agent: "bad", Aspect: home, Content: "Lives in Lima"},
			memtest.Attr{ID: "bad-inf", Agent: "bad", Aspect: home, Content: "Lives in Oslo"},
		)
		s.Exec(`UPDATE entity_attributes SET created_at = 'infinity' WHERE id = 'bad-inf'`)
		job := s.Aspect("fk", "Kim", "job")
		s.Add(
			memtest.Attr{ID: "fk-1", Agent: "fk", Aspect: job, Content: "Works at Figma"},
			memtest.Attr{ID: "fk-2", Agent: "fk", Aspect: job, Content: "Works at Stripe"},
		)
	}
	utf8db := pgtest.New(t)
	ascii := pgtest.NewEncoded(t, "SQL_ASCII")
	for _, db := range []*pgtest.DB{utf8db, ascii} {
		s := memtest.New(t, db.DB)
		seed(s)
		// memory_history.memory_id must name a memory: fk-1 has none.
		for _, id := range []string{"g0-1", "g1-1", "g2-1", "g3-1", "g4-1", "bad-1"} {
			s.Exec(`INSERT INTO memories (id, agent_id, content) VALUES ($1, 'x', 'm')`, id)
		}
		s.Exec(`ALTER TABLE memory_history ADD CONSTRAINT stack_history_memory FOREIGN KEY (memory_id) REFERENCES memories (id) NOT VALID`)
	}
	asciiSeeder := memtest.New(t, ascii.DB)
	latin := asciiSeeder.Aspect("latin", "Jo", "home")
	asciiSeeder.Add(
		memtest.Attr{ID: "l-1", Agent: "latin", Aspect: latin, Content: "Lives in Zurich"},
		memtest.Attr{ID: "l-bad", Agent: "latin", Aspect: latin, Content: "placeholder"},
	)
	asciiSeeder.Exec(`UPDATE entity_attributes SET content = E'Lives in M\xfcnchen' WHERE id = 'l-bad'`)

	for _, db := range []*pgtest.DB{utf8db, ascii} {
		out, err := cli(t, db.URL, "sweep", "--once", "--json")
		if err != nil {
			t.Fatalf("%s: sweep failed on poisoned rows: %v\n%s", db.Name, err, out)
		}
		var rep struct {
			Complete      bool `json:"complete"`
			Supersessions int  `json:"supersessions"`
			Skipped       []struct {
				Reason string `json:"reason"`
				Count  int    `json:"count"`
			} `json:"skipped"`
			Skips map[string]int
		}
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil {
			t.Fatalf("%s: report: %v\n%s", db.Name, err, out)
		}
		rep.Skips = map[string]int{}
		for _, s := range rep.Skipped {
			rep.Skips[s.Reason] = s.Count
		}
		if !rep.Complete || rep.Skips["invalid_created_at"] != 1 || rep.Skips["write_failed"] != 1 {
			t.Fatalf("%s: report %+v", db.Name, rep)
		}
		if db == ascii && rep.Skips["invalid_utf8"] != 1 {
			t.Fatalf("%s: the invalid bytes were not skipped with their reason: %+v", db.Name, rep)
		}
		s := memtest.New(t, db.DB)
		for i := range 5 {
			if st, _ := s.Status(fmt.Sprintf("g%d-1", i)); st != "superseded" {
				t.Fatalf("%s: g%d-1 is %s: a poisoned row stopped the other agents' decisions", db.Name, i, st)
			}
		}
		if st, _ := s.Status("fk-1"); st != "active" {
			t.Fatalf("%s: fk-1 is %s without its history row", db.Name, st)
		}
	}
}

// Three daemons against a server with few connection slots, while the
// agent writes through four connections of its own: every agent write
// succeeds, and no daemon ever holds more than its pool (plus its LISTEN
// connection).
func TestThreeDaemonsLeaveTheAgentItsConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// 20 slots, 3 reserved for superusers: 17 for the agent and the daemons
	// (4 + 3 × (3 pooled + 1 LISTEN) = 16 with the default pool).
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	admin, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE DATABASE agent`, `CREATE ROLE agent LOGIN`, `CREATE ROLE daemon LOGIN`} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	admin.Close()
	super, err := sqlx.Open("postgres", cluster.URL("agent"))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close()
	if _, err := schema.Migrate(ctx, super, schema.ReferencePlan(), schema.Options{Reference: true, Grant: "daemon"}); err != nil {
		t.Fatal(err)
	}
	if _, err := bench.GenerateAttributes(ctx, super, bench.AttributeSpec{Attributes: 20000, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	// A compaction backlog and a slow LLM, so that a daemon's compaction
	// workers, sweep, inline hook and tombstone pass all want connections
	// at once.
	if _, _, _, err := bench.InsertCompactionBacklog(ctx, super, bench.CompactionBacklog{Events: 400}); err != nil {
		t.Fatal(err)
	}
	llmSrv := httptest.NewServer(bench.CompactionLLM(20 * time.Millisecond))
	defer llmSrv.Close()
	for _, q := range []string{
		`GRANT ALL ON ALL TABLES IN SCHEMA public TO agent`,
		`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO agent`,
	} {
		if _, err := super.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	super.Close()
	daemonURL := strings.Replace(cluster.URL("agent"), "user=postgres", "user=daemon", 1)
	agentURL := strings.Replace(cluster.URL("agent"), "user=postgres", "user=agent", 1)
	cfg := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"@every 1s\"\n    tombstones: \"@every 1s\"\n  inlineHook:\n    pollInterval: 100ms\n" +
		"  llm:\n    endpoint: " + llmSrv.URL + "/v1\n    model: m\n    maxConcurrency: 8\n"
	var procs []*proc
	for range 3 {
		procs = append(procs, start(t, daemonURL, cfg))
	}
	agentDB, err := store.Open(ctx, agentURL, store.Pool{MaxOpen: 4, MaxIdle: 4, IdleTime: time.Minute}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer agentDB.Close()
	var failed, written atomic.Int64
	var peak atomic.Int64
	stop := make(chan struct{})
	var watcher, writers sync.WaitGroup
	watcher.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var held int64
			if err := agentDB.Get(&held, `SELECT count(*) FROM pg_stat_activity WHERE usename = 'daemon'`); err == nil {
				for {
					p := peak.Load()
					if held <= p || peak.CompareAndSwap(p, held) {
						break
					}
				}
			}
		}
	})
	for w := range 3 {
		writers.Go(func() {
			for i := range 200 {
				id := fmt.Sprintf("agent-%d-%d", w, i)
				_, err := agentDB.ExecContext(ctx, `INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content)
					VALUES ($1, 'writer', 'attribute', $2, lower($2))`, id, fmt.Sprintf("Lives in City %d", i))
				if err != nil {
					failed.Add(1)
					t.Logf("agent write failed: %v", err)
				} else {
					written.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	writers.Wait()
	close(stop)
	watcher.Wait()
	ran := 0
	for _, p := range procs {
		p.stop()
		ran += len(p.logs.records("job done"))
	}
	if ran == 0 {
		t.Fatal("no job ran while the agent wrote: the test proves nothing")
	}
	if failed.Load() > 0 {
		t.Fatalf("%d of %d agent writes failed while three daemons ran", failed.Load(), failed.Load()+written.Load())
	}
	// The default pool is 3, plus the LISTEN connection: 12 for three.
	if pool := config.Default().Maintenance.Database.MaxOpenConns; pool != 3 {
		t.Fatalf("the default pool is %d; this test's arithmetic assumes 3", pool)
	}
	if max := peak.Load(); max > 12 {
		t.Fatalf("the three daemons held %d connections at once; their pools allow 12", max)
	}
	t.Logf("%d agent writes, none failed; the daemons held at most %d connections", written.Load(), peak.Load())
}

// opsOf is the operator commands on a test database of the reference schema.
func opsOf(db *sqlx.DB) *audit.Ops {
	engine := supersession.New(jobs.Deps{DB: db, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	return audit.New(db, nil, engine)
}
