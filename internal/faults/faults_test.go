package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

// binary is the real supersessiond, built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "supersessiond-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "supersessiond")
	out, err := exec.Command("go", "build", "-o", binary, "../../cmd/supersessiond").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build supersessiond: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running supersessiond.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	logs *logBuffer
	port int
	done chan error
}

type logBuffer struct {
	mu    sync.Mutex
	lines []string
	part  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			l.lines = append(l.lines, l.part.String())
			l.part.Reset()
			continue
		}
		l.part.WriteByte(b)
	}
	return len(p), nil
}

func (l *logBuffer) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *logBuffer) String() string { return strings.Join(l.all(), "\n") }

// records returns the JSON log records with the given msg.
func (l *logBuffer) records(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range l.all() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs the daemon on dbURL; cfgBody continues maintenance: after
// http.listen; env adds to its environment.
func start(t *testing.T, dbURL, cfgBody string, env ...string) *proc {
	t.Helper()
	port := proctest.FreePort(t)
	cfg := writeConfig(t, fmt.Sprintf("maintenance:\n  http:\n    listen: 127.0.0.1:%d\n%s", port, cfgBody))
	cmd := exec.Command(binary, "run", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+dbURL), env...)
	p := &proc{t: t, cmd: cmd, logs: &logBuffer{}, port: port, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	eventually(t, 30*time.Second, "daemon ready", func() bool { code, _ := p.get("/readyz"); return code == 200 }, p)
	return p
}

func (p *proc) get(path string) (int, string) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (p *proc) stop() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Fatalf("SIGTERM: %v\n%s", err, p.logs)
		}
	case <-time.After(60 * time.Second):
		p.t.Fatalf("daemon did not stop\n%s", p.logs)
	}
}

func eventually(t *testing.T, limit time.Duration, what string, cond func() bool, procs ...*proc) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	var logs []string
	for _, p := range procs {
		logs = append(logs, p.logs.String())
	}
	t.Fatalf("timed out waiting for %s\n%s", what, strings.Join(logs, "\n----\n"))
}

// attributeState is what a sweep leaves: every attribute's status and
// superseded_by, and the history rows per old attribute.
func attributeState(t *testing.T, db *sqlx.DB) (map[string]string, map[string]int) {
	t.Helper()
	rows, err := db.Query(`SELECT id, status || ':' || coalesce(superseded_by, '') FROM entity_attributes`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	state := map[string]string{}
	for rows.Next() {
		var id, s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		state[id] = s
	}
	hist := map[string]int{}
	hrows, err := db.Query(`SELECT metadata->>'old_attribute_id', count(*) FROM memory_history WHERE event = 'attribute_superseded' GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer hrows.Close()
	for hrows.Next() {
		var id string
		var n int
		if err := hrows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		hist[id] = n
	}
	return state, hist
}

// kill -9 in the middle of a live sweep, then restart: the sweep resumes at
// its cursor and completes; no attribute is superseded twice, no history row
// is missing or duplicated; the end state is that of an uninterrupted sweep.
func TestKillDuringSweepThenRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spec := bench.AttributeSpec{Attributes: 60000, Seed: 3}
	ref, victim := pgtest.New(t), pgtest.New(t)
	for _, db := range []*pgtest.DB{ref, victim} {
		if _, err := bench.GenerateAttributes(ctx, db.DB, spec); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, "sweep", "--once", "--json")
	cmd.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+ref.URL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reference sweep: %v\n%s", err, out)
	}
	wantState, wantHist := attributeState(t, ref.DB)

	cfg := "  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n  log:\n    level: info\n"
	p := start(t, victim.URL, cfg)
	// Kill once a first batch is written and its cursor stored, before the
	// pass is over.
	eventually(t, 60*time.Second, "first batch of the sweep", func() bool {
		var cur string
		err := victim.Get(&cur, `SELECT value->>'aspect_id' FROM supersessiond.state WHERE name = 'sweep_cursor'`)
		return err == nil && cur != ""
	}, p)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	var partial int
	if err := victim.Get(&partial, `SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); err != nil {
		t.Fatal(err)
	}
	if partial >= len(wantHist) {
		t.Fatalf("the kill came after the sweep finished (%d of %d): the test proves nothing", partial, len(wantHist))
	}
	t.Logf("killed with %d of %d supersessions written", partial, len(wantHist))

	// Restart: the dead replica's lease expires (30 s), then the sweep
	// resumes from the stored cursor and completes the pass.
	p2 := start(t, victim.URL, cfg)
	eventually(t, 120*time.Second, "the pass to complete", func() bool {
		return len(p2.logs.records("sweep: full pass complete")) > 0
	}, p2)
	p2.stop()
	gotState, gotHist := attributeState(t, victim.DB)
	for id, n := range gotHist {
		if n != 1 {
			t.Errorf("attribute %s has %d attribute_superseded rows", id, n)
		}
	}
	if len(gotHist) != len(wantHist) {
		t.Errorf("%d attributes have a history row; uninterrupted: %d", len(gotHist), len(wantHist))
	}
	diff := 0
	for id, want := range wantState {
		if gotState[id] != want {
			diff++
			if diff < 5 {
				t.Errorf("%s: %s after kill and restart, %s uninterrupted", id, gotState[id], want)
			}
		}
	}
	if diff > 0 {
		t.Fatalf("%d attributes differ from an uninterrupted sweep", diff)
	}
	var orphans int
	if err := victim.Get(&orphans, `SELECT count(*) FROM entity_attributes a WHERE a.status = 'superseded'
		AND NOT EXISTS (SELECT 1 FROM memory_history h WHERE h.event = 'attribute_superseded' AND h.metadata->>'old_attribute_id' = a.id)`); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Fatalf("%d superseded attributes without their history row", orphans)
	}
}

// PostgreSQL restarted under a running daemon: it reports not-ready,
// reconnects (its listener too) without a restart of its own, and what is
// classified as the database comes back is decided.
func TestPostgresRestartUnderRunningDaemon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	admin, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`CREATE DATABASE agent`); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	url := cluster.URL("agent")
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Migrate(ctx, db, schema.ReferencePlan(), schema.Options{Reference: true}); err != nil {
		t.Fatal(err)
	}
	s := memtest.New(t, db)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "r1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "r2", Agent: "a", Content: "Lives in Montreal"},
	)
	// The fallback poll is an hour away: only the reconnect rescan (or a
	// notification on the new connection) can decide r2.
	p := start(t, url, "  inlineHook:\n    pollInterval: 1h\n  schedules:\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n")
	pid := p.cmd.Process.Pid

	restarted := make(chan error, 1)
	go func() { restarted <- cluster.Restart(ctx, 3*time.Second) }()
	eventually(t, 30*time.Second, "/readyz to report the database down", func() bool {
		code, body := p.get("/readyz")
		return code == 503 && strings.Contains(body, "database")
	}, p)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	// Classify at once, possibly before the listener is back.
	eventually(t, 30*time.Second, "the database to accept writes", func() bool {
		_, err := db.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'r2'`, asp)
		return err == nil
	}, p)
	eventually(t, 60*time.Second, "r2's classification to be decided", func() bool {
		st, _ := s.Status("r1")
		return st == "superseded"
	}, p)
	eventually(t, 60*time.Second, "/readyz to recover", func() bool { code, _ := p.get("/readyz"); return code == 200 }, p)
	if p.cmd.Process.Pid != pid || p.cmd.ProcessState != nil {
		t.Fatal("the daemon must not have restarted")
	}
	// The log arrives through a pipe, and the line saying the database is
	// back may come from the health loop just after /readyz answered: read
	// it once the process has exited and its stderr is drained.
	p.stop()
	logs := p.logs.String()
	for _, want := range []string{"database unreachable", "database reachable again"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// Three daemons on one database for several ticks: each scheduled job ran
// once per tick, no attribute superseded twice, no duplicate proposal.
func TestThreeDaemonsOneDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := bench.GenerateAttributes(ctx, db.DB, bench.AttributeSpec{Attributes: 3000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	cfg := "  schedules:\n    sweep: \"@every 2s\"\n    compactionRetry: \"@every 2s\"\n    tombstones: \"@every 2s\"\n"
	var procs []*proc
	for range 3 {
		procs = append(procs, start(t, db.URL, cfg))
	}
	time.Sleep(9 * time.Second)
	runs := map[string]int{}
	for _, p := range procs {
		p.stop()
		for _, rec := range p.logs.records("job done") {
			runs[fmt.Sprint(rec["job"], "@", rec["tick"])]++
		}
	}
	perJob := map[string]int{}
	for k, n := range runs {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
		perJob[strings.SplitN(k, "@", 2)[0]]++
	}
	if perJob["sweep"] < 3 {
		t.Fatalf("the sweep ran on %d ticks in 9s; want about 4: %v", perJob["sweep"], runs)
	}
	var dup int
	if err := db.Get(&dup, `SELECT count(*) FROM (SELECT metadata->>'old_attribute_id' FROM memory_history
		WHERE event = 'attribute_superseded' GROUP BY 1 HAVING count(*) > 1) d`); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Fatalf("%d attributes superseded twice", dup)
	}
	if err := db.Get(&dup, `SELECT count(*) FROM (SELECT metadata->>'old_attribute_id', metadata->>'new_attribute_id' FROM memory_history
		WHERE event = 'supersession_proposal' GROUP BY 1, 2 HAVING count(*) > 1) d`); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Fatalf("%d duplicated proposals", dup)
	}
	var superseded int
	if err := db.Get(&superseded, `SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); err != nil || superseded == 0 {
		t.Fatalf("the replicas superseded nothing (%v)", err)
	}
}
