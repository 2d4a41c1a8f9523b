package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make demo end to end: it must run to the end by itself and show every
// chapter's outcome.
func TestDemoRunsToTheEnd(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "supersessiond")
	if out, err := exec.Command("go", "build", "-o", bin, "../supersessiond").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	if err := run(bin, false, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if bytes.Contains(out.Bytes(), []byte("\033[")) {
		t.Error("demo output to a buffer holds ANSI escape codes")
	}
	for _, want := range []string{
		"proposals      8 shadow, 1 review",
		"(exit 4, as expected)",
		"supersessions  6",
		"3 facts inserted",
		"preserved   1 superseded",
		"decided ",
		"daemon exited 0",
		"What the daemon found and did",
		"SIGNAL", "PRECISION", "value_conflict",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}
