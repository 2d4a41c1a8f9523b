package main

import (
	"context"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs"
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
		pass: func(ctx context.Context, std *daemon.Standard, s daemon.Settings) (jobs.Report, error) {
			return std.Compaction.Pass(ctx, s.Compaction)
		},
	}, args)
}
