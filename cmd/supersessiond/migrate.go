package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/schema"
)

// MigrateCommand idempotently creates or updates the daemon's objects in an
// existing agent database; with --reference-schema it first creates the
// reference agent tables that are absent.
type MigrateCommand struct{ m *Main }

func (c *MigrateCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("migrate", "[--reference-schema]")
	reference := fs.Bool("reference-schema", false, "also create the reference agent tables (SPEC §4) where absent")
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
	res, err := schema.Migrate(ctx, db, schema.Options{Reference: *reference, Logger: log})
	if err != nil {
		return err
	}
	out := c.m.Stdout
	fmt.Fprintf(out, "database %s\n", redact.DSN(cfg.Maintenance.Database.URL))
	if *reference {
		if len(res.ReferenceCreated) > 0 {
			fmt.Fprintf(out, "created reference tables: %s\n", strings.Join(res.ReferenceCreated, ", "))
		} else {
			fmt.Fprintln(out, "reference tables: all present")
		}
	}
	if len(res.Applied) > 0 {
		fmt.Fprintf(out, "applied migrations: %s\n", strings.Join(res.Applied, ", "))
	} else {
		fmt.Fprintln(out, "migrations: up to date")
	}
	fmt.Fprintf(out, "schema version %d\n", res.Version)
	return nil
}
