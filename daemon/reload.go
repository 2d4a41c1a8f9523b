package daemon

import (
	"context"
	"fmt"
	"slices"
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
	loaded, next, schedule, err := d.build(old)
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
	d.cfg.Store(next)
	d.sched.commit(schedule)
	d.svcs.apply(next)
	d.level.Set(parseLevel(next.Maintenance.Log.Level))
	d.running.Store(&loaded.Digest)
	d.tried.Store(&loaded.Digest)
	empty := ""
	d.reloadErr.Store(&empty)
	d.metrics.ConfigReloads.WithLabelValues("ok").Inc()
	d.metrics.ConfigLastReloadOK.Set(1)
	d.logChanges(reason, old, next, loaded)
}

// build loads the configuration and prepares everything it needs, changing
// nothing: the jobs it turns on must be able to run against the database,
// and its schedule must install.
func (d *Daemon) build(old *config.Config) (*config.Loaded, *config.Config, *plan, error) {
	loaded, err := config.Load(d.opts.Source)
	if err != nil {
		return nil, nil, nil, err
	}
	next := loaded.Config
	if err := d.canRun(old, next); err != nil {
		return loaded, nil, nil, fmt.Errorf("a job it turns on cannot run against this database: %w", err)
	}
	// Settings bound at startup (connections, listener, log encoder, the
	// tables' names) stay as they are, so the Config in force always
	// describes what is running; logChanges says which ones were edited.
	bound := *next
	bound.Maintenance.Database = old.Maintenance.Database
	bound.Maintenance.Tables = old.Maintenance.Tables
	bound.Maintenance.HTTP = old.Maintenance.HTTP
	bound.Maintenance.Log.Format = old.Maintenance.Log.Format
	schedule, err := d.sched.prepare(&bound)
	if err != nil {
		return loaded, nil, nil, err
	}
	return loaded, &bound, schedule, nil
}

// logChanges says, once, what the reload brought: notes, settings that
// need a restart, the modes now in force.
func (d *Daemon) logChanges(reason string, old, next *config.Config, loaded *config.Loaded) {
	d.sayNotes(loaded.Notes)
	for _, k := range restartOnly(old, loaded.Config) {
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
	keys = append(keys, httpChanges(old.Maintenance.HTTP, next.Maintenance.HTTP)...)
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
	if old.Maintenance.Supersession.Store != next.Maintenance.Supersession.Store {
		keys = append(keys, "maintenance.supersession.store")
	}
	return keys
}

// httpChanges lists the changed keys of maintenance.http: the listener, the
// console and its credentials are all set up once, at startup.
func httpChanges(old, next config.HTTP) []string {
	var keys []string
	for _, k := range []struct {
		name    string
		changed bool
	}{
		{"listen", old.Listen != next.Listen},
		{"adminTokenEnv", old.AdminTokenEnv != next.AdminTokenEnv},
		{"tokens", !slices.Equal(old.Tokens, next.Tokens)},
		{"openReadsOnLoopback", old.OpenReadsOnLoopback != next.OpenReadsOnLoopback},
		{"trustedProxies", old.TrustedProxies != next.TrustedProxies},
		{"maxConcurrentRequests", old.MaxConcurrentRequests != next.MaxConcurrentRequests},
		{"maxOpenConns", old.MaxOpenConns != next.MaxOpenConns},
	} {
		if k.changed {
			keys = append(keys, "maintenance.http."+k.name)
		}
	}
	return keys
}
