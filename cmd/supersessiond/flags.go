package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// newFlagSet returns a FlagSet that reports errors instead of exiting, with
// the --config flag every subcommand takes. Its Usage writes to the set's
// output, which stays io.Discard except while printUsage prints on request:
// the flag package calls Usage itself on every error and on -h, and neither
// may print the usage a second time or on stderr.
func (m *Main) newFlagSet(name, usage string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", "", "`path` of agent.yaml (default $SUPERSESSIOND_CONFIG, else "+config.DefaultPath+")")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: supersessiond %s\n", strings.TrimSpace(name+" "+usage))
		if info, ok := m.commands()[name]; ok {
			fmt.Fprintf(w, "\n%s.\n", capitalize(info.summary))
		}
		fmt.Fprintln(w, "\nFlags:")
		printFlags(w, fs)
	}
	return fs, cfgPath
}

// printUsage prints a command's usage on w.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fs.SetOutput(w)
	defer fs.SetOutput(io.Discard)
	fs.Usage()
}

// printFlags lists the flags the way they are written in this repository's
// documentation, with two dashes (the flag package accepts one or two).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, usage)
	})
	fmt.Fprintln(w, "  --help\n      print this help")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// parseArgs parses flags that may appear before, between or after positional
// arguments (`supersede OLD1 --by NEW OLD2`), which the standard library's
// flag package stops at. "--" ends flag parsing. Every command calls it
// before it does anything else, which is what lets `help CMD`, -h and the
// completion scripts ask a command for its flags by running it.
func (m *Main) parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	if m.declared != nil {
		m.declared(fs)
		return nil, errHelp
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(m.Stdout, fs)
				return nil, errHelp
			}
			return nil, flagError(fs, err)
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

// flagError turns the flag package's error into one line that names the
// closest flag the command has, when the flag is unknown.
func flagError(fs *flag.FlagSet, err error) error {
	see := fmt.Sprintf("see supersessiond %s --help", fs.Name())
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !unknown {
		return usagef("%s: %v; %s", fs.Name(), err, see)
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	names = append(names, "help")
	if best := closest(name, names); best != "" {
		return usagef("%s: unknown flag %s (did you mean %s?); %s", fs.Name(), dashed(name), dashed(best), see)
	}
	return usagef("%s: unknown flag %s; %s", fs.Name(), dashed(name), see)
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
	return store.Open(ctx, cfg.Maintenance.Database.URL, daemon.SettingsOf(cfg).Pool, 10*time.Second)
}

// cmdEnv is what a command that works on the database needs.
type cmdEnv struct {
	cfg      *config.Config
	settings daemon.Settings // made of cfg
	db       *sqlx.DB
	log      *slog.Logger
	layout   *schema.Layout
	operator audit.Operator // who the rows this command writes name
	// src and loaded are where cfg came from, for following the file.
	src    config.Source
	loaded *config.Loaded
}

// open loads the configuration, connects, inspects the database and checks
// that the given jobs can run on it: exit 2 for configuration problems, 3
// for the database or its schema. The jobs named are checked even when the
// configuration has them off (an operator reviewing proposals of a paused
// supersession still needs its tables).
func (m *Main) open(ctx context.Context, cfgPath string, jobs ...schema.Job) (*cmdEnv, error) {
	src := config.Resolve(cfgPath, m.Environ)
	loaded, err := config.Load(src)
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
	settings := daemon.SettingsOf(cfg)
	plan := settings.Plan
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
	return &cmdEnv{cfg: cfg, settings: settings, db: db, log: log, layout: layout, src: src, loaded: loaded}, nil
}

// openAs is open for a command that writes history rows: the operator
// (--operator, else the operating-system user) is resolved first, so a bad
// name is a usage error before anything connects.
func (m *Main) openAs(ctx context.Context, cfgPath, operatorName string, jobs ...schema.Job) (*cmdEnv, error) {
	op, err := m.operator(operatorName)
	if err != nil {
		return nil, err
	}
	env, err := m.open(ctx, cfgPath, jobs...)
	if err != nil {
		return nil, err
	}
	env.operator = op
	return env, nil
}

// ops are the operator commands on the environment's database; the rows
// they write name the operator (see operatorFlag).
func (e *cmdEnv) ops() *audit.Ops {
	std := daemon.NewStandard(jobs.Deps{DB: e.db, Names: e.layout.Names, Logger: e.log},
		daemon.StandardOptions{Policy: func() supersession.Policy { return daemon.EnginePolicy(e.cfg) }})
	return std.Ops(e.db).As(e.operator)
}

// operatorFlag declares --operator on a command that writes history rows.
func operatorFlag(fs *flag.FlagSet) *string {
	return fs.String("operator", "", "`name` recorded as who decided, in the history rows this writes (default: the operating-system user)")
}

// operator is who a command's history rows name: --operator, else the
// operating-system user; the channel is cli and the request this
// invocation.
func (m *Main) operator(flagName string) (audit.Operator, error) {
	op := audit.Operator{Channel: audit.ChannelCLI, Name: flagName, Source: audit.SourceFlag, RequestID: ident.Random("cli-", 8)}
	if flagName != "" {
		if !ident.ValidOperator(flagName) {
			return op, usagef("--operator %q: a name is 1 to 64 letters, digits or . _ @ -", flagName)
		}
		return op, nil
	}
	op.Source = audit.SourceOSUser
	if u, err := user.Current(); err == nil && u.Username != "" {
		op.Name = u.Username
	} else if name := config.Getenv(m.Environ, "USER"); name != "" {
		op.Name = name
	} else {
		op.Name = fmt.Sprintf("uid-%d", os.Getuid())
	}
	return op, nil
}

// requirePositional checks the count of positional arguments.
func requirePositional(name string, got []string, min int, what string) error {
	if len(got) < min {
		return usagef("%s: missing %s (see 'supersessiond %s -h')", name, what, name)
	}
	return nil
}
