package main

import (
	"context"
	"flag"

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
		pass: func(ctx context.Context, std *daemon.Standard, s daemon.Settings) (jobs.Report, error) {
			return std.Sweep.Once(ctx, s.Sweep, opt)
		},
	}, args)
}
