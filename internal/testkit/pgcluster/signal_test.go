package pgcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper modes run in a child copy of the test binary, because
// StopOnSignal ends the process when it acts.
const helperEnv = "PGCLUSTER_SIGNAL_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(signalHelper(mode, os.Getenv("PGCLUSTER_SIGNAL_DIR")))
	}
	os.Exit(m.Run())
}

// signalHelper arms StopOnSignal on a cluster whose directory is dir (no
// server runs: Stop's pg_ctl fails, its directory is removed all the same),
// then provokes a SIGPIPE as mode says.
func signalHelper(mode, dir string) int {
	c := &Cluster{dir: dir, dataDir: filepath.Join(dir, "data"), binDir: filepath.Join(dir, "no-bin")}
	defer c.StopOnSignal()()
	switch mode {
	case "socket":
		// A write to a socket whose peer has gone raises SIGPIPE too; it
		// is the writer's EPIPE, not a lost output.
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			fmt.Println("socketpair:", err)
			return 1
		}
		_ = syscall.Close(fds[1])
		_, err = syscall.Write(fds[0], []byte("x"))
		if !errors.Is(err, syscall.EPIPE) {
			fmt.Println("write to a closed peer: want EPIPE, got", err)
			return 1
		}
		time.Sleep(300 * time.Millisecond) // time for the handler to (wrongly) act
		fmt.Println("survived")
		return 0
	case "pipe":
		fmt.Println("ready")
		for range 1000 { // the reader closes the pipe after "ready"
			fmt.Println("line")
			time.Sleep(5 * time.Millisecond)
		}
		return 0
	}
	return 1
}

func runHelper(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "PGCLUSTER_SIGNAL_DIR="+dir)
	cmd.Stderr = os.Stderr
	return cmd, dir
}

func TestStopOnSignalIgnoresASocketsSIGPIPE(t *testing.T) {
	cmd, dir := runHelper(t, "socket")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v, output %q", err, out)
	}
	if strings.TrimSpace(string(out)) != "survived" {
		t.Fatalf("helper output %q, want survived", out)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("cluster directory removed after a socket's SIGPIPE: %v", err)
	}
}

func TestStopOnSignalStopsWhenTheOutputPipeCloses(t *testing.T) {
	cmd, dir := runHelper(t, "pipe")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	_ = stdout.Close() // what `| head -1` does
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("helper ended with %v, want exit status 130", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory still there after the output pipe closed (stat: %v)", err)
	}
}
