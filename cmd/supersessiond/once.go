package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/llm"
	"github.com/supersessiond/supersessiond/metrics"
)

// texter is implemented by job reports that have a human-readable form.
type texter interface{ Text() string }

// onceSpec describes a `JOB --once [--json]` command.
type onceSpec struct {
	name  string // subcommand name
	usage string // flags after the name, for -h
	// flags adds the command's own flags (beyond --config, --once, --json).
	flags func(fs *flag.FlagSet)
	// build makes the job; cfg is the loaded configuration.
	build func(deps *daemon.Deps, cfg *config.Config) (daemon.Job, error)
}

// runOnce runs one pass of a job now, as the daemon would on a tick but
// without taking the job's lease (the job's writes are safe to overlap), and
// prints its report: text, or one JSON document with --json.
func (m *Main) runOnce(ctx context.Context, spec onceSpec, args []string) error {
	fs, cfgPath := m.newFlagSet(spec.name, spec.usage)
	once := fs.Bool("once", false, "run one pass now (required: the daemon runs it on its schedule)")
	asJSON := fs.Bool("json", false, "print the report as one JSON document")
	if spec.flags != nil {
		spec.flags(fs)
	}
	positional, err := m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if !*once {
		return usagef("%s: --once is required (`supersessiond run` runs %s on its schedule)", spec.name, spec.name)
	}
	if len(positional) > 0 {
		return usagef("%s: unexpected argument %q", spec.name, positional[0])
	}
	env, err := m.open(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer env.db.Close()
	cfg := env.cfg
	deps := &daemon.Deps{DB: env.db, Metrics: metrics.New(nil), Logger: env.log, LLM: llm.NewProvider(m.getenv, nil)}
	job, err := spec.build(deps, cfg)
	if err != nil {
		return err
	}
	report, runErr := job.Run(ctx, cfg)
	if report != nil {
		if *asJSON {
			enc := json.NewEncoder(m.Stdout)
			if err := enc.Encode(report); err != nil {
				return err
			}
		} else if t, ok := report.(texter); ok {
			fmt.Fprint(m.Stdout, t.Text())
		} else {
			b, _ := json.MarshalIndent(report, "", "  ")
			fmt.Fprintln(m.Stdout, string(b))
		}
	}
	return runErr
}
