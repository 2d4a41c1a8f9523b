package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/detect"
)

// DetectCommand reads attribute pairs as JSON lines on stdin and writes one
// decision per line on stdout (SPEC §6). It needs no database; a config
// file, when present, only supplies supersessionMinConfidence.
type DetectCommand struct{ m *Main }

func (c *DetectCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("detect", "[--min-confidence F] < pairs.jsonl")
	minFlag := newConfidenceFlag(fs)
	pos, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("detect: unexpected argument %q (pairs are read from standard input)", pos[0])
	}
	min, err := c.m.minConfidence(*cfgPath, minFlag)
	if err != nil {
		return err
	}
	stats, err := detect.Run(c.m.Stdin, c.m.Stdout, min)
	if err != nil {
		return fmt.Errorf("detect: %w", err)
	}
	if stats.Errors > 0 {
		return &quietError{code: exitFailure}
	}
	return nil
}

// confidenceFlag is --min-confidence: optional, validated in [0, 1].
type confidenceFlag struct {
	set   bool
	value float64
}

func newConfidenceFlag(fs *flag.FlagSet) *confidenceFlag {
	f := &confidenceFlag{}
	fs.Var(f, "min-confidence", "supersede at or above this confidence, 0 to 1 (default: supersessionMinConfidence from the config, 0.7)")
	return f
}

func (f *confidenceFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.value, 'g', -1, 64)
}

func (f *confidenceFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != v || v < 0 || v > 1 {
		return fmt.Errorf("%q is not a number between 0 and 1", s)
	}
	f.set, f.value = true, v
	return nil
}

// minConfidence is the flag when given, else the configuration's
// memory.pipelineV2.structural.supersessionMinConfidence (defaults apply
// when no file exists).
func (m *Main) minConfidence(cfgPath string, f *confidenceFlag) (float64, error) {
	if f.set {
		return f.value, nil
	}
	loaded, err := m.loadConfig(cfgPath)
	if err != nil {
		return 0, err
	}
	return daemon.SettingsOf(loaded.Config).Engine.Thresholds.Min, nil
}
