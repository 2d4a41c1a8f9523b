package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// onceSpec describes a `JOB --once [--json]` command.
type onceSpec struct {
	name  string     // subcommand name
	job   schema.Job // the job whose tables it needs
	usage string     // flags after the name, for -h
	// flags adds the command's own flags (beyond --config, --once, --json).
	flags func(fs *flag.FlagSet)
	// options, when set, say what the composition root builds differently
	// (reconcile's budget).
	options func() (daemon.StandardOptions, error)
	// pass runs one pass of the job std built, under the settings of the
	// loaded configuration.
	pass func(ctx context.Context, std *daemon.Standard, s daemon.Settings) (jobs.Report, error)
	// other, when set, runs a mode of the command other than a pass
	// (reconcile --restore) once the flags are parsed; when it reports
	// done, the command is over.
	other func(ctx context.Context, cfgPath string, positional []string, once, asJSON bool) (done bool, err error)
}

// runOnce runs one pass of a job now, as the daemon would on a tick but
// without taking the job's lease (the job's writes are safe to overlap), and
// prints its report: text, or one JSON document with --json. It follows the
// daemon's rules: the pass waits for free connection slots as the daemon's
// paths do (store.Guard), and it follows the configuration file it loaded,
// so the brake engaged while it runs (shadowMode, mutationsFrozen) is
// obeyed from the next write batch on.
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
	if spec.other != nil {
		if done, err := spec.other(ctx, *cfgPath, positional, *once, *asJSON); done || err != nil {
			return err
		}
	}
	if !*once {
		return usagef("%s: --once is required (`supersessiond run` runs %s on its schedule)", spec.name, spec.name)
	}
	if len(positional) > 0 {
		return usagef("%s: unexpected argument %q", spec.name, positional[0])
	}
	loaded, err := m.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if plan := daemon.SettingsOf(loaded.Config).Plan; !plan.On[spec.job] {
		return m.printReport(offReport{Job: string(spec.job), Disabled: offText(spec.job)}, *asJSON)
	}
	if spec.job == schema.Supersession {
		// The heuristics build their lexicon on first use (about 30 ms of
		// CPU): build it while this connects and inspects the schema.
		go heuristics.Analyze(heuristics.Input{Content: "Lives in Oslo"})
	}
	env, err := m.open(ctx, *cfgPath, spec.job)
	if err != nil {
		return err
	}
	defer env.db.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	live := m.follow(ctx, env)
	guard := store.NewGuard(env.db, store.GuardOptions{Pool: env.settings.Pool, Logger: env.log})
	if err := guard.Wait(ctx, spec.name); err != nil {
		return err
	}
	deps := jobs.Deps{DB: env.db, Names: env.layout.Names, Logger: env.log, LLM: llm.NewProvider(m.getenv, nil),
		Brake: func() bool { return live().Shadow() }, Guard: guard}
	var opts daemon.StandardOptions
	if spec.options != nil {
		if opts, err = spec.options(); err != nil {
			return err
		}
	}
	opts.Policy = func() supersession.Policy { return daemon.EnginePolicy(env.cfg) }
	report, runErr := spec.pass(ctx, daemon.NewStandard(deps, opts), env.settings)
	if report != nil {
		if err := m.printReport(report, *asJSON); err != nil {
			return err
		}
	}
	return runErr
}

// follow keeps the command's configuration current with its file while it
// runs (config.Follow), saying in the log what each reload brought, and
// returns the configuration in force.
func (m *Main) follow(ctx context.Context, env *cmdEnv) func() *config.Config {
	log := env.log
	f, err := config.Follow(ctx, env.src, env.loaded, func(next *config.Config, err error) {
		if err != nil {
			log.Error("configuration reload failed; still running the previous configuration", "err", err)
			return
		}
		log.Info("configuration reloaded", "mode", string(next.Mode()),
			"shadow_mode", next.Memory.PipelineV2.ShadowMode, "mutations_frozen", next.Memory.PipelineV2.MutationsFrozen)
	})
	if err != nil {
		log.Warn("not watching the configuration file for changes; it is compared before each write batch", "err", err)
	}
	return f.Current
}

// printReport prints a report as text, or as one JSON document.
func (m *Main) printReport(report any, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(m.Stdout).Encode(report)
	}
	if t, ok := report.(jobs.Report); ok {
		fmt.Fprint(m.Stdout, t.Text())
		return nil
	}
	b, _ := json.MarshalIndent(report, "", "  ")
	fmt.Fprintln(m.Stdout, string(b))
	return nil
}

// offReport is the report of a one-shot command whose job is off.
type offReport struct {
	Job      string `json:"job"`
	Disabled string `json:"disabled"`
}

func (r offReport) Text() string { return r.Job + ": nothing done: " + r.Disabled + "\n" }

func offText(job schema.Job) string {
	switch job {
	case schema.Supersession:
		return "memory.pipelineV2.structural.supersessionEnabled is false " +
			"(override once with SUPERSESSIOND_MEMORY__PIPELINEV2__STRUCTURAL__SUPERSESSIONENABLED=true)"
	case schema.Compaction:
		return "maintenance.schedules.compactionRetry is off (override once with SUPERSESSIOND_MAINTENANCE__SCHEDULES__COMPACTIONRETRY='*/5 * * * *')"
	}
	return "maintenance.schedules.tombstones is off (override once with SUPERSESSIOND_MAINTENANCE__SCHEDULES__TOMBSTONES='17 * * * *')"
}
