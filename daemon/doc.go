// Package daemon is `supersessiond run`: the scheduler, the long-running
// services (the inline post-classify hook), HTTP health and metrics,
// configuration reload, systemd integration and graceful shutdown.
//
// The shape follows Miniflux and Caddy:
//
//   - One signal channel drives the main loop: SIGHUP reloads, SIGTERM and
//     SIGINT stop. On stop, scheduling ends at once, running jobs get a grace
//     period, then their context is cancelled; a second stop signal exits
//     without waiting.
//   - A reload is transactional: the new configuration is loaded, the jobs
//     it turns on are checked against the database, and its schedule is
//     built, all before anything is swapped; then the configuration pointer,
//     the schedule and the services change, and nothing can fail any more.
//     On any failure the old configuration keeps running and the failure
//     shows in the log, a metric and /readyz. Keys bound at startup (those
//     config declares reload:"restart") keep their running values, and the
//     log and /readyz name each one the file changed. Jobs decide under the
//     configuration of their run, services of their batch, so a reload never
//     changes the rules halfway through a decision; only the brake
//     (shadowMode, mutationsFrozen) is observed before every write batch.
//   - systemd: READY=1 once serving, RELOADING=1/READY=1 around reloads,
//     STOPPING=1 on the way out, and watchdog pings only while the database
//     answers, so a daemon that lost its database is restarted rather than
//     reported healthy.
//
// Scheduled jobs run under robfig/cron, each guarded against overlapping
// itself by a per-job flag that survives a reschedule; each run first asks
// the connection guard (store.Guard: on a crowded server the tick is left
// to the agent) and takes the job's lease for its tick (package lease), so
// with several daemons on one database each job runs once per tick. The
// jobs and the inline hook ask the same guard before each batch.
//
// The daemon is where agent.yaml meets the code that acts on it: SettingsOf
// makes each layer's own settings of a loaded configuration (the engine's
// thresholds and mode, each job's schedule and limits, the console's and the
// operators' commands'), once per load, and nothing below the daemon imports
// config. Standard is the composition root: `run` and the one-shot commands
// build the engine, the jobs and the operators' commands through it.
package daemon
