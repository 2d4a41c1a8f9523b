package main

import (
	"context"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/compaction"
)

// CompactCommand is `supersessiond compact --once [--json]`: one
// compaction-retry pass now. It is safe beside a running daemon: claims skip
// events another worker holds.
type CompactCommand struct{ m *Main }

func (c *CompactCommand) Run(ctx context.Context, args []string) error {
	return c.m.runOnce(ctx, onceSpec{
		name:  "compact",
		job:   schema.Compaction,
		usage: "--once [--json]",
		build: func(deps jobs.Deps, _ *config.Config) (daemon.Job, error) {
			return compaction.New(deps, compaction.Options{}), nil
		},
	}, args)
}
