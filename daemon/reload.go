package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/sdnotify"
)

// reload builds, validates and prepares a complete new configuration, its
// schedule included, and only then swaps it in (Caddy's model): nothing is
// changed until nothing can fail any more, so a failure leaves the running
// configuration untouched, with no rollback to get wrong. The failure is
// visible in the log, config_reloads_total{result="error"},
// config_last_reload_successful and the /readyz body.
func (d *Daemon) reload(reason string) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	_ = d.notify.Notify(sdnotify.ReloadingNow()...)
	defer func() { _ = d.notify.Notify(sdnotify.Ready, "STATUS=running") }()

	old := d.Config()
	loaded, next, schedule, restart, err := d.build(old)
	if err != nil {
		digest := ""
		if loaded != nil {
			digest = loaded.Digest
		} else if d.opts.Source.Path != "" {
			digest, _ = config.FileDigest(d.opts.Source.Path)
		}
		d.tried.Store(&digest)
		msg := time.Now().UTC().Format(time.RFC3339) + ": " + err.Error()
		d.reloadErr.Store(&msg)
		d.metrics.ConfigReloads.WithLabelValues("error").Inc()
		d.metrics.ConfigLastReloadOK.Set(0)
		d.log.Error("configuration reload failed; still running the previous configuration", "reason", reason, "err", err)
		return
	}

	// Swap: from here on nothing can fail.
	d.setConfig(next)
	d.sched.commit(schedule)
	d.svcs.apply(next)
	d.level.Set(parseLevel(next.Maintenance.Log.Level))
	d.running.Store(&loaded.Digest)
	d.tried.Store(&loaded.Digest)
	empty := ""
	d.reloadErr.Store(&empty)
	d.metrics.ConfigReloads.WithLabelValues("ok").Inc()
	d.metrics.ConfigLastReloadOK.Set(1)
	d.restart.Store(&restart)
	d.logChanges(reason, next, loaded, restart)
}

// build loads the configuration and prepares everything it needs, changing
// nothing: the jobs it turns on must be able to run against the database,
// and its schedule must install. Settings bound at startup (the keys
// declared reload:"restart": connections, listener and console, log
// encoder, the tables' names) keep their running values, so the Config in
// force always describes what is running; restart lists those the file
// changed.
func (d *Daemon) build(old *config.Config) (loaded *config.Loaded, next *config.Config, schedule *plan, restart []string, err error) {
	loaded, err = config.Load(d.opts.Source)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := d.canRun(old, loaded.Config); err != nil {
		return loaded, nil, nil, nil, fmt.Errorf("a job it turns on cannot run against this database: %w", err)
	}
	next, restart = config.Reload(old, loaded.Config)
	schedule, err = d.sched.prepare(next)
	if err != nil {
		return loaded, nil, nil, nil, err
	}
	return loaded, next, schedule, restart, nil
}

// logChanges says, once, what the reload brought: notes, settings that
// need a restart, the modes now in force.
func (d *Daemon) logChanges(reason string, next *config.Config, loaded *config.Loaded, restart []string) {
	d.sayNotes(loaded.Notes)
	for _, k := range restart {
		d.log.Warn("changed setting needs a restart to take effect", "key", k)
	}
	d.log.Info("configuration reloaded", "reason", reason,
		"shadow_mode", next.Memory.PipelineV2.ShadowMode, "mutations_frozen", next.Memory.PipelineV2.MutationsFrozen)
}

// sayNotes logs the configuration's notes that were not in force at the
// last load: a note is said at startup, and again only once it changed.
func (d *Daemon) sayNotes(notes []string) {
	now := make(map[string]bool, len(notes))
	for _, n := range notes {
		if !d.said[n] {
			d.log.Info(n)
		}
		now[n] = true
	}
	d.said = now
}

// canRun checks, before anything is swapped, that every job the new
// configuration turns on can run against the database.
func (d *Daemon) canRun(old, next *config.Config) error {
	was, will := SettingsOf(old).Plan, SettingsOf(next).Plan
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
