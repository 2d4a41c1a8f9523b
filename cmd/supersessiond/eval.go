package main

import (
	"context"
	"fmt"
	"os"

	"github.com/supersessiond/supersessiond/internal/detect"
)

// EvalCommand runs the heuristics over labelled pairs and prints precision,
// recall and F1, overall, for the heuristic classes and per class.
type EvalCommand struct{ m *Main }

func (c *EvalCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("eval", "FILE [--min-confidence F] [--verbose]")
	minFlag := newConfidenceFlag(fs)
	verbose := fs.Bool("verbose", false, "list the misclassified pairs with their confidence and signals")
	pos, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := requirePositional("eval", pos, 1, "FILE"); err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("eval: one FILE expected, got %d (see 'supersessiond eval -h')", len(pos))
	}
	min, err := c.m.minConfidence(*cfgPath, minFlag)
	if err != nil {
		return err
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	rep, err := detect.Evaluate(f, min)
	if err != nil {
		return fmt.Errorf("eval: read %s: %w", pos[0], err)
	}
	if err := rep.Write(c.m.Stdout, *verbose); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if len(rep.Errors) > 0 {
		return &quietError{code: exitFailure}
	}
	return nil
}
