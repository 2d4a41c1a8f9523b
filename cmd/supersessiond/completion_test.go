package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Both scripts know every command and every flag each command declares.
func TestCompletionScriptsCoverEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	m := NewMain()
	for _, shell := range []string{"bash", "zsh"} {
		code, script, errOut := c.run("", "completion", shell)
		if code != 0 || errOut != "" {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errOut)
		}
		for _, name := range m.commandNames() {
			if !strings.Contains(script, name) {
				t.Errorf("%s script lacks the command %s", shell, name)
			}
			m.flagsOf(context.Background(), name).VisitAll(func(f *flag.Flag) {
				if !strings.Contains(script, "--"+f.Name) {
					t.Errorf("%s script lacks %s --%s", shell, name, f.Name)
				}
			})
		}
	}
}

// The bash script completes what a user types, run by bash itself.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	_, script, _ := newCLI(t).run("", "completion", "bash")
	path := filepath.Join(t.TempDir(), "supersessiond.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line string // the words typed; the last one is being completed
		want string // COMPREPLY, space-separated
	}{
		{"supersessiond sw", "sweep"},
		{"supersessiond re", "reconcile review"},
		{"supersessiond --ver", "--version"},
		{"supersessiond sweep --a", "--agent"},
		{"supersessiond sweep --once --j", "--json"},
		{"supersessiond history --format", "--format"},
		{"supersessiond history --format ", ""},
		{"supersessiond help rec", "reconcile"},
		{"supersessiond completion ", "bash zsh"},
		{"supersessiond reconcile --b", "--budget"},
		{"supersessiond check --config " + filepath.Dir(path) + "/supersess", path},
	} {
		words := strings.Fields(tc.line)
		if strings.HasSuffix(tc.line, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := ". " + path + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_supersessiond\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.line, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.line, got, tc.want)
		}
	}
}

// The zsh script parses and registers itself with compinit.
func TestZshCompletionLoads(t *testing.T) {
	t.Parallel()
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh not installed (apt-get install zsh) to check the zsh completion script")
	}
	_, script, _ := newCLI(t).run("", "completion", "zsh")
	path := filepath.Join(t.TempDir(), "_supersessiond")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(zsh, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	prog := "autoload -U compinit && compinit -u -d " + filepath.Join(t.TempDir(), "zcompdump") +
		" && source " + path + " && print -r -- $_comps[supersessiond]"
	out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_supersessiond" {
		t.Fatalf("zsh did not register the completion: %v\n%s", err, out)
	}
}
