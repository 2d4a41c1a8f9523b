package main

import (
	"context"
	"flag"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// SweepCommand is `sweep --once [--full] [--agent ID] [--dry-run] [--json]`:
// one supersession sweep now: incremental when a full pass is not due, full
// with --full, of one agent's aspects with --agent; with --dry-run, a full
// pass that lists what it would supersede or propose and writes nothing.
type SweepCommand struct{ m *Main }

func (c *SweepCommand) Run(ctx context.Context, args []string) error {
	var opt sweep.Options
	return c.m.runOnce(ctx, onceSpec{
		name:  "sweep",
		job:   schema.Supersession,
		usage: "--once [--full] [--agent ID] [--dry-run] [--json]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&opt.Agent, "agent", "", "sweep only this agent's aspects (a full pass of them)")
			fs.BoolVar(&opt.Full, "full", false, "examine every aspect, not only those that changed since the last pass")
			fs.BoolVar(&opt.DryRun, "dry-run", false, "list each pair a full sweep would supersede or propose, and write nothing at all "+
				"(no supersession, proposal, cursor, change record or cached LLM verdict)")
		},
		build: func(deps jobs.Deps, cfg *config.Config) (daemon.Job, error) {
			return onceJob{sweep.New(deps, daemon.NewEngine(deps, cfg)), opt}, nil
		},
	}, args)
}

// onceJob makes the scheduled job's Run a pass of the CLI's.
type onceJob struct {
	*sweep.Job
	opt sweep.Options
}

func (o onceJob) Run(ctx context.Context, cfg *config.Config) (jobs.Report, error) {
	return o.Once(ctx, cfg, o.opt)
}
