package daemon

import (
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/compaction"
	"github.com/supersessiond/supersessiond/jobs/inline"
	"github.com/supersessiond/supersessiond/jobs/sweep"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// standard holds the jobs and services `supersessiond run` runs. The sweep
// and the inline hook share one supersession engine (and its metrics).
type standard struct {
	engine *supersession.Engine
	hook   *inline.Hook
}

func newStandard(deps jobs.Deps) *standard {
	engine := NewEngine(deps, nil)
	return &standard{engine: engine, hook: inline.New(deps, engine)}
}

// jobs are the scheduled jobs.
func (s *standard) jobs(deps jobs.Deps) []Job {
	sw := sweep.New(deps, s.engine)
	sw.PruneOutbox = s.hook.Prune
	return []Job{sw, compaction.New(deps, compaction.Options{}), tombstones.New(deps, tombstones.Options{})}
}

// services are the long-running services.
func (s *standard) services(jobs.Deps) []Service {
	return []Service{s.hook}
}
