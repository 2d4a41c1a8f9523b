package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// make demo writes ANSI codes only to a terminal and never under NO_COLOR
// (https://no-color.org).
func TestColourOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "demo.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	// A character device stands in for a terminal here: the test has none.
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		out  io.Writer
		env  func(string) string
		want bool
	}{
		{"pipe", pw, env(), false},
		{"file", file, env(), false},
		{"buffer", &bytes.Buffer{}, env(), false},
		{"terminal", tty, env("TERM", "xterm-256color"), true},
		{"terminal, NO_COLOR=1", tty, env("NO_COLOR", "1"), false},
		{"terminal, NO_COLOR empty", tty, env("NO_COLOR", ""), true},
		{"terminal, TERM=dumb", tty, env("TERM", "dumb"), false},
	} {
		if got := wantColour(tc.out, tc.env); got != tc.want {
			t.Errorf("%s: colour %t, want %t", tc.name, got, tc.want)
		}
	}

	var buf bytes.Buffer
	plain := &demo{out: &buf}
	plain.title("Start")
	plain.prompt("supersessiond %s", "check")
	if got, want := buf.String(), "\n== Start ==\n\n$ supersessiond check\n"; got != want {
		t.Errorf("plain output %q, want %q", got, want)
	}
	buf.Reset()
	coloured := &demo{out: &buf, colour: true}
	coloured.title("Start")
	if got, want := buf.String(), "\n\033[1m== Start ==\033[0m\n"; got != want {
		t.Errorf("coloured title %q, want %q", got, want)
	}
}
