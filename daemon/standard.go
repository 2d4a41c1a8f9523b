package daemon

// standardJobs are the scheduled jobs `supersessiond run` runs.
func standardJobs(deps *Deps) []Job {
	return nil
}

// standardServices are the long-running services `supersessiond run` runs.
func standardServices(deps *Deps) []Service {
	return nil
}
