package main

import (
	"context"
	"strings"
	"testing"
)

// SPEC §2: `help CMD` and `CMD --help` print that command's usage once, on
// stdout, exit 0; -h and -help are the same request.
func TestHelpPrintsACommandsUsageOnceOnStdout(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, name := range NewMain().commandNames() {
		var first string
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}, {name, "-help"}, {"--help", name}} {
			code, out, errOut := c.run("", args...)
			if code != 0 || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
			}
			if !strings.HasPrefix(out, "Usage: supersessiond "+name) || strings.Count(out, "Usage:") != 1 {
				t.Errorf("%v: want the usage of %s once, got:\n%s", args, name, out)
			}
			if !strings.Contains(out, "  --config path") {
				t.Errorf("%v: usage lists no --config:\n%s", args, out)
			}
			if first == "" {
				first = out
			} else if out != first {
				t.Errorf("%v prints another usage than `help %s`:\n%s\n---\n%s", args, name, out, first)
			}
		}
	}
}

func TestGeneralHelpAndVersionFlags(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, errOut := c.run("", args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Commands:") {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
		}
		for _, name := range NewMain().commandNames() {
			if !strings.Contains(out, "\n  "+name+" ") {
				t.Errorf("%v: usage does not list %s", args, name)
			}
		}
	}
	_, want, _ := c.run("", "version")
	for _, args := range [][]string{{"--version"}, {"-version"}} {
		if code, out, errOut := c.run("", args...); code != 0 || out != want || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q (want %q), stderr %q", args, code, out, want, errOut)
		}
	}
	// No command at all is a usage error: the usage goes to stderr.
	if code, out, errOut := c.run(""); code != exitUsage || out != "" || !strings.Contains(errOut, "Commands:") {
		t.Errorf("no command: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A mistake is answered in one line on stderr, with the closest valid name
// when one is close, and exit 2.
func TestUnknownCommandOrFlagIsOneLine(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"swep"}, `unknown command "swep" (did you mean "sweep"?); see supersessiond --help`},
		{[]string{"histroy", "--limit", "3"}, `unknown command "histroy" (did you mean "history"?); see supersessiond --help`},
		{[]string{"recon"}, `unknown command "recon" (did you mean "reconcile"?); see supersessiond --help`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; see supersessiond --help`},
		{[]string{"help", "swep"}, `unknown command "swep" (did you mean "sweep"?); see supersessiond --help`},
		{[]string{"sweep", "--once", "--agnet", "a1"}, `sweep: unknown flag --agnet (did you mean --agent?); see supersessiond sweep --help`},
		{[]string{"history", "-fromat=json"}, `history: unknown flag --fromat (did you mean --format?); see supersessiond history --help`},
		{[]string{"check", "--no-such-flag"}, `check: unknown flag --no-such-flag; see supersessiond check --help`},
		{[]string{"sweep", "--hlep"}, `sweep: unknown flag --hlep (did you mean --help?); see supersessiond sweep --help`},
		{[]string{"history", "--limit", "many"}, `history: invalid value "many" for flag -limit: parse error; see supersessiond history --help`},
		{[]string{"-v"}, `unknown flag -v (did you mean --version?); see supersessiond --help`},
		{[]string{"--verison"}, `unknown flag --verison (did you mean --version?); see supersessiond --help`},
		{[]string{"--config", "/etc/agent.yaml", "check"}, `--config goes after the command (supersessiond COMMAND --config ...); see supersessiond --help`},
		{[]string{"completion", "fish"}, `completion: no script for "fish": bash or zsh; see supersessiond completion --help`},
	} {
		code, out, errOut := c.run("", tc.args...)
		if code != exitUsage || out != "" || errOut != "supersessiond: "+tc.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and the one line:\nsupersessiond: %s", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	names := NewMain().commandNames()
	for _, tc := range []struct{ in, want string }{
		{"swep", "sweep"},
		{"sweeep", "sweep"},
		{"histroy", "history"},
		{"reconsile", "reconcile"},
		{"udno", "undo"},
		{"supersed", "supersede"},
		{"recon", "reconcile"}, // the only command it begins
		{"re", ""},             // reconcile or review
		{"x", ""},
		{"frobnicate", ""},
	} {
		if got := closest(tc.in, names); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Every command declares its flags before doing anything: that is what
// help, the suggestions and the completion scripts rely on.
func TestEveryCommandDeclaresItsFlags(t *testing.T) {
	t.Parallel()
	m := NewMain()
	for _, name := range m.commandNames() {
		fs := m.flagsOf(context.Background(), name)
		if fs == nil || fs.Lookup("config") == nil {
			t.Errorf("%s: flags not declared before parsing", name)
		}
	}
	if fs := m.flagsOf(context.Background(), "sweep"); fs.Lookup("agent") == nil || fs.Lookup("once") == nil {
		t.Error("sweep: --agent and --once not found")
	}
}
