// Command supersessiond-demo is `make demo`: the daemon's main job end to end
// on a throwaway PostgreSQL holding a realistic demo agent database. It runs
// the real supersessiond binary, printing each command and its output the
// way an operator would see them, and cleans up after itself.
//
//	supersessiond-demo --binary bin/supersessiond          # the whole story, then clean up
//	supersessiond-demo --binary bin/supersessiond --keep   # seed, leave the database running for the README walk-through
//	supersessiond-demo --stop                              # stop a kept database
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

func main() {
	binary := flag.String("binary", "bin/supersessiond", "the supersessiond binary to demonstrate")
	keep := flag.Bool("keep", false, "set up and seed the demo database, then leave it running (see the README's Auditing walk-through)")
	stop := flag.Bool("stop", false, "stop a database left running by --keep")
	flag.Parse()
	var err error
	switch {
	case *stop:
		err = stopKept()
	default:
		err = run(*binary, *keep, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// stateFile remembers a kept cluster for --stop.
const stateDir = ".demo"

type keptState struct {
	ClusterDir string `json:"cluster_dir"`
	DataDir    string `json:"data_dir"`
	RunAs      string `json:"run_as"`
	BinDir     string `json:"bin_dir"`
}

type demo struct {
	binary  string
	env     []string
	dir     string
	cfgPath string
	dbURL   string
	db      *sqlx.DB
	out     io.Writer
	colour  bool // ANSI bold and cyan: only on a terminal, and not under NO_COLOR
	llm     *standInLLM
}

func run(binary string, keep bool, out io.Writer) error {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("no supersessiond binary at %s: run `make build` (or `make demo`, which builds it)", abs)
	}
	ctx := context.Background()
	d := &demo{binary: abs, out: out, colour: wantColour(out, os.Getenv)}

	d.title("Starting a throwaway PostgreSQL")
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{})
	if err != nil {
		return err
	}
	cleanup := func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop cluster:", err)
		}
	}
	if !keep {
		defer cleanup()
		defer cluster.StopOnSignal()()
	}
	if err := d.createDatabase(cluster); err != nil {
		return err
	}
	defer d.db.Close()
	fmt.Fprintf(d.out, "PostgreSQL running in %s (Unix socket only)\n", cluster.Dir())
	if err := d.makeDir(keep); err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(d.dir)
	}
	d.llm, err = startStandInLLM()
	if err != nil {
		return err
	}
	defer d.llm.Close()
	d.cfgPath = filepath.Join(d.dir, "agent.yaml")
	d.env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+d.dbURL, "SUPERSESSIOND_CONFIG="+d.cfgPath)
	if err := d.writeConfig(true, 0); err != nil {
		return err
	}

	d.title("1. Install: migrate adds the daemon's objects (here with the reference agent schema)")
	if err := d.sh("migrate", "--reference-schema"); err != nil {
		return err
	}
	d.title("2. A demo agent database: three agents, their memory graph, conversations, documents")
	if err := d.seed(ctx); err != nil {
		return err
	}
	if err := d.sh("check"); err != nil {
		return err
	}
	if keep {
		return d.leaveRunning(cluster)
	}
	return d.story(ctx)
}

// createDatabase creates the demo's agent database in the cluster.
func (d *demo) createDatabase(cluster *pgcluster.Cluster) error {
	admin, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE agent`); err != nil {
		return err
	}
	d.dbURL = cluster.URL("agent")
	d.db, err = sqlx.Open("postgres", d.dbURL)
	return err
}

// makeDir makes the directory the demo's agent.yaml goes in: beside the
// kept database's state, or a temporary one.
func (d *demo) makeDir(keep bool) error {
	var err error
	if !keep {
		d.dir, err = os.MkdirTemp("", "supersessiond-demo-")
		return err
	}
	if d.dir, err = filepath.Abs(filepath.Join(stateDir, "config")); err != nil {
		return err
	}
	return os.MkdirAll(d.dir, 0o755)
}

// story is the main job end to end; each chapter runs real commands.
func (d *demo) story(ctx context.Context) error {
	for _, chapter := range d.chapters() {
		if err := chapter(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) title(s string) {
	fmt.Fprintf(d.out, "\n%s\n", d.paint(ansiBold, "== "+s+" =="))
}

// prompt echoes a command line the way a shell shows what is typed.
func (d *demo) prompt(format string, args ...any) {
	fmt.Fprintf(d.out, "\n%s\n", d.paint(ansiCyan, "$ "+fmt.Sprintf(format, args...)))
}

const (
	ansiBold = "\033[1m"
	ansiCyan = "\033[36m"
)

// paint wraps s in an ANSI style when the demo writes colour.
func (d *demo) paint(style, s string) string {
	if !d.colour {
		return s
	}
	return style + s + "\033[0m"
}

// wantColour follows https://no-color.org: colour only on a terminal, never
// when NO_COLOR is set to anything but the empty string, nor for TERM=dumb.
// A character device stands for a terminal (the standard library has no
// isatty); /dev/null is one too, where colour does no harm.
func wantColour(out io.Writer, getenv func(string) string) bool {
	f, ok := out.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, format+"\n", args...)
}

// quietCommands sets the one-shot commands' log level (see shOut).
const quietCommands = "SUPERSESSIOND_MAINTENANCE__LOG__LEVEL=warn"

// sh runs the binary with args, echoing the command and its output.
func (d *demo) sh(args ...string) error {
	_, err := d.shOut(true, args...)
	return err
}

func (d *demo) shOut(echo bool, args ...string) (string, error) {
	if echo {
		d.prompt("supersessiond %s", strings.Join(quoteArgs(args), " "))
	}
	cmd := exec.Command(d.binary, args...)
	// The commands' change log (a line per change, on stderr) says again
	// what their output says: at warn, this page stays short. The daemon's
	// log in step 8 shows it.
	cmd.Env = append(slices.Clip(d.env), quietCommands)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	if echo {
		fmt.Fprint(d.out, indent(buf.String()))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return buf.String(), fmt.Errorf("supersessiond %s exited %d", strings.Join(args, " "), ee.ExitCode())
	}
	return buf.String(), err
}

// shExpect runs a command that is expected to fail with the given exit code.
func (d *demo) shExpect(code int, args ...string) error {
	_, err := d.shOut(true, args...)
	var ee *exec.ExitError
	if err == nil {
		return fmt.Errorf("supersessiond %s: expected exit %d, got 0", strings.Join(args, " "), code)
	}
	if errors.As(errors.Unwrap(err), &ee) && ee.ExitCode() != code {
		return fmt.Errorf("supersessiond %s: expected exit %d: %v", strings.Join(args, " "), code, err)
	}
	fmt.Fprintf(d.out, "  (exit %d, as expected)\n", code)
	return nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

// writeConfig writes the demo's agent.yaml.
func (d *demo) writeConfig(shadow bool, httpPort int) error {
	if httpPort == 0 {
		httpPort = 9464
	}
	body := fmt.Sprintf(`# supersessiond demo configuration (the agent's own keys would sit beside these)
memory:
  pipelineV2:
    shadowMode: %t
    structural:
      supersessionMinConfidence: 0.7
      supersessionReviewConfidence: 0.5
maintenance:
  schedules:
    sweep: "*/30 * * * *"
  inlineHook:
    pollInterval: 2s
  compaction:
    staleAfter: 10m
    maxAttempts: 3
    backoff: {initial: 1s, max: 2s}
  tombstones:
    minAge: 5m
  llm:
    endpoint: %s
    model: stand-in-extractor
  http:
    listen: 127.0.0.1:%d
  log:
    level: info
    format: text
`, shadow, d.llm.URL(), httpPort)
	tmp := d.cfgPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, d.cfgPath)
}

func (d *demo) leaveRunning(cluster *pgcluster.Cluster) error {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return err
	}
	st := keptState{ClusterDir: cluster.Dir()}
	raw, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(stateDir, "state.json"), raw, 0o644); err != nil {
		return err
	}
	envFile := filepath.Join(stateDir, "env")
	exports := fmt.Sprintf("export SUPERSESSIOND_DATABASE_URL='%s'\nexport SUPERSESSIOND_CONFIG='%s'\nexport PATH=\"%s:$PATH\"\n"+
		"# The commands' change log (one line per change, on stderr) at warn, as in the README's outputs.\nexport %s\n",
		d.dbURL, d.cfgPath, filepath.Dir(d.binary), quietCommands)
	if err := os.WriteFile(envFile, []byte(exports), 0o644); err != nil {
		return err
	}
	d.title("The demo database is left running")
	d.say("Point your shell at it, then follow the README's \"Auditing\" walk-through:")
	d.say("")
	d.say("  source %s", envFile)
	d.say("")
	d.say("Stop it with: make demo-stop")
	d.say("Note: the demo's stand-in LLM is not running now; compaction retries will wait for an LLM.")
	return nil
}

func stopKept() error {
	raw, err := os.ReadFile(filepath.Join(stateDir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("no kept demo database")
		return nil
	}
	if err != nil {
		return err
	}
	var st keptState
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	if err := pgcluster.StopDir(st.ClusterDir); err != nil {
		return err
	}
	fmt.Println("stopped and removed", st.ClusterDir)
	return os.RemoveAll(stateDir)
}

// freePort finds a loopback port for the daemon's HTTP server.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// daemon is a running `supersessiond run`.
type daemon struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	port int
	done chan error
}

func (d *demo) startDaemon() (*daemon, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := d.writeConfig(false, port); err != nil {
		return nil, err
	}
	d.prompt("supersessiond run &")
	cmd := exec.Command(d.binary, "run")
	cmd.Env = d.env
	logs := &syncBuffer{}
	cmd.Stdout = logs
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	dm := &daemon{cmd: cmd, logs: logs, port: port, done: make(chan error, 1)}
	go func() { dm.done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if body, code := httpGet(fmt.Sprintf("http://127.0.0.1:%d/readyz", port)); code == 200 {
			fmt.Fprint(d.out, indent("GET /readyz → 200\n"+body))
			return dm, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return nil, fmt.Errorf("daemon not ready after 20s:\n%s", logs.String())
}

func (dm *daemon) stop(d *demo) error {
	d.prompt("kill -TERM %d", dm.cmd.Process.Pid)
	if err := dm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-dm.done:
		if err != nil {
			return fmt.Errorf("daemon exited with %v:\n%s", err, dm.logs.String())
		}
		fmt.Fprint(d.out, indent("daemon exited 0"))
		return nil
	case <-time.After(40 * time.Second):
		_ = dm.cmd.Process.Kill()
		return errors.New("daemon did not stop within 40s")
	}
}
