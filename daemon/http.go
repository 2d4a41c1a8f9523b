package daemon

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/jobs/compaction"
)

// routes are the listener's: /healthz, /readyz and /metrics, always open
// and never waiting behind the console; the console and its API on their
// own connection pool and concurrency limit. addr is the bound address.
func (d *Daemon) routes(addr string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", d.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.metrics.Registry, promhttp.HandlerOpts{
		Registry:          d.metrics.Registry,
		EnableOpenMetrics: true,
	}))
	ui := d.console(addr)
	mux.Handle("/ui/", ui)
	mux.Handle("/api/", ui)
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	return mux
}

// console is the review console and its API (SPEC §10), on the operator
// commands' own code. It needs the supersession job's tables: without them
// (the job off at startup, as beside Honcho) it answers with a page saying
// so and which setting turns it on, unless the compaction job watches (as
// beside clawbolt), whose page it then serves alone. Its reads and decisions run on a pool
// of their own (maintenance.http.maxOpenConns), so that however many
// requests come, the jobs, the watchdog's ping and /readyz never wait for
// a connection behind them. The tokens are read from the environment each
// time they are needed, under the variables the configuration names.
func (d *Daemon) console(addr string) http.Handler {
	r := d.layout.Reports[schema.Supersession]
	review := r != nil && r.On && r.Runnable()
	w := d.layout.Reports[schema.Compaction]
	watch := w != nil && w.On && w.Runnable() && d.layout.Names.CompactionWatch
	if !review && !watch {
		return console.Off("it needs the supersession job, which this configuration turns off " +
			"(memory.pipelineV2.structural.supersessionEnabled: false, as examples/honcho/agent.yaml has it beside Honcho, " +
			"which needs only the tombstones job). Set memory.pipelineV2.structural.supersessionEnabled: true " +
			"(its tables must exist: supersessiond check says) and restart the daemon to review proposals here.")
	}
	cfg := d.Config()
	// Lazily: the pool takes no slot of the server until someone reads.
	db, err := store.OpenLazy(cfg.Maintenance.Database.URL, d.settingsOf(cfg).ConsolePool)
	if err != nil {
		d.log.Error("review console unavailable: its connection pool did not open", "err", err)
		return console.Off("its connection pool could not be set up (see the daemon's log).")
	}
	d.consoleDB = db
	d.metrics.Registry.MustRegister(collectors.NewDBStatsCollector(db.DB, "console"))
	var ops *audit.Ops
	if review {
		ops = d.std.Ops(db)
	}
	var watchlist func(ctx context.Context) (*compaction.Watch, error)
	if watch {
		watchlist = func(ctx context.Context) (*compaction.Watch, error) {
			c := d.settings().Compaction
			return compaction.Watchlist(ctx, db, d.layout.Names, c.StaleAfter, c.Lookback, c.StackMaxAttempts, time.Now())
		}
	}
	ui, err := console.New(console.Options{
		Ops:        ops,
		Compaction: watchlist,
		Settings:   func() console.Settings { return d.settings().Console },
		Credentials: func() []console.Credential {
			return console.CredentialsOf(d.settings().Console, func(k string) string { return config.Getenv(d.opts.Environ, k) })
		},
		Listen:   addr,
		Logger:   d.log,
		Registry: d.metrics.Registry,
		// The console's pool is the guard's extra: what it may still open.
		Room: func(ctx context.Context) bool {
			_, ok := d.guard.Room(ctx, max(d.Config().Maintenance.HTTP.MaxOpenConns-db.Stats().OpenConnections, 0))
			return ok
		},
	})
	if err != nil {
		d.log.Error("review console unavailable", "err", err)
		return console.Off("it failed to start (see the daemon's log).")
	}
	return ui
}

// readyz is ready when the database answers, the configuration on disk is
// the one running (the last reload did not fail) and every running service
// (the inline hook's listener) is connected. The body says what is wrong,
// and, ready or not, which edited settings wait for a restart: the daemon
// runs well without them, but the file does not say what runs.
func (d *Daemon) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	problems := d.readiness(d.db.PingContext(ctx))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready")
		fmt.Fprintln(w, strings.Join(problems, "\n"))
	} else {
		cfg := d.Config()
		fmt.Fprintln(w, "ready")
		fmt.Fprintf(w, "shadow_mode=%t mutations_frozen=%t jobs=%s uptime=%s\n",
			cfg.Memory.PipelineV2.ShadowMode, cfg.Memory.PipelineV2.MutationsFrozen, d.sched.describe(),
			time.Since(d.started).Round(time.Second))
	}
	if restart := *d.restart.Load(); len(restart) > 0 {
		fmt.Fprintf(w, "restart needed: %s changed in the configuration file; a reload cannot apply it, a restart will\n",
			strings.Join(restart, ", "))
	}
}

// readiness lists what keeps the daemon from being ready, given the result
// of a database ping, and sets the ready gauge. /readyz asks on every probe
// and the health loop every few seconds, so the gauge is true without one.
func (d *Daemon) readiness(pingErr error) []string {
	var problems []string
	if !d.observeDB(pingErr) {
		problems = append(problems, "database: unreachable: "+pingErr.Error())
	}
	onDisk := d.configOnDisk()
	if onDisk == fileChanged {
		d.requestReload()
	}
	if msg := *d.reloadErr.Load(); msg != "" {
		problems = append(problems, "config: last reload failed, previous configuration still running: "+msg)
	} else if onDisk == fileChanged {
		problems = append(problems, "config: "+d.opts.Source.Path+" changed on disk and is not in force yet (reload pending)")
	}
	if err := d.svcs.ready(); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		d.metrics.Ready.Set(0)
	} else {
		d.metrics.Ready.Set(1)
	}
	return problems
}
