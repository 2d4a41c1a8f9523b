package main

import (
	"context"
	"time"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// StatsCommand prints what the reviews say about the judgment: per signal,
// method and confidence band, how many proposals were accepted, rejected,
// applied and undone, and the precision that implies; and each rule's
// standing for earned auto-apply (maintenance.enforcement).
type StatsCommand struct{ m *Main }

func (c *StatsCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("stats", "[--agent ID] [--since DUR|RFC3339] [--format table|json]")
	agent := fs.String("agent", "", "only this agent's proposals")
	since := fs.String("since", "", "only proposals newer than a duration ago (24h, 7d) or an RFC 3339 time")
	format := fs.String("format", "table", "table or json (one object)")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("stats: unexpected argument %q", positional[0])
	}
	if *format != "table" && *format != "json" {
		return usagef("stats: --format must be table or json, not %q", *format)
	}
	f := audit.StatsFilter{Agent: *agent}
	if *since != "" {
		if f.Since, err = audit.ParseSince(*since, time.Now()); err != nil {
			return usagef("stats: %v", err)
		}
	}
	env, err := c.m.open(ctx, *cfgPath, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	st, err := env.ops().Stats(ctx, f, env.settings.Audit.Enforcement)
	if err != nil {
		return err
	}
	if *format == "json" {
		return audit.WriteStatsJSON(c.m.Stdout, st)
	}
	return audit.WriteStatsTable(c.m.Stdout, st)
}
