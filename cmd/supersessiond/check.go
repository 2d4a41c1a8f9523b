package main

import (
	"context"
	"fmt"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
)

// CheckCommand validates configuration, connectivity and schema, and exits 0
// only when all three are fine (2: configuration, 3: database or schema).
// With --config-only it validates the configuration alone, touching no
// database: a check an operator can run on a file before deploying it.
type CheckCommand struct{ m *Main }

func (c *CheckCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("check", "[--config-only]")
	configOnly := fs.Bool("config-only", false, "validate the configuration only, with no database (exit 0 and one line, or 2 and the error)")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("check: unexpected argument %q", positional[0])
	}
	out := c.m.Stdout
	loaded, err := c.m.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *configOnly {
		fmt.Fprintf(out, "configuration ok (%s)\n", describeSource(loaded))
		return nil
	}
	cfg := loaded.Config
	fmt.Fprintf(out, "%-13s ok (%s)\n", "config", describeSource(loaded))
	for _, n := range loaded.Notes {
		fmt.Fprintf(out, "%-13s note: %s\n", "", n)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	var serverVersion string
	if err := db.GetContext(ctx, &serverVersion, `SHOW server_version`); err != nil {
		return &store.UnavailableError{DSN: redact.DSN(cfg.Maintenance.Database.URL), Err: err}
	}
	fmt.Fprintf(out, "%-13s ok (%s, PostgreSQL %s)\n", "database", redact.DSN(cfg.Maintenance.Database.URL), serverVersion)
	layout, err := schema.Inspect(ctx, db, daemon.SettingsOf(cfg).Plan)
	if err != nil {
		return err
	}
	bad := 0
	for _, job := range schema.Jobs {
		r := layout.Reports[job]
		fmt.Fprintf(out, "%-13s %s\n", job, r.Line())
		if !r.OK() {
			bad++
		}
	}
	if bad > 0 {
		return &schema.SchemaError{Missing: []string{fmt.Sprintf("%d of the jobs that are on cannot run as the database is (see above)", bad)}}
	}
	return nil
}

func describeSource(l *config.Loaded) string {
	if l.File == "" {
		return "built-in defaults"
	}
	return l.File
}
