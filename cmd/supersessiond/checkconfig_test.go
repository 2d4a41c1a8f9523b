package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// check --config-only validates a file without any database: the URL below
// names a port nothing listens on, and a connection attempt would fail.
func TestCheckConfigOnlyNeedsNoDatabase(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	example, err := filepath.Abs(filepath.Join("..", "..", "agent.yaml.example"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("", "check", "--config-only", "--config", example)
	if code != exitOK || out != "configuration ok ("+example+")\n" || errOut != "" {
		t.Fatalf("agent.yaml.example: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	bad := writeConfig(t, "memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 7\n")
	code, out, errOut = c.run("", "check", "--config-only", "--config", bad)
	if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, "supersessionMinConfidence: 7 is out of range") {
		t.Fatalf("bad file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	typo := writeConfig(t, "maintenance:\n  logg:\n    level: debug\n")
	if code, _, errOut := c.run("", "check", "--config-only", "--config", typo); code != exitUsage || !strings.Contains(errOut, "maintenance.logg") {
		t.Fatalf("unknown key: exit %d: %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if code, _, errOut := c.run("", "check", "--config-only", "--config", missing); code != exitUsage || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("missing file: exit %d: %s", code, errOut)
	}
	// Without --config-only the same good file needs the database: exit 3.
	if code, _, errOut := c.run("", "check", "--config", example); code != exitUnavailable {
		t.Fatalf("check without --config-only must try the database: exit %d: %s", code, errOut)
	}
}
