// Command supersessiond is the maintenance daemon for AI-agent memory and its
// operator commands. main only dispatches: each subcommand is a small struct
// in its own file, and exit codes are decided here and nowhere else.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/supersessiond/supersessiond/config"
)

// Set by the Makefile with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func main() {
	memoryPolicy(os.Getenv)
	m := NewMain()
	err := m.Run(context.Background(), os.Args[1:])
	m.report(err)
	os.Exit(ExitCode(err))
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

	// declared, when set, receives a command's flags instead of their
	// parsing; the command then returns at once (see flagsOf).
	declared func(*flag.FlagSet)
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

// commands is the one list of subcommands: dispatch, usage, `help CMD`, the
// suggestions for a mistyped name and the completion scripts all read it.
func (m *Main) commands() map[string]commandInfo {
	return map[string]commandInfo{
		"apply":      {"apply proposals as real supersessions", func(m *Main) command { return &ApplyCommand{m} }},
		"check":      {"validate config, connectivity and schema", func(m *Main) command { return &CheckCommand{m} }},
		"compact":    {"one compaction-retry pass now (--once)", func(m *Main) command { return &CompactCommand{m} }},
		"completion": {"print a shell completion script (bash or zsh)", func(m *Main) command { return &CompletionCommand{m} }},
		"dependents": {"Honcho documents that cite retired ones (internal_metadata.stale_basis)", func(m *Main) command { return &DependentsCommand{m} }},
		"detect":     {"decide attribute pairs read as JSON lines on stdin (no database)", func(m *Main) command { return &DetectCommand{m} }},
		"eval":       {"score the heuristics on labelled pairs: precision, recall, F1", func(m *Main) command { return &EvalCommand{m} }},
		"help":       {"print the usage of supersessiond or of one command", func(m *Main) command { return &HelpCommand{m} }},
		"history":    {"the audit trail from memory_history, newest first", func(m *Main) command { return &HistoryCommand{m} }},
		"migrate":    {"create/update the daemon's objects in the agent database", func(m *Main) command { return &MigrateCommand{m} }},
		"proposals":  {"the review queue: each supersession_proposal and its status", func(m *Main) command { return &ProposalsCommand{m} }},
		"protect":    {"pin an attribute so nothing automatic supersedes it", func(m *Main) command { return &ProtectCommand{m} }},
		"reconcile":  {"one tombstone-reconciliation pass now (--once)", func(m *Main) command { return &ReconcileCommand{m} }},
		"review":     {"accept or reject a supersession_proposal (or --all pending ones)", func(m *Main) command { return &ReviewCommand{m} }},
		"run":        {"the daemon: scheduler, inline hook, HTTP health/metrics, review console", func(m *Main) command { return &RunCommand{m} }},
		"stats":      {"what the reviews say: precision per signal and method", func(m *Main) command { return &StatsCommand{m} }},
		"supersede":  {"supersede attributes by hand, atomically", func(m *Main) command { return &SupersedeCommand{m} }},
		"sweep":      {"one supersession sweep now (--once)", func(m *Main) command { return &SweepCommand{m} }},
		"undo":       {"revert one attribute_superseded event", func(m *Main) command { return &UndoCommand{m} }},
		"version":    {"print version, commit and Go version", func(m *Main) command { return &VersionCommand{m} }},
	}
}

// commandNames are the subcommands in alphabetical order.
func (m *Main) commandNames() []string {
	cmds := m.commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// topFlags are the flags accepted before a command: each is a command of its
// own (SPEC §2: `supersessiond --version` is `version`).
var topFlags = map[string]string{"help": "help", "h": "help", "version": "version"}

// Run dispatches args[0] to its subcommand.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.usage(m.Stderr)
		return usagef("no command given")
	}
	name := args[0]
	if strings.HasPrefix(name, "-") && name != "-" {
		flagName := strings.TrimLeft(name, "-")
		cmd, ok := topFlags[flagName]
		if !ok {
			return m.unknownTopFlag(ctx, flagName)
		}
		name = cmd
	}
	info, ok := m.commands()[name]
	if !ok {
		return m.unknownCommand(name)
	}
	return info.new(m).Run(ctx, args[1:])
}

func (m *Main) unknownCommand(name string) error {
	if best := closest(name, m.commandNames()); best != "" {
		return usagef("unknown command %q (did you mean %q?); see supersessiond --help", name, best)
	}
	return usagef("unknown command %q; see supersessiond --help", name)
}

// unknownTopFlag answers a flag given before any command. A flag that
// commands take (--config) is the likely mistake of putting it first.
func (m *Main) unknownTopFlag(ctx context.Context, name string) error {
	for _, cmd := range m.commandNames() {
		if fs := m.flagsOf(ctx, cmd); fs != nil && fs.Lookup(name) != nil {
			return usagef("%s goes after the command (supersessiond COMMAND %s ...); see supersessiond --help", dashed(name), dashed(name))
		}
	}
	if best := closest(name, []string{"help", "version"}); best != "" {
		return usagef("unknown flag %s (did you mean %s?); see supersessiond --help", dashed(name), dashed(best))
	}
	return usagef("unknown flag %s; see supersessiond --help", dashed(name))
}

// flagsOf returns the flags a command declares, by running it on a copy of
// m that stops it at parseArgs: the flags come from the code that parses
// them, never from a second list. nil when the command declares none.
func (m *Main) flagsOf(ctx context.Context, name string) *flag.FlagSet {
	info, ok := m.commands()[name]
	if !ok {
		return nil
	}
	var fs *flag.FlagSet
	probe := *m
	probe.Stdout, probe.Stderr, probe.Stdin = io.Discard, io.Discard, strings.NewReader("")
	probe.declared = func(f *flag.FlagSet) { fs = f }
	_ = info.new(&probe).Run(ctx, nil)
	return fs
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "supersessiond keeps an AI agent's PostgreSQL memory current and lossless.")
	fmt.Fprintln(w, "\nUsage: supersessiond COMMAND [flags]\n\nCommands:")
	cmds := m.commands()
	for _, n := range m.commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --config PATH (default $SUPERSESSIOND_CONFIG, else /etc/supersessiond/agent.yaml).")
	fmt.Fprintln(w, "Run 'supersessiond help COMMAND' or 'supersessiond COMMAND --help' for a command's flags;")
	fmt.Fprintln(w, "'supersessiond --version' prints the version.")
}

// HelpCommand is `help [COMMAND]`: the usage of supersessiond, or of one
// command exactly as `COMMAND --help` prints it.
type HelpCommand struct{ m *Main }

func (c *HelpCommand) Run(ctx context.Context, args []string) error {
	fs, _ := c.m.newFlagSet("help", "[COMMAND]")
	pos, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		c.m.usage(c.m.Stdout)
		return nil
	case len(pos) > 1:
		return usagef("help: one COMMAND expected, got %d; see supersessiond --help", len(pos))
	}
	info, ok := c.m.commands()[pos[0]]
	if !ok {
		return c.m.unknownCommand(pos[0])
	}
	return info.new(c.m).Run(ctx, []string{"--help"})
}

func (m *Main) getenv(name string) string { return config.Getenv(m.Environ, name) }

// dashed writes a flag's name the way the documentation does: -h, --help.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// closest returns the candidate nearest to s, for "did you mean": within two
// edits (a transposition is one) and closer than half of s, or the only
// candidate s is a prefix of; "" when none is close enough to help.
func closest(s string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if best == "" || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if best != "" && bestDist <= 2 && 2*bestDist < len(s) {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if s != "" && strings.HasPrefix(c, s) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent letters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
