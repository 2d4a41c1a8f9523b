package daemon

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

func (d *Daemon) routes() http.Handler {
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
	if ui := d.console(); ui != nil {
		mux.Handle("/ui/", ui)
		mux.Handle("/api/", ui)
		mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	}
	return mux
}

// console is the review console and its API (SPEC §10), on the operator
// commands' own code. The admin token is read from the environment each
// time it is needed, under the variable the configuration in force names.
// It needs the supersession job's tables: without them (the job off at
// startup, as beside Honcho) it is not served.
func (d *Daemon) console() http.Handler {
	if r := d.layout.Reports[schema.Supersession]; r == nil || !r.On || !r.Runnable() {
		return nil
	}
	engine := supersession.New(job.Deps{DB: d.db, Names: d.layout.Names, Logger: d.log})
	ui, err := console.New(console.Options{
		Ops:    audit.New(d.db, d.layout.Names, engine),
		Config: d.Config,
		Token: func() string {
			return config.Getenv(d.opts.Environ, d.Config().Maintenance.HTTP.AdminTokenEnv)
		},
		Logger: d.log,
	})
	if err != nil {
		d.log.Error("review console unavailable", "err", err)
		return nil
	}
	return ui
}

// readyz is ready when the database answers, the configuration on disk is
// the one running (the last reload did not fail) and every running service
// (the inline hook's listener) is connected. The body says what is wrong.
func (d *Daemon) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	problems := d.readiness(d.db.PingContext(ctx))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready")
		fmt.Fprintln(w, strings.Join(problems, "\n"))
		return
	}
	cfg := d.Config()
	fmt.Fprintln(w, "ready")
	fmt.Fprintf(w, "shadow_mode=%t mutations_frozen=%t jobs=%s uptime=%s\n",
		cfg.Memory.PipelineV2.ShadowMode, cfg.Memory.PipelineV2.MutationsFrozen, d.sched.describe(),
		time.Since(d.started).Round(time.Second))
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
