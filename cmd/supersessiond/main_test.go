package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
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

// When the test binary is re-executed with this variable set it behaves as
// the real supersessiond, so process-level behaviour (signals, exit codes)
// is tested on the real main() without a separate build step.
const beMainEnv = "SUPERSESSIOND_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMainEnv) == "1" {
		os.Args = append([]string{"supersessiond"}, os.Args[1:]...)
		main()
		return
	}
	pgtest.Main(m)
}

// cli runs a command in-process and returns its exit code and output.
type cli struct {
	t   *testing.T
	env []string
}

func newCLI(t *testing.T, env ...string) *cli { return &cli{t: t, env: env} }

func (c *cli) run(stdin string, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Environ: func() []string { return c.env }}
	err := m.Run(context.Background(), args)
	m.report(err)
	return ExitCode(err), out.String(), errb.String()
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersionNeedsNothing(t *testing.T) {
	t.Parallel()
	code, out, _ := newCLI(t).run("", "version")
	if code != 0 || !strings.HasPrefix(out, "supersessiond ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, args := range [][]string{{}, {"frobnicate"}, {"check", "--no-such-flag"}} {
		if code, _, errOut := c.run("", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	if code, _, _ := c.run("", "check", "-h"); code != 0 {
		t.Errorf("-h must exit 0, got %d", code)
	}
}

func TestCheckAndMigrateExitCodes(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)

	code, out, errOut := c.run("", "check")
	if code != exitUnavailable || !strings.Contains(out, "--reference-schema") || !strings.Contains(out, "table entity_attributes not found") {
		t.Fatalf("check before migrate: exit %d, %s%s", code, out, errOut)
	}
	for i := range 2 {
		code, out, errOut := c.run("", "migrate", "--reference-schema")
		if code != 0 {
			t.Fatalf("migrate #%d: exit %d: %s", i+1, code, errOut)
		}
		if i == 1 && !strings.Contains(out, "up to date") {
			t.Fatalf("second migrate must be a no-op: %s", out)
		}
	}
	if code, out, errOut := c.run("", "check"); code != 0 || !strings.Contains(out, "supersession  ok") || !strings.Contains(out, "tombstones    ok") {
		t.Fatalf("check after migrate: exit %d: %s %s", code, out, errOut)
	}

	unknown := writeConfig(t, "maintenance:\n  http:\n    listn: 127.0.0.1:1\n")
	if code, _, errOut := c.run("", "check", "--config", unknown); code != exitUsage || !strings.Contains(errOut, "maintenance.http.listn") {
		t.Fatalf("unknown key: exit %d: %s", code, errOut)
	}
	seven := writeConfig(t, "memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 7\n")
	if code, _, errOut := c.run("", "check", "--config", seven); code != exitUsage || !strings.Contains(errOut, "supersessionMinConfidence") {
		t.Fatalf("confidence 7: exit %d: %s", code, errOut)
	}
	if code, _, errOut := c.run("", "check", "--config", filepath.Join(t.TempDir(), "missing.yaml")); code != exitUsage || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("explicit missing file: exit %d: %s", code, errOut)
	}
}

func TestUnreachableDatabaseIsExit3WithoutPassword(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL=postgres://agent:s3cret-pw@"+addr+"/agent?sslmode=disable&connect_timeout=2")
	code, out, errOut := c.run("", "check")
	if code != exitUnavailable {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	if strings.Contains(out+errOut, "s3cret-pw") {
		t.Fatalf("password leaked:\n%s%s", out, errOut)
	}
}

// No command prints any part of a password, whatever is wrong with the
// URL that holds it: unencoded characters that break URL parsing (and make
// the parser quote the password's prefix), an invalid parameter, or a
// server that is not there.
func TestNoCommandPrintsAPassword(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	urls := []struct{ url, code string }{
		{"postgres://agent:Hunter#2secret@" + addr + "/agent", "2"},
		{"postgres://agent:Hunter/2secret@" + addr + "/agent", "2"},
		{"postgres://agent:Hunter?2secret@" + addr + "/agent", "2"},
		{"postgres://agent:Hunter2secret@" + addr + "/agent?sslmode=bogus", "2"},
		{"host=127.0.0.1 port=" + strings.Split(addr, ":")[1] + " password='Hunter 2secret' sslmode=disable connect_timeout=2", "3"},
		{"postgres://agent:Hunter2secret@" + addr + "/agent?sslmode=disable&connect_timeout=2", "3"},
	}
	for _, u := range urls {
		c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+u.url)
		for _, args := range [][]string{{"check"}, {"migrate"}, {"sweep", "--once", "--json"}, {"history"}} {
			code, out, errOut := c.run("", args...)
			if fmt.Sprint(code) != u.code {
				t.Errorf("%v with %s: exit %d, want %s: %s", args, u.url, code, u.code, errOut)
			}
			for _, fragment := range []string{"Hunter", "2secret"} {
				if strings.Contains(out+errOut, fragment) {
					t.Fatalf("%v with %s printed %q:\n%s%s", args, u.url, fragment, out, errOut)
				}
			}
		}
	}
}

// The real binary under real signals: it answers /readyz, reloads on SIGHUP
// and on a file edit, survives a broken edit and exits 0 on SIGTERM.
func TestRunProcessSignals(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	port := proctest.FreePort(t)
	path := writeConfig(t, "")
	write := func(extra string) {
		body := fmt.Sprintf("maintenance:\n  http:\n    listen: 127.0.0.1:%d\n  log:\n    format: text\n%s", port, extra)
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--config", path)
	cmd.Env = append(os.Environ(), beMainEnv+"=1", "SUPERSESSIOND_DATABASE_URL="+db.URL)
	var logs proctest.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, &logs, "/readyz answers", func() bool { code, _ := httpGet(base + "/readyz"); return code == 200 })

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &logs, "SIGHUP reload", func() bool { return strings.Contains(logs.String(), "reason=SIGHUP") })

	write("memory:\n  pipelineV2:\n    shadowMode: true\n")
	waitFor(t, &logs, "file-edit reload", func() bool { return strings.Contains(logs.String(), `reason="file changed" shadow_mode=true`) })

	write("  bogus: true\n")
	waitFor(t, &logs, "broken edit reported", func() bool {
		code, body := httpGet(base + "/readyz")
		return code == 503 && strings.Contains(body, "maintenance.bogus")
	})
	if code, _ := httpGet(base + "/healthz"); code != 200 {
		t.Fatal("daemon must keep running after a broken edit")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SIGTERM must exit 0, got %v\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM\n%s", logs.String())
	}
}

func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed (apt-get install -y systemd)")
	}
	unit, err := os.ReadFile("../../systemd/supersessiond.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify insists that ExecStart's binary exists: point it at this one.
	exe, _ := os.Executable()
	dir := t.TempDir()
	p := filepath.Join(dir, "supersessiond.service")
	if err := os.WriteFile(p, bytes.ReplaceAll(unit, []byte("/usr/local/bin/supersessiond"), []byte(exe)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", p).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, want := range []string{"Type=notify", "WatchdogSec=", "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure",
		"ProtectSystem=strict", "NoNewPrivileges=true", "MemoryDenyWriteExecute=true", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("unit lacks %s", want)
		}
	}
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitFor(t *testing.T, logs *proctest.Buffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
}
