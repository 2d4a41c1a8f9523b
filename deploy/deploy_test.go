package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// promtool checks the rules and runs their unit tests: every alert is seen
// firing and not firing.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed, so the alert rules are not tested: `make prereqs` installs it as root " +
			"(Debian's prometheus package), or apt-get install --no-install-recommends prometheus")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// Every metric the dashboard's queries and the alerts' expressions name is
// one a running daemon exports. The daemon runs its standard jobs and the
// inline hook on a database seeded so that each of them has something to
// do (a labelled series appears with its first event), against an LLM that
// answers nonsense.
func TestDashboardAndAlertsNameExportedMetrics(t *testing.T) {
	t.Parallel()
	queries := queriedMetrics(t)
	metrics := startBusyDaemon(t)
	var missing []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		missing = missingMetrics(queries, metrics())
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, name := range missing {
		t.Errorf("%s is not in the daemon's /metrics; used by %s", name, strings.Join(queries[name], ", "))
	}
}

// A fresh daemon, on a fresh database where nothing has happened and no job
// runs, already has every series the dashboard and the alerts query, with
// its known label values at zero: a healthy new daemon shows zeros, not
// "No data". Only the health loop's first round is waited for (it sets the
// ready and database gauges once the daemon answers).
func TestFreshDaemonHasEveryQueriedSeries(t *testing.T) {
	t.Parallel()
	queries := queriedMetrics(t)
	db := pgtest.New(t)
	metrics := startDaemon(t, fmt.Sprintf(`maintenance:
  database:
    url: %q
  schedules:
    sweep: "@every 8760h"
    compactionRetry: "@every 8760h"
    tombstones: "@every 8760h"
  http:
    listen: 127.0.0.1:0
  log:
    format: text
`, db.URL))
	var missing []string
	for range 40 {
		if missing = missingMetrics(queries, metrics()); len(missing) == 0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, name := range missing {
		t.Errorf("a fresh daemon's /metrics lacks %s; used by %s", name, strings.Join(queries[name], ", "))
	}
}

// missingMetrics returns the queried metric names not exported, sorted.
func missingMetrics(queries map[string][]string, exported map[string]bool) []string {
	var missing []string
	for name := range queries {
		if !exported[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing
}

// queriedMetrics returns every metric name the dashboard's queries and the
// alerts' expressions name, with where each is used.
func queriedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	queries := map[string][]string{} // metric → where it is used
	for where, expr := range dashboardQueries(t) {
		for _, name := range metricNames(expr) {
			queries[name] = append(queries[name], where)
		}
	}
	for where, expr := range alertExpressions(t) {
		for _, name := range metricNames(expr) {
			queries[name] = append(queries[name], where)
		}
	}
	if len(queries) < 30 {
		t.Fatalf("only %d metric names found in the dashboard and the alerts: is the extraction broken?", len(queries))
	}
	// Prometheus makes these itself for every target.
	delete(queries, "up")
	return queries
}

// dashboardQueries returns every PromQL expression of the dashboard: panel
// targets and template variables, keyed by where they are.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("grafana/supersessiond.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana/supersessiond.json: %v", err)
	}
	out := map[string]string{}
	for _, p := range dash.Panels {
		for i, target := range p.Targets {
			out[fmt.Sprintf("dashboard panel %q #%d", p.Title, i+1)] = target.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			// label_values(metric, label): the metric is what matters.
			def := strings.TrimPrefix(v.Definition, "label_values(")
			out[fmt.Sprintf("dashboard variable %q", v.Name)], _, _ = strings.Cut(def, ",")
		}
	}
	return out
}

// alertExpressions returns every rule expression of alerts.yml by alert.
func alertExpressions(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("prometheus/alerts.yml: %v", err)
	}
	out := map[string]string{}
	groups, _ := doc["groups"].([]any)
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			rule := r.(map[string]any)
			out[fmt.Sprintf("alert %v", rule["alert"])] = fmt.Sprint(rule["expr"])
		}
	}
	if len(out) == 0 {
		t.Fatal("prometheus/alerts.yml: no rules found")
	}
	return out
}

var (
	// What a metric name cannot be inside of: strings, label matchers,
	// ranges and subqueries, Grafana variables, and the label lists of
	// grouping and vector matching.
	promNotNames = []*regexp.Regexp{
		regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`"),
		regexp.MustCompile(`\{[^}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`\$\{[^}]*\}|\$\w+`),
		regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
	}
	// Numbers and durations, then identifiers with what follows them.
	promTokens   = regexp.MustCompile(`[0-9](?:[eE][+-]|[0-9a-zA-Z_.])*|([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?`)
	promKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
		"group_left", "group_right", "inf", "nan", "start", "end"}
)

// metricNames returns the metric names a PromQL expression selects:
// identifiers that are not functions or aggregations (followed by "("),
// keywords, label names or numbers.
func metricNames(expr string) []string {
	for _, re := range promNotNames {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, m := range promTokens.FindAllStringSubmatch(expr, -1) {
		name, call := m[1], m[2]
		if name == "" || call != "" || slices.Contains(promKeywords, strings.ToLower(name)) {
			continue
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up{job="supersessiond"} == 0`, []string{"up"}},
		{`sum by (job, result) (increase(supersessiond_job_runs_total{instance=~"$instance"}[$__rate_interval]))`,
			[]string{"supersessiond_job_runs_total"}},
		{`histogram_quantile(0.99, sum without (instance) (rate(a_bucket[10m]))) > 60`, []string{"a_bucket"}},
		{"max without (instance) ((a == 0) and ((3 * b > 0) < on (instance) group_left () (time() - c))) unless max(a > 0)",
			[]string{"a", "b", "c"}},
		{`sum(x offset 1h) / sum(y{kind!="canceled", re=~"a|b(c)"}) > 1e-3`, []string{"x", "y"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// startBusyDaemon starts the standard daemon (every job each second, the
// inline hook) on a seeded database and returns a function that reads the
// metric names of its /metrics.
func startBusyDaemon(t *testing.T) func() map[string]bool {
	t.Helper()
	db := pgtest.New(t)
	const agent = "agent-1"
	s := memtest.New(t, db.DB)
	home := s.Aspect(agent, "sam", "home")
	family := s.Aspect(agent, "sam", "family")
	health := s.Aspect(agent, "sam", "health")
	projects := s.Aspect(agent, "sam", "projects")
	s.Add(
		memtest.Attr{ID: "home-1", Agent: agent, Aspect: home, Content: "Lives in Toronto"},
		memtest.Attr{ID: "home-2", Agent: agent, Aspect: home, Content: "Lives in Vancouver"}, // a supersession
		memtest.Attr{ID: "fam-1", Agent: agent, Aspect: family, Content: "Is married to Alex"},
		memtest.Attr{ID: "fam-2", Agent: agent, Aspect: family, Content: "Is divorced"}, // the review band: a proposal
		memtest.Attr{ID: "health-1", Agent: agent, Aspect: health, Content: "Allergic to peanuts", Protected: true},
		memtest.Attr{ID: "health-2", Agent: agent, Aspect: health, Content: "No longer allergic to peanuts"}, // a skip
		memtest.Attr{ID: "garden-1", Agent: agent, Aspect: projects, Content: "Works on the garden project every weekend"},
		memtest.Attr{ID: "garden-2", Agent: agent, Aspect: projects, Content: "Works on the garden project with Alice"}, // an LLM question
		memtest.Attr{ID: "home-3", Agent: agent, Content: "Lives in Lisbon"},                                            // classified later: the inline hook
	)
	s.Exec(`INSERT INTO messages (agent_id, seq, direction, body) VALUES ($1, 1, 'inbound', 'I moved to Lisbon'), ($1, 2, 'outbound', 'Noted.')`, agent)
	// A stale event the LLM cannot compact, and one without a range (given up).
	s.Exec(`INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status)
		VALUES ($1, now() - interval '1 hour', 1, 2, 'pending'), ($1, now() - interval '1 hour', NULL, NULL, 'pending')`, agent)

	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "I would rather not answer in JSON.")
	}))
	t.Cleanup(llm.Close)

	metrics := startDaemon(t, fmt.Sprintf(`memory:
  pipelineV2:
    semanticContradictionEnabled: true
    structural:
      supersessionSemanticFallback: true
maintenance:
  database:
    url: %q
  schedules:
    sweep: "@every 1s"
    compactionRetry: "@every 1s"
    tombstones: "@every 1s"
  inlineHook:
    pollInterval: 1s
  llm:
    endpoint: %q
    model: test-model
    timeout: 5s
  http:
    listen: 127.0.0.1:0
  log:
    level: debug
    format: text
`, db.URL, llm.URL))
	// The agent's classifier gives an attribute its aspect.
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'home-3'`, home)
	return metrics
}

// startDaemon starts the standard daemon on the agent.yaml body and returns
// a function that reads the metric names of its /metrics.
func startDaemon(t *testing.T, body string) func() map[string]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	src := config.Source{Path: path, Explicit: true, Environ: func() []string { return nil }}
	loaded, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	logs := &proctest.Buffer{}
	signals := make(chan os.Signal, 1)
	addr := make(chan string, 1)
	d, err := daemon.New(daemon.Options{
		Source: src, Initial: loaded, LogOutput: logs, Signals: signals,
		Environ: func() []string { return nil }, ShutdownTimeout: 5 * time.Second, StartupTimeout: 5 * time.Second,
		LeaseTTL: 3 * time.Second, ListenerReady: func(a string) { addr <- a },
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("daemon exited at startup: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon did not start\n%s", logs)
	}
	t.Cleanup(func() {
		signals <- syscall.SIGTERM
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon stopped with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("daemon did not stop\n%s", logs)
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs)
		}
	})
	return func() map[string]bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for line := range strings.SplitSeq(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			names[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
		}
		return names
	}
}

// make install honours DESTDIR and PREFIX, and installs agent.yaml in shadow
// mode, as the package does, unless there is one; make uninstall removes
// what it installed and leaves the operator's configuration.
func TestMakeInstallAndUninstall(t *testing.T) {
	t.Parallel()
	mk := requireTool(t, "make")
	run(t, "..", mk, "-s", "build")
	root := t.TempDir()
	vars := []string{"DESTDIR=" + root, "PREFIX=/usr"}
	run(t, "..", mk, append([]string{"-s", "install"}, vars...)...)
	for path, mode := range map[string]os.FileMode{
		"usr/bin/supersessiond":                               0o755,
		"usr/lib/systemd/system/supersessiond.service":        0o644,
		"etc/supersessiond/agent.yaml.example":                0o644,
		"etc/supersessiond/agent.yaml":                        0o640,
		"usr/share/bash-completion/completions/supersessiond": 0o644,
		"usr/share/zsh/site-functions/_supersessiond":         0o644,
	} {
		fi, err := os.Stat(filepath.Join(root, path))
		if err != nil {
			t.Errorf("make install: %v", err)
		} else if fi.Mode().Perm() != mode {
			t.Errorf("make install: %s has mode %v, want %v", path, fi.Mode().Perm(), mode)
		}
	}
	unit, _ := os.ReadFile(filepath.Join(root, "usr/lib/systemd/system/supersessiond.service"))
	if !strings.Contains(string(unit), "\nExecStart=/usr/bin/supersessiond run ") {
		t.Errorf("the installed unit does not run the installed binary:\n%s", unit)
	}

	operators := filepath.Join(root, "etc/supersessiond/agent.yaml")
	loaded, err := config.Load(config.Source{Path: operators, Explicit: true, Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("installed agent.yaml: %v", err)
	}
	if !loaded.Config.Memory.PipelineV2.ShadowMode {
		t.Error("the agent.yaml make install puts in /etc starts live; the package's starts in shadow mode")
	}
	if err := os.WriteFile(operators, []byte("memory: {}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	run(t, "..", mk, append([]string{"-s", "install"}, vars...)...)
	if b, _ := os.ReadFile(operators); string(b) != "memory: {}\n" {
		t.Errorf("a second make install replaced the operator's agent.yaml:\n%s", b)
	}
	run(t, "..", mk, append([]string{"-s", "uninstall"}, vars...)...)
	for _, path := range []string{"usr/bin/supersessiond", "usr/lib/systemd/system/supersessiond.service", "etc/supersessiond/agent.yaml.example",
		"usr/share/bash-completion/completions/supersessiond", "usr/share/zsh/site-functions/_supersessiond"} {
		if _, err := os.Stat(filepath.Join(root, path)); !os.IsNotExist(err) {
			t.Errorf("make uninstall left %s (%v)", path, err)
		}
	}
	if _, err := os.Stat(operators); err != nil {
		t.Errorf("make uninstall removed the operator's agent.yaml: %v", err)
	}
}

// make deb builds a package that installs the binary, the unit, agent.yaml
// as a conffile (in shadow mode) with the example beside it, and maintainer
// scripts that create the system user first; read back with dpkg-deb.
func TestDebianPackage(t *testing.T) {
	t.Parallel()
	mk := requireTool(t, "make")
	dpkgDeb := requireTool(t, "dpkg-deb")
	out := t.TempDir()
	run(t, "..", mk, "-s", "deb", "DEB_OUT="+out, "DEB_VERSION=1.2.3")
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("make deb made %q in %s, want one package", debs, out)
	}
	deb := debs[0]
	if !strings.HasPrefix(filepath.Base(deb), "supersessiond_1.2.3_") {
		t.Errorf("package file %s", filepath.Base(deb))
	}

	contents := run(t, "", dpkgDeb, "-c", deb)
	t.Logf("dpkg-deb -c:\n%s", contents)
	for path, mode := range map[string]string{
		"./usr/bin/supersessiond":                               "-rwxr-xr-x",
		"./lib/systemd/system/supersessiond.service":            "-rw-r--r--",
		"./etc/supersessiond/":                                  "drwxr-x---",
		"./etc/supersessiond/agent.yaml":                        "-rw-r-----",
		"./etc/supersessiond/agent.yaml.example":                "-rw-r--r--",
		"./usr/share/doc/supersessiond/copyright":               "-rw-r--r--",
		"./usr/share/bash-completion/completions/supersessiond": "-rw-r--r--",
		"./usr/share/zsh/vendor-completions/_supersessiond":     "-rw-r--r--",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(mode) + ` root/root .* ` + regexp.QuoteMeta(path) + `$`).MatchString(contents) {
			t.Errorf("dpkg-deb -c: no %s %s", mode, path)
		}
	}

	info := run(t, "", dpkgDeb, "-I", deb)
	for _, want := range []string{"Package: supersessiond", "Version: 1.2.3", "Pre-Depends: passwd",
		" conffiles", " preinst ", " postinst ", " prerm ", " postrm "} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	conffiles := run(t, "", dpkgDeb, "-I", deb, "conffiles")
	if !slices.Contains(strings.Fields(conffiles), "/etc/supersessiond/agent.yaml") {
		t.Errorf("agent.yaml is not a conffile (dpkg would overwrite an edited one):\n%s", conffiles)
	}
	preinst := run(t, "", dpkgDeb, "-I", deb, "preinst")
	if !strings.Contains(preinst, "useradd --system") {
		t.Errorf("preinst does not create the system user:\n%s", preinst)
	}
	postinst := run(t, "", dpkgDeb, "-I", deb, "postinst")
	if regexp.MustCompile(`(?m)^\s*(systemctl|deb-systemd-helper|deb-systemd-invoke)\s+(enable|start)\b`).MatchString(postinst) {
		t.Errorf("postinst must neither enable nor start the daemon:\n%s", postinst)
	}

	// What gets installed: a unit that runs /usr/bin/supersessiond and an
	// agent.yaml the daemon accepts, in shadow mode.
	root := t.TempDir()
	run(t, "", dpkgDeb, "-x", deb, root)
	unit, _ := os.ReadFile(filepath.Join(root, "lib/systemd/system/supersessiond.service"))
	if !strings.Contains(string(unit), "\nExecStart=/usr/bin/supersessiond run --config /etc/supersessiond/agent.yaml\n") {
		t.Errorf("packaged unit:\n%s", unit)
	}
	loaded, err := config.Load(config.Source{Path: filepath.Join(root, "etc/supersessiond/agent.yaml"), Explicit: true,
		Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("packaged agent.yaml: %v", err)
	}
	if !loaded.Config.Memory.PipelineV2.ShadowMode {
		t.Error("packaged agent.yaml is not in shadow mode")
	}
	version := run(t, "", filepath.Join(root, "usr/bin/supersessiond"), "--version")
	if !strings.HasPrefix(version, "supersessiond ") {
		t.Errorf("packaged binary --version: %q", version)
	}
}

func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: this test needs it (Debian: apt-get install dpkg make)", name)
	}
	return path
}

// run runs a command in dir and returns its standard output; it fails the
// test, with all the output, when the command fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
