package daemon

import "github.com/supersessiond/supersessiond/compaction"

// standardJobs are the scheduled jobs `supersessiond run` runs.
func standardJobs(deps *Deps) []Job {
	return []Job{
		compaction.New(compaction.Deps{DB: deps.DB, Logger: deps.Logger, Registry: deps.Metrics.Registry, LLM: deps.LLM}),
	}
}

// standardServices are the long-running services `supersessiond run` runs.
func standardServices(deps *Deps) []Service {
	return nil
}
