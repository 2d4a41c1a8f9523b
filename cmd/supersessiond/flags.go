package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// newFlagSet returns a FlagSet that reports errors instead of exiting, with
// the --config flag every subcommand takes.
func (m *Main) newFlagSet(name, usage string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", "", "path of agent.yaml (default $SUPERSESSIOND_CONFIG, else "+config.DefaultPath+")")
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: supersessiond %s %s\n\nFlags:\n", name, usage)
		fs.SetOutput(m.Stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs, cfgPath
}

// parseArgs parses flags that may appear before, between or after positional
// arguments (`supersede OLD1 --by NEW OLD2`), which the standard library's
// flag package stops at. "--" ends flag parsing.
func (m *Main) parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, errHelp
			}
			return nil, &usageError{msg: fmt.Sprintf("%s: %v (see 'supersessiond %s -h')", fs.Name(), err, fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// errHelp is returned after -h printed the usage: exit 0, nothing more.
var errHelp error = &quietError{code: exitOK}

// loadConfig resolves and loads agent.yaml; notes go to the logger once.
func (m *Main) loadConfig(flagPath string) (*config.Loaded, error) {
	return config.Load(config.Resolve(flagPath, m.Environ))
}

// cliLogger is the logger for one-shot commands: text on stderr, at the
// configured level, so that stdout carries only the command's result.
func (m *Main) cliLogger(cfg *config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Maintenance.Log.Level))
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: level}))
}

// openDB connects to the configured database, failing with exit code 3.
func openDB(ctx context.Context, cfg *config.Config) (*sqlx.DB, error) {
	return store.Open(ctx, cfg.Maintenance.Database.URL, poolOf(cfg), 10*time.Second)
}

// poolOf is the connection pool the configuration allows.
func poolOf(cfg *config.Config) store.Pool {
	d := cfg.Maintenance.Database
	return store.Pool{MaxOpen: d.MaxOpenConns, MaxIdle: d.MaxIdleConns, IdleTime: 30 * time.Second}
}

// cmdEnv is what a command that works on the database needs.
type cmdEnv struct {
	cfg    *config.Config
	db     *sqlx.DB
	log    *slog.Logger
	layout *schema.Layout
}

// open loads the configuration, connects, inspects the database and checks
// that the given jobs can run on it: exit 2 for configuration problems, 3
// for the database or its schema. The jobs named are checked even when the
// configuration has them off (an operator reviewing proposals of a paused
// supersession still needs its tables).
func (m *Main) open(ctx context.Context, cfgPath string, jobs ...schema.Job) (*cmdEnv, error) {
	loaded, err := m.loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	cfg := loaded.Config
	log := m.cliLogger(cfg)
	for _, n := range loaded.Notes {
		log.Debug(n)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	plan := schema.PlanFor(cfg)
	for _, job := range jobs {
		plan.On[job] = true
	}
	layout, err := schema.Inspect(ctx, db, plan)
	if err == nil {
		err = layout.Require(jobs...)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &cmdEnv{cfg: cfg, db: db, log: log, layout: layout}, nil
}

// ops are the operator commands on the environment's database.
func (e *cmdEnv) ops() *audit.Ops {
	engine := supersession.New(e.db, e.layout.Names, e.log, supersession.NewMetrics(nil), nil)
	return audit.New(e.db, e.layout.Names, engine)
}

// requirePositional checks the count of positional arguments.
func requirePositional(name string, got []string, min int, what string) error {
	if len(got) < min {
		return usagef("%s: missing %s (see 'supersessiond %s -h')", name, what, name)
	}
	return nil
}
