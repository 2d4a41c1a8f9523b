// Package e2e tests the review console in a real browser: Debian's
// chromium, headless, driven by Playwright (playwright-core from npm, which
// downloads no browser), against `supersessiond run` on a throwaway
// database seeded with the demo's agents and swept in shadow mode.
//
// `make test` installs what it needs (scripts/prereqs.sh: chromium with
// apt-get when missing and root, `npm ci` here). Without chromium or node
// the test skips and says so, except under CI=true, where it fails.
package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const chromium = "/usr/bin/chromium"

// prerequisites finds node and chromium and installs the npm packages when
// they are missing; it skips (or, in CI, fails) when it cannot.
func prerequisites(t *testing.T) string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser tests cannot run in CI: %s", msg)
		}
		t.Skipf("browser tests skipped: %s (run `make prereqs`, or install chromium and node, then `npm ci` in internal/console/e2e)", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed")
	}
	if _, err := os.Stat(chromium); err != nil {
		unavailable("%s is not installed (Debian: apt-get install -y chromium)", chromium)
	}
	if _, err := os.Stat("node_modules/playwright-core/package.json"); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			unavailable("node_modules is missing and npm is not installed")
		}
		if out, err := exec.Command(npm, "ci", "--no-audit", "--no-fund").CombinedOutput(); err != nil {
			unavailable("npm ci failed: %v\n%s", err, out)
		}
	}
	return node
}

const token = "e2e-admin-token-7f3a9c1d2b"

func TestConsoleInChromium(t *testing.T) {
	node := prerequisites(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "supersessiond")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/supersessiond").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	db := pgtest.New(t)
	seed, err := os.ReadFile("../../../cmd/supersessiond-demo/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(seed)); err != nil {
		t.Fatalf("seed: %v", err)
	}
	port := proctest.FreePort(t)
	cfgPath := filepath.Join(dir, "agent.yaml")
	cfg := fmt.Sprintf(`memory:
  pipelineV2:
    shadowMode: true
maintenance:
  schedules: {sweep: "0 0 1 1 *", compactionRetry: "off", tombstones: "off"}
  http: {listen: "127.0.0.1:%d"}
  log: {level: info, format: text}
`, port)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_CONFIG="+cfgPath)
	sweep := exec.Command(bin, "sweep", "--once")
	sweep.Env = env
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("shadow sweep: %v\n%s", err, out)
	}

	logs := &proctest.Buffer{}
	run := exec.Command(bin, "run")
	run.Env = append(env, "SUPERSESSIOND_ADMIN_TOKEN="+token)
	run.Stdout, run.Stderr = logs, logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	t.Cleanup(func() {
		_ = run.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = run.Process.Kill()
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitReady(t, base, logs, done)

	// Through plain HTTP: a read or a POST without the token refused, with
	// it done.
	if code, body := request(t, "GET", base+"/api/proposals", ""); code != 403 || strings.Contains(body, `"status"`) {
		t.Fatalf("GET /api/proposals without the token: %d %s", code, body)
	}
	if code, body := request(t, "GET", base+"/api/proposals", token); code != 200 || !strings.Contains(body, `"status": "pending"`) {
		t.Fatalf("GET /api/proposals: %d %s", code, body)
	}
	var someID string
	if err := db.Get(&someID, `SELECT id FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'agent_id' = 'assistant-kim' LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if code, body := request(t, "POST", base+"/api/proposals/"+someID+"/reject", ""); code != 403 {
		t.Fatalf("POST without token: %d %s", code, body)
	}
	if code, body := request(t, "POST", base+"/api/proposals/"+someID+"/reject", token); code != 200 {
		t.Fatalf("POST with token: %d %s", code, body)
	}

	shots := os.Getenv("SUPERSESSIOND_E2E_SHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "shots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	browse := exec.CommandContext(ctx, node, "console.e2e.mjs")
	browse.Env = append(os.Environ(), "BASE_URL="+base, "TOKEN="+token, "SHOTS="+shots, "CHROMIUM="+chromium)
	out, err := browse.CombinedOutput()
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v\n%s\ndaemon log:\n%s", err, out, tail(logs.String(), 30))
	}

	// What the browser did is in the database, each decision once.
	counts := map[string]int{}
	rows, err := db.Query(`SELECT event, count(*) FROM memory_history WHERE event IN ('supersession_proposal_accepted',
		'supersession_proposal_rejected', 'attribute_superseded', 'supersession_reverted') GROUP BY event`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		var n int
		_ = rows.Scan(&e, &n)
		counts[e] = n
	}
	rows.Close()
	if counts["supersession_proposal_accepted"] != 1 || counts["supersession_proposal_rejected"] < 3 ||
		counts["attribute_superseded"] != 1 || counts["supersession_reverted"] != 1 {
		t.Fatalf("history after the browser test: %v", counts)
	}
	// Each decision names who made it, and through which channel.
	var unnamed int
	if err := db.Get(&unnamed, `SELECT count(*) FROM memory_history WHERE event IN ('supersession_proposal_accepted',
		'supersession_proposal_rejected', 'attribute_superseded', 'supersession_reverted')
		AND NOT (changed_by = 'supersessiond:console' AND metadata->>'operator' = 'e2e-operator' AND session_id LIKE 's-%'
		         OR changed_by = 'supersessiond:api' AND metadata->>'operator' = 'admin')`); err != nil {
		t.Fatal(err)
	}
	if unnamed != 0 {
		t.Fatalf("%d decisions do not name their operator, channel and session", unnamed)
	}
	if strings.Contains(logs.String(), token) {
		t.Fatalf("the admin token reached the daemon's log:\n%s", logs.String())
	}
	// SUPERSESSIOND_UPDATE_SCREENSHOT=1 refreshes the README's pictures.
	if os.Getenv("SUPERSESSIOND_UPDATE_SCREENSHOT") != "" {
		for from, to := range map[string]string{"queue-after.png": "console.png", "proposal.png": "console-proposal.png"} {
			raw, err := os.ReadFile(filepath.Join(shots, from))
			if err == nil {
				err = os.WriteFile(filepath.Join("../../../docs", to), raw, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func waitReady(t *testing.T, base string, logs *proctest.Buffer, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("supersessiond run exited: %v\n%s", err, logs.String())
		default:
		}
		if code, _ := request(t, "GET", base+"/readyz", ""); code == 200 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("supersessiond run not ready after 30s:\n%s", logs.String())
}

func request(t *testing.T, method, url, bearer string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
