package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// VersionCommand prints version, commit and Go version. It needs neither a
// configuration file nor a database.
type VersionCommand struct{ m *Main }

func (c *VersionCommand) Run(ctx context.Context, args []string) error {
	fs, _ := c.m.newFlagSet("version", "")
	if _, err := c.m.parseArgs(fs, args); err != nil {
		return err
	}
	rev := commit
	if rev == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					rev = s.Value
				}
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	fmt.Fprintf(c.m.Stdout, "supersessiond %s (commit %s, %s %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
