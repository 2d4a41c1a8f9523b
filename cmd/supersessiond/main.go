// Command supersessiond is the maintenance daemon for AI-agent memory and its
// operator commands. main only dispatches: each subcommand is a small struct
// in its own file, and exit codes are decided here and nowhere else.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Set by the Makefile with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func main() {
	m := NewMain()
	err := m.Run(context.Background(), os.Args[1:])
	code := ExitCode(err)
	var quiet *quietError
	if err != nil && !errors.As(err, &quiet) {
		fmt.Fprintln(m.Stderr, "supersessiond:", err)
	}
	os.Exit(code)
}

// Main holds the process's environment so that every subcommand can be run
// in-process by tests with buffers and a fake environment.
type Main struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ func() []string
	// Signals, when set, replaces OS signal delivery for `run` (tests).
	Signals <-chan os.Signal
}

func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ}
}

type command interface {
	Run(ctx context.Context, args []string) error
}

type commandInfo struct {
	summary string
	new     func(m *Main) command
}

func (m *Main) commands() map[string]commandInfo {
	return map[string]commandInfo{
		"apply":     {"apply proposals as real supersessions", func(m *Main) command { return &ApplyCommand{m} }},
		"check":     {"validate config, connectivity and schema", func(m *Main) command { return &CheckCommand{m} }},
		"compact":   {"one compaction-retry pass now (--once)", func(m *Main) command { return &CompactCommand{m} }},
		"detect":    {"decide attribute pairs read as JSON lines on stdin (no database)", func(m *Main) command { return &DetectCommand{m} }},
		"eval":      {"score the heuristics on labelled pairs: precision, recall, F1", func(m *Main) command { return &EvalCommand{m} }},
		"history":   {"the audit trail from memory_history, newest first", func(m *Main) command { return &HistoryCommand{m} }},
		"migrate":   {"create/update the daemon's objects in the agent database", func(m *Main) command { return &MigrateCommand{m} }},
		"protect":   {"pin an attribute so nothing automatic supersedes it", func(m *Main) command { return &ProtectCommand{m} }},
		"reconcile": {"one tombstone-reconciliation pass now (--once)", func(m *Main) command { return &ReconcileCommand{m} }},
		"review":    {"accept or reject a supersession_proposal", func(m *Main) command { return &ReviewCommand{m} }},
		"run":       {"the daemon: scheduler, inline hook, HTTP health/metrics", func(m *Main) command { return &RunCommand{m} }},
		"supersede": {"supersede attributes by hand, atomically", func(m *Main) command { return &SupersedeCommand{m} }},
		"sweep":     {"one supersession sweep now (--once)", func(m *Main) command { return &SweepCommand{m} }},
		"undo":      {"revert one attribute_superseded event", func(m *Main) command { return &UndoCommand{m} }},
		"version":   {"print version, commit and Go version", func(m *Main) command { return &VersionCommand{m} }},
	}
}

// Run dispatches args[0] to its subcommand.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		m.usage(m.Stdout)
		if len(args) == 0 {
			return &usageError{msg: "no command given"}
		}
		return nil
	}
	info, ok := m.commands()[args[0]]
	if !ok {
		m.usage(m.Stderr)
		return &usageError{msg: fmt.Sprintf("unknown command %q", args[0])}
	}
	return info.new(m).Run(ctx, args[1:])
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "supersessiond keeps an AI agent's PostgreSQL memory current and lossless.")
	fmt.Fprintln(w, "\nUsage: supersessiond COMMAND [flags]\n\nCommands:")
	cmds := m.commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --config PATH (default $SUPERSESSIOND_CONFIG, else /etc/supersessiond/agent.yaml).")
	fmt.Fprintln(w, "Run 'supersessiond COMMAND -h' for a command's flags.")
}

func (m *Main) getenv(name string) string {
	for _, kv := range m.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
