package daemon

import (
	"context"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/sdnotify"
)

// reload builds and validates a complete new configuration and swaps it in
// atomically; if anything fails the previous configuration keeps running and
// the failure is visible in the log, config_reloads_total{result="error"},
// config_last_reload_successful and the /readyz body (Caddy's model).
func (d *Daemon) reload(reason string) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	_ = d.notify.Notify(sdnotify.ReloadingNow()...)
	defer func() { _ = d.notify.Notify(sdnotify.Ready, "STATUS=running") }()

	loaded, err := config.Load(d.opts.Source)
	if err != nil {
		if d.opts.Source.Path != "" {
			digest, _ := config.FileDigest(d.opts.Source.Path)
			d.tried.Store(&digest)
		}
		msg := time.Now().UTC().Format(time.RFC3339) + ": " + err.Error()
		d.reloadErr.Store(&msg)
		d.metrics.ConfigReloads.WithLabelValues("error").Inc()
		d.metrics.ConfigLastReloadOK.Set(0)
		d.log.Error("configuration reload failed; still running the previous configuration", "reason", reason, "err", err)
		return
	}
	old := d.Config()
	next := loaded.Config
	if err := d.canRun(old, next); err != nil {
		d.tried.Store(&loaded.Digest)
		msg := time.Now().UTC().Format(time.RFC3339) + ": " + err.Error()
		d.reloadErr.Store(&msg)
		d.metrics.ConfigReloads.WithLabelValues("error").Inc()
		d.metrics.ConfigLastReloadOK.Set(0)
		d.log.Error("configuration reload refused: a job it turns on cannot run against this database; still running the previous configuration",
			"reason", reason, "err", err)
		return
	}
	changedRestartOnly := restartOnly(old, next)
	// Settings bound at startup (connections, listener, log encoder) stay
	// as they are, so the Config in force always describes what is running.
	next.Maintenance.Database = old.Maintenance.Database
	next.Maintenance.Tables = old.Maintenance.Tables
	next.Maintenance.HTTP = old.Maintenance.HTTP
	next.Maintenance.Log.Format = old.Maintenance.Log.Format
	// Validate the parts that need more than parsing before anything is
	// swapped: a schedule must be installable.
	d.cfg.Store(next)
	if err := d.sched.apply(next); err != nil {
		d.tried.Store(&loaded.Digest)
		d.cfg.Store(old)
		_ = d.sched.apply(old)
		msg := time.Now().UTC().Format(time.RFC3339) + ": " + err.Error()
		d.reloadErr.Store(&msg)
		d.metrics.ConfigReloads.WithLabelValues("error").Inc()
		d.metrics.ConfigLastReloadOK.Set(0)
		d.log.Error("configuration reload failed; still running the previous configuration", "reason", reason, "err", err)
		return
	}
	d.running.Store(&loaded.Digest)
	d.tried.Store(&loaded.Digest)
	d.svcs.apply(next)
	d.level.Set(parseLevel(next.Maintenance.Log.Level))
	empty := ""
	d.reloadErr.Store(&empty)
	d.metrics.ConfigReloads.WithLabelValues("ok").Inc()
	d.metrics.ConfigLastReloadOK.Set(1)
	for _, n := range loaded.Notes {
		d.log.Info(n)
	}
	for _, k := range changedRestartOnly {
		d.log.Warn("changed setting needs a restart to take effect", "key", k)
	}
	d.log.Info("configuration reloaded", "reason", reason,
		"shadow_mode", next.Memory.PipelineV2.ShadowMode, "mutations_frozen", next.Memory.PipelineV2.MutationsFrozen)
}

// canRun checks, before anything is swapped, that every job the new
// configuration turns on can run against the database.
func (d *Daemon) canRun(old, next *config.Config) error {
	was, will := schema.PlanFor(old), schema.PlanFor(next)
	var turnedOn []schema.Job
	for _, job := range schema.Jobs {
		if will.On[job] && !was.On[job] {
			turnedOn = append(turnedOn, job)
		}
	}
	if len(turnedOn) == 0 || d.db == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	layout, err := schema.Inspect(ctx, d.db, will)
	if err != nil {
		return err
	}
	return layout.Require(turnedOn...)
}

// restartOnly lists changed settings that a running daemon cannot apply.
func restartOnly(old, next *config.Config) []string {
	var keys []string
	if old.Maintenance.Database.URL != next.Maintenance.Database.URL {
		keys = append(keys, "maintenance.database.url")
	}
	if old.Maintenance.Database.ListenURL != next.Maintenance.Database.ListenURL {
		keys = append(keys, "maintenance.database.listenUrl")
	}
	if old.Maintenance.HTTP.Listen != next.Maintenance.HTTP.Listen {
		keys = append(keys, "maintenance.http.listen")
	}
	if old.Maintenance.Log.Format != next.Maintenance.Log.Format {
		keys = append(keys, "maintenance.log.format")
	}
	if old.Maintenance.Database.Schema != next.Maintenance.Database.Schema {
		keys = append(keys, "maintenance.database.schema")
	}
	if old.Maintenance.Database.OwnSchema != next.Maintenance.Database.OwnSchema {
		keys = append(keys, "maintenance.database.ownSchema")
	}
	if old.Maintenance.Tables != next.Maintenance.Tables {
		keys = append(keys, "maintenance.tables")
	}
	return keys
}
