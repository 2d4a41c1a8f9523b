package daemon

import "github.com/supersessiond/supersessiond/tombstones"

// standardJobs are the scheduled jobs `supersessiond run` runs.
func standardJobs(deps *Deps) []Job {
	return []Job{tombstones.New(deps.DB, deps.Logger, tombstones.NewMetrics(deps.Metrics.Registry), tombstones.Options{})}
}

// standardServices are the long-running services `supersessiond run` runs.
func standardServices(deps *Deps) []Service {
	return nil
}
