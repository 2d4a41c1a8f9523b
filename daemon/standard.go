package daemon

import (
	"github.com/supersessiond/supersessiond/internal/compaction"
	"github.com/supersessiond/supersessiond/internal/inline"
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

func newStandard(deps *Deps) *standard {
	m := supersession.NewMetrics(deps.Metrics.Registry)
	s := &standard{engine: supersession.New(deps.DB, deps.Names, deps.Logger, m, deps.LLM)}
	s.hook = inline.New(deps.DB, deps.Names, deps.Logger, s.engine, inline.NewMetrics(deps.Metrics.Registry))
	return s
}

// jobs are the scheduled jobs.
func (s *standard) jobs(deps *Deps) []Job {
	sw := sweep.New(deps.DB, deps.Names, deps.Logger, s.engine)
	sw.Current = deps.Config
	sw.PruneOutbox = s.hook.Prune
	return []Job{
		sw,
		compaction.New(compaction.Deps{DB: deps.DB, Names: deps.Names, Logger: deps.Logger, Registry: deps.Metrics.Registry, LLM: deps.LLM, Current: deps.Config}),
		tombstones.New(deps.DB, deps.Logger, tombstones.NewMetrics(deps.Metrics.Registry), tombstones.Options{Names: deps.Names, Current: deps.Config}),
	}
}

// services are the long-running services.
func (s *standard) services(*Deps) []Service {
	return []Service{s.hook}
}
