package main

import (
	"context"
	"fmt"
	"os"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/detect"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// EvalCommand runs the heuristics over labelled pairs and prints precision,
// recall and F1, overall, for the heuristic classes and per class, and how
// many true and false pairs fall in the review band. With --aspects it
// decides whole aspects as a live sweep would (SPEC §12). With --llm the
// configured LLM judges what the heuristics leave, as the daemon would
// (SPEC §13), and the report adds what it did and cost.
type EvalCommand struct{ m *Main }

func (c *EvalCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("eval", "(FILE | --aspects FILE [--scope]) [--llm] [--min-confidence F] [--review-confidence F] [--verbose]")
	minFlag := newConfidenceFlag(fs)
	reviewFlag := &confidenceFlag{}
	fs.Var(reviewFlag, "review-confidence", "count the pairs at or above this confidence but below the minimum as the review band, 0 to 1 (default: supersessionReviewConfidence from the config, 0.5)")
	verbose := fs.Bool("verbose", false, "list the misclassified pairs (with --aspects: every wrong retirement and every miss) with their confidence and signals")
	aspects := fs.String("aspects", "", "decide the whole aspects of `FILE` (one aspect per line, SPEC §12) as a live sweep would, and score retirements and pairs")
	scope := fs.Bool("scope", false, "with --aspects: merge each entity's aspects into one scope and withhold the aspects' names, as a Honcho or mem0 store is decided")
	withLLM := fs.Bool("llm", false, "let the LLM of maintenance.llm (from --config) judge what the heuristics leave, as the daemon's semantic fallback would, and report its requests, tokens and latency")
	pos, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	file, err := evalFile(pos, *aspects, *scope)
	if err != nil {
		return err
	}
	min, review, err := c.m.confidences(*cfgPath, minFlag, reviewFlag)
	if err != nil {
		return err
	}
	if review > min {
		return usagef("eval: the review confidence %g is above the minimum confidence %g", review, min)
	}
	var judge *detect.LLMJudge
	if *withLLM {
		if judge, err = c.judge(*cfgPath); err != nil {
			return err
		}
	}
	if *aspects != "" {
		return c.aspects(file, detect.AspectOptions{Min: min, Review: review, Scope: *scope, LLM: judge}, *verbose)
	}
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	var rep *detect.Report
	if judge != nil {
		rep, err = detect.EvaluateLLM(f, min, review, *judge)
	} else {
		rep, err = detect.Evaluate(f, min, review)
	}
	if err != nil {
		return fmt.Errorf("eval: read %s: %w", file, err)
	}
	if err := rep.Write(c.m.Stdout, *verbose); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if len(rep.Errors) > 0 {
		return &quietError{code: exitFailure}
	}
	return nil
}

// judge is the LLM of the configuration, as the daemon would ask it: its
// endpoint, model, key, timeouts, concurrency, window size and gate.
func (c *EvalCommand) judge(cfgPath string) (*detect.LLMJudge, error) {
	loaded, err := c.m.loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	cfg := loaded.Config
	if !cfg.LLMConfigured() {
		return nil, usagef("eval --llm: no LLM is configured: set maintenance.llm.endpoint and maintenance.llm.model in the file --config names (or SUPERSESSIOND_MAINTENANCE__LLM__ENDPOINT and ..._MODEL)")
	}
	settings := daemon.SettingsOf(cfg)
	client := llm.NewProvider(c.m.getenv, nil).Client(settings.LLM)
	timeout := settings.Engine.SemanticTimeout
	l := cfg.Maintenance.LLM
	return &detect.LLMJudge{
		Model: l.Model, Gate: supersession.Gate(cfg.LLMGate()), MaxStatements: l.MaxStatements, Concurrency: l.MaxConcurrency,
		Ask: func(ctx context.Context, req llm.WindowRequest) (llm.WindowVerdict, error) {
			return client.Window(ctx, req, timeout)
		},
	}, nil
}

// evalFile is the one file eval reads: a positional FILE of pairs, or the
// --aspects FILE.
func evalFile(pos []string, aspects string, scope bool) (string, error) {
	switch {
	case aspects != "" && len(pos) > 0:
		return "", usagef("eval: --aspects takes the file; %q is one file too many (see 'supersessiond eval -h')", pos[0])
	case aspects != "":
		return aspects, nil
	case scope:
		return "", usagef("eval: --scope needs --aspects FILE")
	}
	if err := requirePositional("eval", pos, 1, "FILE"); err != nil {
		return "", err
	}
	if len(pos) > 1 {
		return "", usagef("eval: one FILE expected, got %d (see 'supersessiond eval -h')", len(pos))
	}
	return pos[0], nil
}

// aspects is eval --aspects: whole aspects decided as a live sweep would.
func (c *EvalCommand) aspects(file string, opt detect.AspectOptions, verbose bool) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	rep, err := detect.EvaluateAspects(f, opt)
	if err != nil {
		return fmt.Errorf("eval: read %s: %w", file, err)
	}
	if err := rep.Write(c.m.Stdout, verbose); err != nil {
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
	th := daemon.SettingsOf(loaded.Config).Engine.Thresholds
	min, review = th.Min, th.Review
	if minFlag.set {
		min = minFlag.value
	}
	if reviewFlag.set {
		review = reviewFlag.value
	}
	return min, review, nil
}
