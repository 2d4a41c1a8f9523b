package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cluster is a running throwaway PostgreSQL cluster listening only on a Unix
// socket inside its own temporary directory.
type Cluster struct {
	dir        string // everything lives below here and is removed by Stop
	dataDir    string
	socketDir  string
	port       int
	binDir     string
	runAs      string // "" or the OS user the server runs as (when we are root)
	superuser  string
	serverOpts string // the -o options, reused by Restart
}

// Options tune Start. The zero value is fine for tests.
type Options struct {
	// Port is only the socket file's number (.s.PGSQL.<port>); nothing
	// listens on TCP. Default 5432: each cluster has its own socket dir.
	Port int
	// MaxConnections defaults to 200: concurrency tests open many.
	MaxConnections int
	// Durable keeps fsync on. Tests and the demo do not need it.
	Durable bool
	// ExtraSettings are passed as -c name=value to the server.
	ExtraSettings map[string]string
}

// ErrBinariesMissing is returned when initdb/pg_ctl cannot be found.
var ErrBinariesMissing = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql/*/bin: " +
	"install them (Debian: apt-get install -y postgresql) or point SUPERSESSIOND_TEST_DATABASE_URL at a server you own")

// FindBinDir locates the directory holding initdb and pg_ctl: PATH first, then
// the newest /usr/lib/postgresql/<version>/bin.
func FindBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, m := range matches {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	return "", ErrBinariesMissing
}

func versionOf(initdbPath string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdbPath))), 64)
	return v
}

// Start runs initdb and pg_ctl start in a fresh temporary directory. When the
// effective uid is 0 the server runs as the "postgres" user, because initdb
// refuses to run as root.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	binDir, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	if opts.Port == 0 {
		opts.Port = 5432
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = 200
	}
	// Short base path: Unix socket paths are limited to ~107 bytes.
	dir, err := os.MkdirTemp("", "ssd-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: create temp dir: %w", err)
	}
	c := &Cluster{
		dir:       dir,
		dataDir:   filepath.Join(dir, "data"),
		socketDir: filepath.Join(dir, "sock"),
		port:      opts.Port,
		binDir:    binDir,
		superuser: "postgres",
	}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
	}
	if err := c.prepareDirs(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.initdb(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.start(ctx, opts); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) prepareDirs() error {
	if err := os.Chmod(c.dir, 0o755); err != nil {
		return fmt.Errorf("pgcluster: chmod %s: %w", c.dir, err)
	}
	for _, d := range []string{c.socketDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("pgcluster: mkdir %s: %w", d, err)
		}
	}
	if c.runAs == "" {
		return nil
	}
	u, err := user.Lookup(c.runAs)
	if err != nil {
		return fmt.Errorf("pgcluster: running as root needs the %q user to run the server as: %w", c.runAs, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range []string{c.dir, c.socketDir} {
		if err := os.Chown(d, uid, gid); err != nil {
			return fmt.Errorf("pgcluster: chown %s to %s: %w", d, c.runAs, err)
		}
	}
	return nil
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	bin := filepath.Join(c.binDir, name)
	if c.runAs != "" {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", c.runAs, "--", bin}, args...)...)
	}
	return exec.CommandContext(ctx, bin, args...)
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := c.command(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = c.dir // runuser keeps cwd; root's cwd may be unreadable by postgres
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgcluster: %s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (c *Cluster) initdb(ctx context.Context) error {
	return c.run(ctx, "initdb",
		"--pgdata", c.dataDir,
		"--username", c.superuser,
		"--auth", "trust",
		"--encoding", "UTF8",
		"--locale", "C",
		"--no-sync",
	)
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	settings := map[string]string{
		"listen_addresses":        "''",
		"unix_socket_directories": "'" + c.socketDir + "'",
		"port":                    strconv.Itoa(c.port),
		"max_connections":         strconv.Itoa(opts.MaxConnections),
		"shared_buffers":          "256MB",
		"log_min_messages":        "warning",
	}
	if !opts.Durable {
		settings["fsync"] = "off"
		settings["synchronous_commit"] = "off"
		settings["full_page_writes"] = "off"
	}
	for k, v := range opts.ExtraSettings {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var o []string
	for _, k := range keys {
		o = append(o, "-c", k+"="+settings[k])
	}
	c.serverOpts = strings.Join(o, " ")
	return c.run(ctx, "pg_ctl", "start", "--pgdata", c.dataDir, "--wait", "--timeout", "60",
		"--log", filepath.Join(c.dir, "server.log"), "-o", c.serverOpts)
}

// Restart stops and starts the server in place (fault tests use it).
func (c *Cluster) Restart(ctx context.Context, downFor time.Duration) error {
	if err := c.run(ctx, "pg_ctl", "stop", "--pgdata", c.dataDir, "--mode", "fast", "--wait"); err != nil {
		return err
	}
	select {
	case <-time.After(downFor):
	case <-ctx.Done():
		return ctx.Err()
	}
	return c.run(ctx, "pg_ctl", "start", "--pgdata", c.dataDir, "--wait", "--timeout", "60",
		"--log", filepath.Join(c.dir, "server.log"), "-o", c.serverOpts)
}

// URL returns a lib/pq connection URL for database name on this cluster.
func (c *Cluster) URL(dbname string) string {
	q := url.Values{}
	q.Set("host", c.socketDir)
	q.Set("port", strconv.Itoa(c.port))
	q.Set("user", c.superuser)
	q.Set("sslmode", "disable")
	return "postgres:///" + url.PathEscape(dbname) + "?" + q.Encode()
}

// Dir is the temporary directory holding the cluster (data, socket, log).
func (c *Cluster) Dir() string { return c.dir }

// Stop shuts the server down immediately and removes its directory.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stopErr := c.run(ctx, "pg_ctl", "stop", "--pgdata", c.dataDir, "--mode", "immediate", "--wait")
	if err := os.RemoveAll(c.dir); err != nil && stopErr == nil {
		return fmt.Errorf("pgcluster: remove %s: %w", c.dir, err)
	}
	return stopErr
}

// StopDir stops a cluster started by Start in another process (the demo's
// --keep) given its Dir, and removes the directory.
func StopDir(dir string) error {
	binDir, err := FindBinDir()
	if err != nil {
		return err
	}
	c := &Cluster{dir: dir, dataDir: filepath.Join(dir, "data"), binDir: binDir}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
	}
	return c.Stop()
}

// StopOnSignal stops the cluster and exits (status 130) if the process is
// interrupted, terminated or loses its output pipe before cleanup would
// run, so that a Ctrl-C or a `| head` does not leave a server behind. The
// returned function unregisters the handler.
//
// Asking for SIGPIPE makes the runtime deliver every SIGPIPE to the
// channel, including those raised by a write to a socket whose peer went
// away (a PostgreSQL backend a fault test killed, an HTTP client that hung
// up). Those are the writer's to handle through its EPIPE error, so a
// SIGPIPE counts only when standard output or standard error is in fact a
// broken pipe.
func (c *Cluster) StopOnSignal() (unregister func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGPIPE && !outputBroken() {
					continue
				}
				_ = c.Stop()
				os.Exit(130)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// outputBroken reports whether standard output or standard error is a pipe
// or socket whose reader has gone: poll reports POLLERR (pipe) or POLLHUP
// (socket) on it without blocking.
func outputBroken() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, fd := range fds {
		if fd.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
