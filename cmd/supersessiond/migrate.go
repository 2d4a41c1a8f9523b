package main

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// MigrateCommand idempotently creates or updates the daemon's objects in an
// existing agent database; with --reference-schema it first creates the
// reference agent tables that are absent. With --remove it drops them
// again, and says what it keeps.
type MigrateCommand struct{ m *Main }

func (c *MigrateCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("migrate", "[--reference-schema] [--grant ROLE] | --remove")
	reference := fs.Bool("reference-schema", false, "also create the reference agent tables (SPEC §4) of the jobs that are on, where absent")
	grant := fs.String("grant", "", "grant ROLE exactly the privileges the jobs that are on need (run as the tables' owner)")
	remove := fs.Bool("remove", false, "drop the daemon's own schema, its trigger and function and the indexes it created; "+
		"keep the columns it added and their data (idempotent)")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("migrate: unexpected argument %q", positional[0])
	}
	if *remove && (*reference || *grant != "") {
		return usagef("migrate: --remove takes neither --reference-schema nor --grant")
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
	if *remove {
		return c.remove(ctx, db, cfg)
	}
	res, err := schema.Migrate(ctx, db, daemon.SettingsOf(cfg).Plan, schema.Options{Reference: *reference, Grant: *grant, Logger: log})
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

// remove is `migrate --remove`.
func (c *MigrateCommand) remove(ctx context.Context, db *sqlx.DB, cfg *config.Config) error {
	res, err := schema.Remove(ctx, db, daemon.SettingsOf(cfg).Plan)
	if err != nil {
		return err
	}
	out := c.m.Stdout
	fmt.Fprintf(out, "database %s\n", redact.DSN(cfg.Maintenance.Database.URL))
	if len(res.Dropped) == 0 {
		fmt.Fprintln(out, "nothing to remove: none of the daemon's objects is in this database")
	} else {
		fmt.Fprintln(out, "removed:")
	}
	for _, d := range res.Dropped {
		fmt.Fprintln(out, "  "+d)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintln(out, "kept:")
	}
	for _, k := range res.Kept {
		fmt.Fprintln(out, "  "+k)
	}
	fmt.Fprintln(out, "`supersessiond migrate` adds the daemon's objects again.")
	return nil
}
