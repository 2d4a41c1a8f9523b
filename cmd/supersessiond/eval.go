package main

import (
	"context"
	"fmt"
	"os"

	"github.com/supersessiond/supersessiond/internal/detect"
)

// EvalCommand runs the heuristics over labelled pairs and prints precision,
// recall and F1, overall, for the heuristic classes and per class, and how
// many true and false pairs fall in the review band.
type EvalCommand struct{ m *Main }

func (c *EvalCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("eval", "FILE [--min-confidence F] [--review-confidence F] [--verbose]")
	minFlag := newConfidenceFlag(fs)
	reviewFlag := &confidenceFlag{}
	fs.Var(reviewFlag, "review-confidence", "count the pairs at or above this confidence but below the minimum as the review band, 0 to 1 (default: supersessionReviewConfidence from the config, 0.5)")
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
	min, review, err := c.m.confidences(*cfgPath, minFlag, reviewFlag)
	if err != nil {
		return err
	}
	if review > min {
		return usagef("eval: the review confidence %g is above the minimum confidence %g", review, min)
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	rep, err := detect.Evaluate(f, min, review)
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

// confidences are the minimum and review confidences: the flags when
// given, else the configuration's supersessionMinConfidence and
// supersessionReviewConfidence (defaults apply when no file exists).
func (m *Main) confidences(cfgPath string, minFlag, reviewFlag *confidenceFlag) (min, review float64, err error) {
	if minFlag.set && reviewFlag.set {
		return minFlag.value, reviewFlag.value, nil
	}
	loaded, err := m.loadConfig(cfgPath)
	if err != nil {
		return 0, 0, err
	}
	st := loaded.Config.Memory.PipelineV2.Structural
	min, review = st.SupersessionMinConfidence, st.SupersessionReviewConfidence
	if minFlag.set {
		min = minFlag.value
	}
	if reviewFlag.set {
		review = reviewFlag.value
	}
	return min, review, nil
}
