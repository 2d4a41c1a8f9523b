package main

import (
	"context"
	"flag"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/sweep"
)

// SweepCommand is `sweep --once [--agent ID] [--json]`: one full supersession
// sweep now, of all agents or one.
type SweepCommand struct{ m *Main }

func (c *SweepCommand) Run(ctx context.Context, args []string) error {
	var agent *string
	return c.m.runOnce(ctx, onceSpec{
		name:  "sweep",
		job:   schema.Supersession,
		usage: "--once [--agent ID] [--json]",
		flags: func(fs *flag.FlagSet) { agent = fs.String("agent", "", "sweep only this agent's attributes") },
		build: func(deps job.Deps, cfg *config.Config) (daemon.Job, error) {
			return onceJob{sweep.New(deps, supersession.New(deps)), *agent}, nil
		},
	}, args)
}

// onceJob makes the scheduled job's Run a full pass for the CLI.
type onceJob struct {
	*sweep.Job
	agent string
}

func (o onceJob) Run(ctx context.Context, cfg *config.Config) (job.Report, error) {
	return o.Once(ctx, cfg, o.agent)
}
