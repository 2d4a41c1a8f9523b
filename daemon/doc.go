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
//   - A reload is transactional: the new configuration is built and
//     validated completely (including its schedules) before it is swapped in
//     with one atomic pointer store; on any failure the old one keeps running
//     and the failure shows in the log, a metric and /readyz. Jobs read the
//     configuration once per run, services once per batch, so a reload never
//     changes the rules halfway through a decision.
//   - systemd: READY=1 once serving, RELOADING=1/READY=1 around reloads,
//     STOPPING=1 on the way out, and watchdog pings only while the database
//     answers, so a daemon that lost its database is restarted rather than
//     reported healthy.
//
// Scheduled jobs run under robfig/cron with an explicit chain (Recover,
// SkipIfStillRunning), plus a per-job guard that survives a reschedule, and
// each run first takes the job's lease for its tick (package lease), so with
// several daemons on one database each job runs once per tick.
package daemon
