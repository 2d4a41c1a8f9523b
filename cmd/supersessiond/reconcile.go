package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// ReconcileCommand is `reconcile --once [--json] [--budget DUR]`: one
// tombstone-reconciliation pass now. In shadow mode or with mutations frozen
// it changes nothing and reports what a pass would do. `reconcile --restore
// [--run RUN_ID] [--dry-run] [--json] [DOC_ID...]` puts back documents a pass
// hard-deleted, from the copies it kept.
type ReconcileCommand struct{ m *Main }

func (c *ReconcileCommand) Run(ctx context.Context, args []string) error {
	var (
		budget       *time.Duration
		restore, dry *bool
		run          *string
	)
	return c.m.runOnce(ctx, onceSpec{
		name:  "reconcile",
		job:   schema.Tombstones,
		usage: "--once [--json] [--budget DUR] | --restore [--run RUN_ID] [--dry-run] [--json] [DOC_ID...]",
		flags: func(fs *flag.FlagSet) {
			budget = fs.Duration("budget", 0, "stop starting batches after this long (default: "+tombstones.MaxBudget.String()+
				" by hand; the daemon derives it from maintenance.schedules.tombstones)")
			restore = fs.Bool("restore", false, "put back hard-deleted documents (the ids given, or --run's) from the copies kept for maintenance.tombstones.keepDeleted")
			run = fs.String("run", "", "with --restore: every document the pass with this `run_id` deleted")
			dry = fs.Bool("dry-run", false, "with --restore: say what would be restored, change nothing")
		},
		options: func() (daemon.StandardOptions, error) {
			if *budget < 0 {
				return daemon.StandardOptions{}, usagef("reconcile: --budget %s must not be negative", *budget)
			}
			opts := tombstones.Options{Budget: *budget}
			if opts.Budget == 0 {
				// By hand the pass is not squeezed between ticks.
				opts.Budget = tombstones.MaxBudget
			}
			return daemon.StandardOptions{Tombstones: opts}, nil
		},
		pass: func(ctx context.Context, std *daemon.Standard, s daemon.Settings) (jobs.Report, error) {
			return std.Tombstones.Reconcile(ctx, s.Tombstones)
		},
		other: func(ctx context.Context, cfgPath string, ids []string, once, asJSON bool) (bool, error) {
			if !*restore {
				if *run != "" || *dry {
					return true, usagef("reconcile: --run and --dry-run go with --restore")
				}
				return false, nil
			}
			if once {
				return true, usagef("reconcile: --restore and --once are separate runs")
			}
			if len(ids) == 0 && *run == "" {
				return true, usagef("reconcile --restore: name the documents (DOC_ID...) or a pass (--run RUN_ID); " +
					"`reconcile --once --json` lists a pass's deleted_ids and its run_id")
			}
			return true, c.restore(ctx, cfgPath, tombstones.RestoreRequest{IDs: ids, RunID: *run, DryRun: *dry}, asJSON)
		},
	}, args)
}

// restore runs `reconcile --restore`.
func (c *ReconcileCommand) restore(ctx context.Context, cfgPath string, req tombstones.RestoreRequest, asJSON bool) error {
	env, err := c.m.open(ctx, cfgPath, schema.Tombstones)
	if err != nil {
		return err
	}
	defer env.db.Close()
	std := daemon.NewStandard(jobs.Deps{DB: env.db, Names: env.layout.Names, Logger: env.log}, daemon.StandardOptions{})
	r, err := std.Tombstones.Restore(ctx, env.settings.Tombstones, req)
	if r != nil {
		if perr := c.m.printReport(r, asJSON); perr != nil {
			return perr
		}
	}
	if err == nil && r.Refused > 0 {
		err = fmt.Errorf("restore %w: %d of %d documents not restorable", tombstones.ErrRefused, r.Refused, len(r.Documents))
	}
	return err
}
