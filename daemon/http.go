package daemon

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	return mux
}

// readyz is ready when the database answers, the configuration on disk is
// the one running (the last reload did not fail) and every running service
// (the inline hook's listener) is connected. The body says what is wrong.
func (d *Daemon) readyz(w http.ResponseWriter, r *http.Request) {
	var problems []string
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := d.db.PingContext(ctx); !d.observeDB(err) {
		problems = append(problems, "database: unreachable: "+err.Error())
	}
	if msg := *d.reloadErr.Load(); msg != "" {
		problems = append(problems, "config: last reload failed, previous configuration still running: "+msg)
	} else if d.configOnDisk() == fileChanged {
		problems = append(problems, "config: "+d.opts.Source.Path+" changed on disk and is not in force yet (reload pending)")
		d.requestReload()
	}
	if err := d.svcs.ready(); err != nil {
		problems = append(problems, err.Error())
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(problems) > 0 {
		d.metrics.Ready.Set(0)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready")
		fmt.Fprintln(w, strings.Join(problems, "\n"))
		return
	}
	d.metrics.Ready.Set(1)
	cfg := d.Config()
	fmt.Fprintln(w, "ready")
	fmt.Fprintf(w, "shadow_mode=%t mutations_frozen=%t jobs=%s uptime=%s\n",
		cfg.Memory.PipelineV2.ShadowMode, cfg.Memory.PipelineV2.MutationsFrozen, d.sched.describe(),
		time.Since(d.started).Round(time.Second))
}
