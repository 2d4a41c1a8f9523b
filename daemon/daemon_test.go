package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
	"github.com/supersessiond/supersessiond/jobs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type harness struct {
	t       *testing.T
	path    string
	signals chan os.Signal
	addr    string
	log     *proctest.Buffer
	done    chan error
	exited  chan struct{}
	d       *daemon.Daemon
}

const baseYAML = `
maintenance:
  database:
    url: %q
  http:
    listen: 127.0.0.1:0
  log:
    level: debug
    format: text
`

func start(t *testing.T, dbURL string, extraYAML string, scheduled []daemon.Job, tweaks ...func(*daemon.Options)) *harness {
	t.Helper()
	return startAt(t, "", dbURL, extraYAML, scheduled, tweaks...)
}

// startAt starts a daemon whose --config is configPath, a symbolic link to
// the file the harness edits; "" means the harness's file itself.
func startAt(t *testing.T, configPath, dbURL string, extraYAML string, scheduled []daemon.Job, tweaks ...func(*daemon.Options)) *harness {
	t.Helper()
	h := &harness{t: t, signals: make(chan os.Signal, 4), log: &proctest.Buffer{}, done: make(chan error, 1), exited: make(chan struct{})}
	h.path = filepath.Join(t.TempDir(), "agent.yaml")
	h.write(fmt.Sprintf(baseYAML, dbURL) + extraYAML)
	if configPath == "" {
		configPath = h.path
	} else if err := os.Symlink(h.path, configPath); err != nil {
		t.Fatal(err)
	}
	src := config.Source{Path: configPath, Explicit: true, Environ: func() []string { return nil }}
	loaded, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	if scheduled == nil {
		scheduled = []daemon.Job{}
	}
	opts := daemon.Options{
		Source: src, Initial: loaded, LogOutput: h.log, Signals: h.signals,
		Environ: func() []string { return nil }, ShutdownTimeout: 3 * time.Second, StartupTimeout: time.Second,
		LeaseTTL: 3 * time.Second, Jobs: scheduled,
		Services:      func(jobs.Deps) []daemon.Service { return nil },
		ListenerReady: func(a string) { addr <- a },
	}
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	d, err := daemon.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	go func() { h.done <- d.Run(context.Background()); close(h.exited) }()
	select {
	case h.addr = <-addr:
	case err := <-h.done:
		t.Fatalf("daemon exited at startup: %v\n%s", err, h.log)
	case <-time.After(20 * time.Second):
		t.Fatalf("daemon did not start\n%s", h.log)
	}
	t.Cleanup(func() {
		select {
		case <-h.exited:
			return
		case h.signals <- syscall.SIGTERM:
		default:
		}
		select {
		case <-h.exited:
		case <-time.After(10 * time.Second):
		}
	})
	return h
}

func (h *harness) write(body string) {
	h.t.Helper()
	tmp := h.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) get(path string) (int, string) {
	h.t.Helper()
	resp, err := http.Get("http://" + h.addr + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("timed out waiting for %s\nlog:\n%s", what, h.log)
}

func (h *harness) stop() error {
	h.t.Helper()
	h.signals <- syscall.SIGTERM
	select {
	case err := <-h.done:
		return err
	case <-time.After(15 * time.Second):
		h.t.Fatalf("daemon did not stop\n%s", h.log)
		return nil
	}
}

func TestHealthReadinessMetrics(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	h := start(t, db.URL, "", nil)
	if code, body := h.get("/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := h.get("/readyz"); code != 200 || !strings.HasPrefix(body, "ready") {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	code, body := h.get("/metrics")
	for _, want := range []string{"supersessiond_config_last_reload_successful 1", "go_goroutines", "process_resident_memory_bytes", "go_sql_open_connections"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("/metrics lacks %q (code %d)", want, code)
		}
	}
	if err := h.stop(); err != nil {
		t.Fatalf("graceful stop must return nil, got %v", err)
	}
}

func TestReloadOnSIGHUPAndOnFileEditAndKeepsRunningOnBrokenEdit(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	h := start(t, db.URL, "", nil)
	base := fmt.Sprintf(baseYAML, db.URL)

	// An edit is picked up without a signal.
	h.write(base + "memory:\n  pipelineV2:\n    shadowMode: true\n")
	h.eventually("file edit reload", func() bool { return h.d.Config().Memory.PipelineV2.ShadowMode })

	// SIGHUP reloads too (here: the edit reverted while we were not looking).
	h.write(base)
	h.signals <- syscall.SIGHUP
	h.eventually("SIGHUP reload", func() bool { return !h.d.Config().Memory.PipelineV2.ShadowMode })

	// A broken edit: previous config keeps running, the error is visible.
	h.write(base + "  bogusKey: 1\n")
	h.eventually("failed reload reported", func() bool {
		code, body := h.get("/readyz")
		return code == 503 && strings.Contains(body, "maintenance.bogusKey") && strings.Contains(body, "previous configuration still running")
	})
	if h.d.Config().Memory.PipelineV2.ShadowMode || h.d.Config().Maintenance.Log.Level != "debug" {
		t.Fatal("previous configuration must stay in force")
	}
	if _, body := h.get("/metrics"); !strings.Contains(body, `supersessiond_config_reloads_total{result="error"}`) ||
		!strings.Contains(body, "supersessiond_config_last_reload_successful 0") {
		t.Fatal("failed reload not in metrics")
	}
	if !strings.Contains(h.log.String(), "configuration reload failed") {
		t.Fatal("failed reload not logged")
	}

	// Fixing the file recovers readiness.
	h.write(base + "memory:\n  pipelineV2:\n    mutationsFrozen: true\n")
	h.eventually("recovery", func() bool {
		code, _ := h.get("/readyz")
		return code == 200 && h.d.Config().Frozen()
	})
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
}

// The README's advice is to symlink the agent's own agent.yaml into
// /etc/supersessiond: an edit of the link's target must be picked up, and
// /readyz must never claim that a file it has not read is running.
func TestReloadFollowsASymlinkedConfig(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	link := filepath.Join(t.TempDir(), "agent.yaml")
	h := startAt(t, link, db.URL, "", nil)
	base := fmt.Sprintf(baseYAML, db.URL)

	h.write(base + "memory:\n  pipelineV2:\n    mutationsFrozen: true\n")
	h.eventually("an edit of the link's target", func() bool { return h.d.Config().Frozen() })
	h.eventually("readiness with the edit in force", func() bool {
		code, body := h.get("/readyz")
		return code == 200 && strings.Contains(body, "mutations_frozen=true")
	})

	// An edit the watch cannot see (the target replaced in place while the
	// watch was told nothing) is still found by the health loop's comparison.
	if err := os.WriteFile(h.path, []byte(base+"memory:\n  pipelineV2:\n    shadowMode: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.eventually("the in-place edit", func() bool {
		c := h.d.Config()
		return c.Memory.PipelineV2.ShadowMode && !c.Frozen()
	})
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
}

// A server nearly out of connection slots keeps them for the agent: a
// scheduled run waits for a tick when enough are free, and says why.
func TestCrowdedServerSkipsTheTick(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := db.Exec(`CREATE TABLE job_runs (job text, replica text, at timestamptz)`); err != nil {
		t.Fatal(err)
	}
	job := &countingJob{name: "busy", spec: "@every 1s", db: db.DB, replica: "r"}
	h := start(t, db.URL, "", []daemon.Job{job}, func(o *daemon.Options) { o.MinFreeConnections = 1 << 20 })
	h.eventually("the skip logged", func() bool {
		return strings.Contains(h.log.String(), "nearly out of connection slots")
	})
	var runs int
	if err := db.Get(&runs, `SELECT count(*) FROM job_runs`); err != nil || runs != 0 {
		t.Fatalf("%d runs (%v): a crowded server must not be given another session", runs, err)
	}
	if _, body := h.get("/metrics"); !strings.Contains(body, `supersessiond_job_runs_total{job="busy",result="skipped"}`) {
		t.Fatal("skips not counted")
	}
}

// countingJob records every run's tick in the database, so that replicas'
// runs can be compared.
type countingJob struct {
	name    string
	spec    string
	db      *sqlx.DB
	replica string
	hold    time.Duration
	started chan struct{}
}

func (j *countingJob) Name() string                   { return j.name }
func (j *countingJob) Schedule(*config.Config) string { return j.spec }
func (j *countingJob) Run(ctx context.Context, _ *config.Config) (jobs.Report, error) {
	if j.started != nil {
		select {
		case j.started <- struct{}{}:
		default:
		}
	}
	if _, err := j.db.ExecContext(ctx, `INSERT INTO job_runs (job, replica, at) VALUES ($1, $2, clock_timestamp())`, j.name, j.replica); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(j.hold):
	}
	return replicaReport{j.replica}, nil
}

// replicaReport says which replica ran.
type replicaReport struct {
	Replica string `json:"replica"`
}

func (r replicaReport) Text() string { return "ran on " + r.Replica + "\n" }

// leasedJob records, on each run, the lease it runs under: the tick (the
// schedule time every replica names alike), the term (one per acquisition)
// and the holder, read from the lease table while the run holds it.
type leasedJob struct {
	name, spec, replica string
	db                  *sqlx.DB
}

func (j *leasedJob) Name() string                   { return j.name }
func (j *leasedJob) Schedule(*config.Config) string { return j.spec }
func (j *leasedJob) Run(ctx context.Context, _ *config.Config) (jobs.Report, error) {
	_, err := j.db.ExecContext(ctx, `INSERT INTO job_runs (job, replica, tick, term, holder)
		SELECT name, $2, tick, term, holder FROM supersessiond.leases WHERE name = $1`, j.name, j.replica)
	if err != nil {
		return nil, err
	}
	select { // long enough for the other replicas' attempts at the tick to meet the lease
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(100 * time.Millisecond):
	}
	return replicaReport{j.replica}, nil
}

// Several daemons on one database: each tick of a scheduled job runs on
// exactly one of them. The runs are counted by tick, from the lease each one
// held, never in a window of wall-clock time: however slow the machine
// (a tick missed, a tick late), no tick runs twice, every run is an
// acquisition of its own, and the replicas did contend for the ticks.
func TestThreeReplicasRunEachJobOncePerTick(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := db.Exec(`CREATE TABLE job_runs (job text, replica text, tick timestamptz, term bigint, holder text)`); err != nil {
		t.Fatal(err)
	}
	var hs []*harness
	for i := range 3 {
		jobs := []daemon.Job{
			&leasedJob{name: "alpha", spec: "@every 1s", db: db.DB, replica: fmt.Sprint(i)},
			&leasedJob{name: "beta", spec: "@every 2s", db: db.DB, replica: fmt.Sprint(i)},
		}
		hs = append(hs, start(t, db.URL, "", jobs))
	}
	// Wait for evidence, not for time: enough ticks of each job, and a
	// replica turned away from a tick another ran.
	contended := func() bool {
		for _, h := range hs {
			if strings.Contains(h.log.String(), "another replica runs this tick") {
				return true
			}
		}
		return false
	}
	ticks := func(name string) int {
		var n int
		_ = db.Get(&n, `SELECT count(DISTINCT tick) FROM job_runs WHERE job = $1`, name)
		return n
	}
	deadline := time.Now().Add(2 * time.Minute)
	for ticks("alpha") < 5 || ticks("beta") < 3 || (!contended() && ticks("alpha") < 20) {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes: alpha ran on %d ticks, beta on %d", ticks("alpha"), ticks("beta"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, h := range hs {
		if err := h.stop(); err != nil {
			t.Fatal(err)
		}
	}
	if !contended() {
		t.Error("no replica was ever turned away from a tick another ran: the replicas did not contend, and the test proves nothing")
	}
	var runs []struct {
		Job    string    `db:"job"`
		Tick   time.Time `db:"tick"`
		Term   int64     `db:"term"`
		Holder string    `db:"holder"`
	}
	if err := db.Select(&runs, `SELECT job, tick, term, holder FROM job_runs ORDER BY job, tick, term`); err != nil {
		t.Fatal(err)
	}
	last := map[string]struct {
		tick time.Time
		term int64
	}{}
	for _, r := range runs {
		prev, seen := last[r.Job]
		switch {
		case seen && r.Tick.Equal(prev.tick):
			t.Errorf("%s ran twice on the tick of %s (the second by %s)", r.Job, r.Tick.Format(time.RFC3339), r.Holder)
		case seen && r.Term <= prev.term:
			t.Errorf("%s's run on %s holds term %d, not after the previous run's %d", r.Job, r.Tick.Format(time.RFC3339), r.Term, prev.term)
		}
		if r.Job == "beta" && r.Tick.Unix()%2 != 0 {
			t.Errorf("beta's tick %s is not on its 2 s grid: replicas would not agree on it", r.Tick.Format(time.RFC3339Nano))
		}
		last[r.Job] = struct {
			tick time.Time
			term int64
		}{r.Tick, r.Term}
	}
}

func TestGracefulStopWaitsForRunningJob(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := db.Exec(`CREATE TABLE job_runs (job text, replica text, at timestamptz)`); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	job := &countingJob{name: "slow", spec: "@every 1s", db: db.DB, replica: "0", hold: 1500 * time.Millisecond, started: started}
	h := start(t, db.URL, "", []daemon.Job{job})
	<-started
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.log.String(), `msg="job done" job=slow`) {
		t.Fatalf("the running job must finish before exit\n%s", h.log)
	}
}

func TestSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := db.Exec(`CREATE TABLE job_runs (job text, replica text, at timestamptz)`); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	job := &countingJob{name: "stuck", spec: "@every 1s", db: db.DB, replica: "0", hold: time.Hour, started: started}
	h := start(t, db.URL, "", []daemon.Job{job})
	<-started
	h.signals <- syscall.SIGTERM
	h.signals <- syscall.SIGINT
	select {
	case err := <-h.done:
		if !errors.Is(err, daemon.ErrForcedExit) {
			t.Fatalf("want ErrForcedExit, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second signal did not exit")
	}
}

func TestStartupRefusesIncompatibleSchema(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(baseYAML, db.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	src := config.Source{Path: path, Explicit: true, Environ: func() []string { return nil }}
	loaded, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{Source: src, Initial: loaded, LogOutput: io.Discard,
		Signals: make(chan os.Signal), Jobs: []daemon.Job{}, StartupTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var se *schema.SchemaError
	if err := d.Run(context.Background()); !errors.As(err, &se) {
		t.Fatalf("want SchemaError, got %v", err)
	}
}

// A note about the configuration is said at startup and not repeated by
// every reload; one that appears later is said when it does.
func TestReloadDoesNotRepeatNotes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := func() []string { return []string{"SUPERSESSIOND_DATABASE_URL=" + db.URL} }
	h := start(t, db.URL, "", nil, func(o *daemon.Options) {
		o.Source.Environ = env
		loaded, err := config.Load(o.Source)
		if err != nil {
			t.Fatal(err)
		}
		o.Initial = loaded
	})
	base := fmt.Sprintf(baseYAML, db.URL)
	h.write(base + "memory:\n  pipelineV2:\n    shadowMode: true\n")
	h.eventually("the first reload", func() bool { return h.d.Config().Memory.PipelineV2.ShadowMode })
	h.write(base)
	h.signals <- syscall.SIGHUP
	h.eventually("the second reload", func() bool {
		return !h.d.Config().Memory.PipelineV2.ShadowMode && strings.Count(h.log.String(), "configuration reloaded") >= 2
	})
	log := h.log.String()
	for _, note := range []string{"database URL taken from SUPERSESSIOND_DATABASE_URL", "maintenance.llm is not configured"} {
		if n := strings.Count(log, note); n != 1 {
			t.Fatalf("%q was said %d times, want once:\n%s", note, n, log)
		}
	}
	// A note that comes with a change is said when it comes: shadow mode
	// was turned on by the first reload, off by the second.
	if n := strings.Count(log, "shadowMode is on"); n != 1 {
		t.Fatalf("the shadow-mode note was said %d times, want once:\n%s", n, log)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
}
