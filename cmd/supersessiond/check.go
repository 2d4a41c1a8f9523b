package main

import (
	"context"
	"fmt"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/schema"
	"github.com/supersessiond/supersessiond/store"
)

// CheckCommand validates configuration, connectivity and schema, and exits 0
// only when all three are fine (2: configuration, 3: database or schema).
type CheckCommand struct{ m *Main }

func (c *CheckCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("check", "")
	if _, err := c.m.parseArgs(fs, args); err != nil {
		return err
	}
	out := c.m.Stdout
	loaded, err := c.m.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	cfg := loaded.Config
	fmt.Fprintf(out, "config      ok (%s)\n", describeSource(loaded))
	for _, n := range loaded.Notes {
		fmt.Fprintf(out, "            note: %s\n", n)
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
	fmt.Fprintf(out, "database    ok (%s, PostgreSQL %s)\n", redact.DSN(cfg.Maintenance.Database.URL), serverVersion)
	if err := schema.Check(ctx, db); err != nil {
		return err
	}
	fmt.Fprintf(out, "schema      ok (version %d)\n", schema.LatestVersion())
	return nil
}

func describeSource(l *config.Loaded) string {
	if l.File == "" {
		return "built-in defaults"
	}
	return l.File
}
