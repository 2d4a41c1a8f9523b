package main

import (
	"context"
	"fmt"

	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// MigrateCommand idempotently creates or updates the daemon's objects in an
// existing agent database; with --reference-schema it first creates the
// reference agent tables that are absent.
type MigrateCommand struct{ m *Main }

func (c *MigrateCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("migrate", "[--reference-schema] [--grant ROLE]")
	reference := fs.Bool("reference-schema", false, "also create the reference agent tables (SPEC §4) of the jobs that are on, where absent")
	grant := fs.String("grant", "", "grant ROLE exactly the privileges the jobs that are on need (run as the tables' owner)")
	if _, err := c.m.parseArgs(fs, args); err != nil {
		return err
	}
	loaded, err := c.m.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	cfg := loaded.Config
	log := c.m.cliLogger(cfg)
	for _, n := range loaded.Notes {
		log.Debug(n)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := schema.Migrate(ctx, db, schema.PlanFor(cfg), schema.Options{Reference: *reference, Grant: *grant, Logger: log})
	if err != nil {
		return err
	}
	out := c.m.Stdout
	fmt.Fprintf(out, "database %s\n", redact.DSN(cfg.Maintenance.Database.URL))
	if len(res.Changes) == 0 {
		fmt.Fprintln(out, "up to date: nothing to change")
	}
	for _, ch := range res.Changes {
		fmt.Fprintln(out, "  "+ch)
	}
	for _, job := range schema.Jobs {
		fmt.Fprintf(out, "%-13s %s\n", job, res.Layout.Reports[job].Line())
	}
	return nil
}
