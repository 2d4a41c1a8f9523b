package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/lease"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/metrics"
	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/sdnotify"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// Job is a scheduled job (sweep, compaction retries, tombstones). Run gets the
// configuration current when the run starts and a context cancelled at
// shutdown (after the grace period) or when the job's lease is lost. The
// report it returns is logged.
type Job interface {
	Name() string
	// Schedule is the job's cron spec under cfg, or config.ScheduleOff.
	Schedule(cfg *config.Config) string
	Run(ctx context.Context, cfg *config.Config) (jobs.Report, error)
}

// Service is a long-running part of the daemon (the inline hook). Run
// returns when ctx is cancelled; it reads the live configuration through
// current, so a reload applies to its next batch.
type Service interface {
	Name() string
	Enabled(cfg *config.Config) bool
	Run(ctx context.Context, current func() *config.Config) error
	// Ready is nil while the service is healthy (its listener connected).
	Ready() error
}

// ErrForcedExit is returned when a second stop signal cut the graceful
// shutdown short.
var ErrForcedExit = errors.New("second stop signal: exited without waiting for running jobs")

// Options configure a Daemon.
type Options struct {
	Source  config.Source  // where to reload the configuration from
	Initial *config.Loaded // the configuration loaded at startup
	// LogOutput receives the daemon's structured log (default os.Stderr).
	LogOutput io.Writer
	// Environ supplies NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID
	// (default os.Environ).
	Environ func() []string
	// Signals delivers SIGHUP, SIGTERM and SIGINT. Required.
	Signals <-chan os.Signal
	// ShutdownTimeout bounds how long running jobs may finish after a stop
	// signal before they are cancelled (default 30s).
	ShutdownTimeout time.Duration
	// StartupTimeout bounds how long to wait for the database at startup
	// (default 30s).
	StartupTimeout time.Duration
	// LeaseTTL bounds how long a dead replica keeps a job's lease
	// (default 30s).
	LeaseTTL time.Duration
	// MinFreeConnections is how many connection slots the server must keep
	// free for ordinary roles (default store.DefaultMinFree, 2): a crowded
	// server's last slots are the agent's. Every path that may open a
	// connection asks the guard first (store.Guard): a scheduled run waits
	// for the next tick, the inline hook, a pass's next batch and the LISTEN
	// connection wait for room.
	MinFreeConnections int
	// Jobs and Services replace the standard set when non-nil (tests).
	Jobs     []Job
	Services func(deps jobs.Deps) []Service
	// ListenerReady, when set, receives the bound HTTP address (tests).
	ListenerReady func(addr string)
}

// Daemon is `supersessiond run`.
type Daemon struct {
	opts   Options
	cfg    atomic.Pointer[config.Config]
	set    atomic.Pointer[loadedSettings] // made of cfg, once per load
	level  slog.LevelVar
	log    *slog.Logger
	notify *sdnotify.Notifier
	db     *sqlx.DB
	guard  *store.Guard // leaves a crowded server's last slots to the agent
	// consoleDB is the console's own pool (maintenance.http.maxOpenConns).
	consoleDB *sqlx.DB
	metrics   *metrics.Metrics
	leases    *lease.Manager
	layout    *schema.Layout // the database as inspected at startup
	sched     *scheduler
	std       *Standard // the engine, the jobs and the operators' commands
	svcs      *services

	reloads   chan struct{} // reload requests from the file watch and the health loop
	reloadMu  sync.Mutex
	reloadErr atomic.Pointer[string] // last failed reload, "" when fine
	// restart are the keys the file in force changed that only a restart
	// applies (config.RestartKeys); /readyz names them.
	restart atomic.Pointer[[]string]
	// running is the digest of the file the configuration in force was
	// read from; tried is the digest the last reload attempt read. Both ""
	// when no file was read.
	running, tried atomic.Pointer[string]
	dbUp           atomic.Bool
	started        time.Time
	// said are the configuration's notes last logged: a reload says only
	// the new ones ("database URL taken from ..." is said once, not on
	// every reload). Guarded by reloadMu after startup.
	said map[string]bool
}

// New prepares a daemon; Run starts it.
func New(opts Options) (*Daemon, error) {
	if opts.Initial == nil || opts.Signals == nil {
		return nil, errors.New("daemon: Initial and Signals are required")
	}
	if opts.LogOutput == nil {
		opts.LogOutput = os.Stderr
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	if opts.StartupTimeout == 0 {
		opts.StartupTimeout = 30 * time.Second
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.MinFreeConnections == 0 {
		opts.MinFreeConnections = store.DefaultMinFree
	}
	d := &Daemon{opts: opts, reloads: make(chan struct{}, 1)}
	cfg := opts.Initial.Config
	d.setConfig(cfg)
	empty := ""
	d.reloadErr.Store(&empty)
	d.restart.Store(new([]string))
	digest := opts.Initial.Digest
	d.running.Store(&digest)
	d.tried.Store(&digest)
	d.level.Set(parseLevel(cfg.Maintenance.Log.Level))
	d.log = newLogger(opts.LogOutput, cfg.Maintenance.Log.Format, &d.level)
	d.notify = sdnotify.New(config.Getenv(opts.Environ, "NOTIFY_SOCKET"))
	return d, nil
}

// Config returns the configuration currently in force.
func (d *Daemon) Config() *config.Config { return d.cfg.Load() }

// setConfig puts cfg in force, with the settings made of it.
func (d *Daemon) setConfig(cfg *config.Config) {
	d.set.Store(&loadedSettings{cfg: cfg, s: SettingsOf(cfg)})
	d.cfg.Store(cfg)
}

// loadedSettings are the settings made of one loaded configuration.
type loadedSettings struct {
	cfg *config.Config
	s   Settings
}

// settingsOf are cfg's settings: made once per load for the configuration
// in force (or the one just replaced), made now for another.
func (d *Daemon) settingsOf(cfg *config.Config) Settings {
	if l := d.set.Load(); l != nil && l.cfg == cfg {
		return l.s
	}
	return SettingsOf(cfg)
}

// settings are the settings of the configuration in force.
func (d *Daemon) settings() Settings { return d.settingsOf(d.Config()) }

// Run runs the daemon until a stop signal or ctx ends. It returns nil after a
// graceful stop.
func (d *Daemon) Run(ctx context.Context) error {
	d.started = time.Now()
	cfg := d.Config()
	d.sayNotes(d.opts.Initial.Notes)
	d.log.Info("starting", "config", describeFile(d.opts.Initial), "database", redact.DSN(cfg.Maintenance.Database.URL),
		"shadow_mode", cfg.Memory.PipelineV2.ShadowMode, "mutations_frozen", cfg.Memory.PipelineV2.MutationsFrozen)
	// For an operator about to edit the file: what a reload will not apply.
	d.log.Debug("keys only a restart applies", "keys", strings.Join(config.RestartKeys(), ", "))
	deps, err := d.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer d.db.Close()
	defer func() {
		if d.consoleDB != nil {
			_ = d.consoleDB.Close()
		}
	}()

	// Jobs run under jobsCtx: it outlives the stop signal by the grace period.
	jobsCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	d.assemble(jobsCtx, deps)
	// Watch before serving: an edit made as soon as /readyz answers must be
	// seen.
	if d.opts.Source.Path != "" {
		if err := config.Watch(jobsCtx, d.opts.Source.Path, 300*time.Millisecond, d.requestReload); err != nil {
			d.log.Warn("not watching the configuration file for changes; reload with SIGHUP", "err", err)
		}
	}
	srv, err := d.startHTTP(cfg)
	if err != nil {
		return err
	}
	schedule, err := d.sched.prepare(cfg)
	if err != nil {
		return err
	}
	d.sched.commit(schedule)
	d.svcs.apply(cfg)
	go d.healthLoop(jobsCtx)
	if err := d.notify.Notify(sdnotify.Ready, "STATUS=running"); err != nil {
		d.log.Warn("sd_notify READY failed", "err", err)
	}
	d.log.Info("ready", "http", srv.addr, "jobs", d.sched.describe(), "inline_hook", cfg.InlineHookEnabled())
	return d.loop(ctx, srv, cancelJobs)
}

// loop is the main loop: one channel of signals and reload requests.
func (d *Daemon) loop(ctx context.Context, srv *httpServer, cancelJobs context.CancelFunc) error {
	for {
		select {
		case <-ctx.Done():
			return d.shutdown(srv, cancelJobs)
		case <-d.reloads:
			d.reload("file changed")
		case sig := <-d.opts.Signals:
			if sig == syscall.SIGHUP {
				d.reload("SIGHUP")
				continue
			}
			d.log.Info("stop signal received", "signal", sig.String())
			return d.shutdown(srv, cancelJobs)
		}
	}
}

// open connects, checks that every job that is on can run against the
// database, and returns what jobs are built from.
func (d *Daemon) open(ctx context.Context, cfg *config.Config) (jobs.Deps, error) {
	db, err := d.connect(ctx, cfg)
	if err != nil {
		return jobs.Deps{}, err
	}
	layout, err := schema.Inspect(ctx, db, SettingsOf(cfg).Plan)
	if err == nil {
		err = layout.Require(schema.Jobs...)
	}
	if err != nil {
		_ = db.Close()
		return jobs.Deps{}, err
	}
	for _, j := range schema.Jobs {
		if r := layout.Reports[j]; r.On && len(r.Refusals) > 0 {
			d.log.Warn("the database will refuse some rows of this job; they are skipped with their reason", "job", string(j), "why", r.Refusals)
		}
	}
	d.db, d.layout = db, layout
	d.dbUp.Store(true)
	d.metrics = metrics.New(db.DB)
	d.metrics.DatabaseUp.Set(1)
	d.guard = store.NewGuard(db, store.GuardOptions{Min: d.opts.MinFreeConnections, Pool: SettingsOf(cfg).Pool,
		Logger: d.log, Registry: d.metrics.Registry})
	d.leases = lease.New(db, layout.Names, ident.Holder(), d.opts.LeaseTTL)
	return jobs.Deps{DB: db, Names: layout.Names, Registry: d.metrics.Registry, Logger: d.log,
		LLM: llm.NewProvider(func(k string) string { return config.Getenv(d.opts.Environ, k) }, nil), Brake: func() bool { return d.settings().Brake }, Guard: d.guard}, nil
}

// assemble makes the jobs and services (the standard ones, or the options').
func (d *Daemon) assemble(ctx context.Context, deps jobs.Deps) {
	d.std = NewStandard(deps, StandardOptions{Policy: func() supersession.Policy { return EnginePolicy(d.Config()) }})
	jobs, svcs := d.opts.Jobs, d.std.services(d.settingsOf)
	if jobs == nil {
		jobs = d.std.jobs(d.settingsOf)
	}
	if d.opts.Services != nil {
		svcs = d.opts.Services(deps)
	}
	d.sched = newScheduler(ctx, d, jobs)
	d.svcs = newServices(ctx, d, svcs)
}

// connect waits for the database up to StartupTimeout: after a host reboot
// PostgreSQL may come up a little after us, and crash-looping is no help.
func (d *Daemon) connect(ctx context.Context, cfg *config.Config) (*sqlx.DB, error) {
	deadline := time.Now().Add(d.opts.StartupTimeout)
	delay := 250 * time.Millisecond
	for {
		dc := cfg.Maintenance.Database
		db, err := store.Open(ctx, dc.URL, SettingsOf(cfg).Pool, 5*time.Second)
		if err == nil {
			return db, nil
		}
		// A server that answered and refused (SSL, authentication) will
		// refuse again: say why now, not after the startup timeout.
		var ue *store.UnavailableError
		if (errors.As(err, &ue) && ue.Refused) || time.Now().Add(delay).After(deadline) {
			return nil, err
		}
		d.log.Warn("database not reachable yet; retrying", "err", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func (d *Daemon) shutdown(srv *httpServer, cancelJobs context.CancelFunc) error {
	_ = d.notify.Notify(sdnotify.Stopping, "STATUS=stopping")
	d.log.Info("stopping: no new runs; waiting for running jobs", "grace", d.opts.ShutdownTimeout.String())
	jobsDone := d.sched.stop()
	svcsDone := d.svcs.stop()
	forced := false
	timer := time.NewTimer(d.opts.ShutdownTimeout)
	defer timer.Stop()
wait:
	for jobsDone != nil || svcsDone != nil {
		select {
		case <-jobsDone:
			jobsDone = nil
		case <-svcsDone:
			svcsDone = nil
		case <-timer.C:
			d.log.Warn("grace period over: cancelling running jobs")
			cancelJobs()
			timer.Reset(5 * time.Second)
		case sig := <-d.opts.Signals:
			if sig == syscall.SIGHUP {
				continue
			}
			d.log.Warn("second stop signal: exiting now", "signal", sig.String())
			forced = true
			cancelJobs()
			break wait
		}
	}
	cancelJobs()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if forced {
		return ErrForcedExit
	}
	d.log.Info("stopped")
	return nil
}

// healthLoop keeps database_up current and pings systemd's watchdog, but
// only while the database answers: a daemon that cannot reach its database
// is not doing its job, and systemd should know. A server that refuses a
// connection because it is full (53300) answers: a restart would not help
// it, and the daemon waits for room as it is. The ping never waits for the
// guard, but it asks in turn with it, on the connection the guard keeps.
func (d *Daemon) healthLoop(ctx context.Context) {
	interval := 5 * time.Second
	wd := sdnotify.WatchdogInterval(config.Getenv(d.opts.Environ, "WATCHDOG_USEC"), config.Getenv(d.opts.Environ, "WATCHDOG_PID"), os.Getpid())
	if wd > 0 && wd < interval {
		interval = wd
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, max(interval/2, time.Second))
		pingErr := d.guard.Ping(pctx)
		cancel()
		// readiness also asks for a reload when the file changed unseen.
		d.readiness(pingErr)
		if (pingErr == nil || store.IsTooManyConnections(pingErr)) && wd > 0 {
			_ = d.notify.Notify(sdnotify.Watchdog)
		}
	}
}

// fileState is how the configuration file on disk relates to the one in
// force.
type fileState int

const (
	fileRunning fileState = iota // the file holds what runs (or there is no file to follow)
	fileChanged                  // the file changed and no reload has read it yet
	fileRefused                  // the file changed and a reload refused it
)

// configOnDisk compares the file with the configuration in force. A file
// watch can miss a change (a link chain it could not follow, a network file
// system); the health loop's comparison catches it, and /readyz reports it.
func (d *Daemon) configOnDisk() fileState {
	if d.opts.Source.Path == "" {
		return fileRunning
	}
	now, err := config.FileDigest(d.opts.Source.Path)
	if err != nil {
		now = "" // gone or unreadable: a reload says why
	}
	switch now {
	case *d.running.Load():
		return fileRunning
	case *d.tried.Load():
		return fileRefused
	}
	return fileChanged
}

// requestReload asks the main loop for a reload, without waiting.
func (d *Daemon) requestReload() {
	select {
	case d.reloads <- struct{}{}:
	default:
	}
}

// observeDB records a database health check (from the health loop or
// /readyz): the gauge, and a log line on every change.
func (d *Daemon) observeDB(err error) bool {
	up := err == nil
	if up != d.dbUp.Swap(up) {
		if up {
			d.log.Info("database reachable again")
		} else {
			d.log.Error("database unreachable", "err", err)
		}
	}
	if up {
		d.metrics.DatabaseUp.Set(1)
	} else {
		d.metrics.DatabaseUp.Set(0)
	}
	return up
}

func describeFile(l *config.Loaded) string {
	if l.File == "" {
		return "built-in defaults"
	}
	return l.File
}

type httpServer struct {
	*http.Server
	addr string
}

func (d *Daemon) startHTTP(cfg *config.Config) (*httpServer, error) {
	ln, err := net.Listen("tcp", cfg.Maintenance.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("http: listen on %s (maintenance.http.listen): %w", cfg.Maintenance.HTTP.Listen, err)
	}
	addr := ln.Addr().String()
	srv := &httpServer{
		Server: &http.Server{Handler: d.routes(addr), ReadHeaderTimeout: 5 * time.Second},
		addr:   addr,
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("http server stopped", "err", err)
		}
	}()
	if d.opts.ListenerReady != nil {
		d.opts.ListenerReady(srv.addr)
	}
	return srv, nil
}
