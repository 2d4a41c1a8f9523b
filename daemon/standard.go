package daemon

import (
	"github.com/supersessiond/supersessiond/internal/compaction"
	"github.com/supersessiond/supersessiond/internal/inline"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/tombstones"
	"github.com/supersessiond/supersessiond/sweep"
)

// standard holds the jobs and services `supersessiond run` runs. The sweep
// and the inline hook share one supersession engine (and its metrics).
type standard struct {
	engine *supersession.Engine
	hook   *inline.Hook
}

func newStandard(deps job.Deps) *standard {
	engine := supersession.New(deps)
	return &standard{engine: engine, hook: inline.New(deps, engine)}
}

// jobs are the scheduled jobs.
func (s *standard) jobs(deps job.Deps) []Job {
	sw := sweep.New(deps, s.engine)
	sw.PruneOutbox = s.hook.Prune
	return []Job{sw, compaction.New(deps, compaction.Options{}), tombstones.New(deps, tombstones.Options{})}
}

// services are the long-running services.
func (s *standard) services(job.Deps) []Service {
	return []Service{s.hook}
}
