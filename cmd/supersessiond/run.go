package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
)

// RunCommand is the daemon.
type RunCommand struct{ m *Main }

func (c *RunCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("run", "")
	if _, err := c.m.parseArgs(fs, args); err != nil {
		return err
	}
	src := config.Resolve(*cfgPath, c.m.Environ)
	loaded, err := config.Load(src)
	if err != nil {
		return err
	}
	signals := c.m.Signals
	if signals == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
		defer signal.Stop(ch)
		signals = ch
	}
	d, err := daemon.New(daemon.Options{
		Source:    src,
		Initial:   loaded,
		LogOutput: c.m.Stderr,
		Environ:   c.m.Environ,
		Signals:   signals,
	})
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
