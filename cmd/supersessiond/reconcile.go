package main

import (
	"context"
	"flag"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/tombstones"
)

// ReconcileCommand is `reconcile --once [--json] [--budget DUR]`: one
// tombstone-reconciliation pass now. In shadow mode or with mutations frozen
// it changes nothing and reports what a pass would do.
type ReconcileCommand struct{ m *Main }

func (c *ReconcileCommand) Run(ctx context.Context, args []string) error {
	var budget *time.Duration
	return c.m.runOnce(ctx, onceSpec{
		name:  "reconcile",
		job:   schema.Tombstones,
		usage: "--once [--json] [--budget DUR]",
		flags: func(fs *flag.FlagSet) {
			budget = fs.Duration("budget", 0, "stop starting batches after this long (default: "+tombstones.MaxBudget.String()+
				" by hand; the daemon derives it from maintenance.schedules.tombstones)")
		},
		build: func(deps job.Deps, _ *config.Config) (daemon.Job, error) {
			if *budget < 0 {
				return nil, usagef("reconcile: --budget %s must not be negative", *budget)
			}
			opts := tombstones.Options{Budget: *budget}
			if opts.Budget == 0 {
				// By hand the pass is not squeezed between ticks.
				opts.Budget = tombstones.MaxBudget
			}
			return tombstones.New(deps, opts), nil
		},
	}, args)
}
