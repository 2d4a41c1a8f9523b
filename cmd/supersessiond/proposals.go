package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// proposalFlags are the filters of `proposals`, shared by `review --all`
// and `apply --all` so the three select alike.
type proposalFlags struct {
	agent, status, signal *string
	minConf, maxConf      *float64
	set                   map[string]bool
}

// filterFlagNames are the filter flags (review and apply accept them only
// with --all).
var filterFlagNames = []string{"agent", "status", "signal", "min-confidence", "max-confidence"}

func addProposalFlags(fs *flag.FlagSet, statusHelp string) *proposalFlags {
	return &proposalFlags{
		agent:   fs.String("agent", "", "only this agent's proposals"),
		status:  fs.String("status", "", statusHelp+" ("+strings.Join(audit.Statuses, ", ")+")"),
		signal:  fs.String("signal", "", "only proposals carrying this signal (e.g. value_conflict, antonym)"),
		minConf: fs.Float64("min-confidence", -1, "only proposals at or above this confidence"),
		maxConf: fs.Float64("max-confidence", -1, "only proposals at or below this confidence"),
	}
}

// filter builds the filter from the flags the command line set.
func (p *proposalFlags) filter(fs *flag.FlagSet, cmd string) (audit.ProposalFilter, error) {
	p.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { p.set[f.Name] = true })
	f := audit.ProposalFilter{Agent: *p.agent, Status: *p.status, Signal: *p.signal}
	for _, c := range []struct {
		name string
		v    *float64
		dst  **float64
	}{{"min-confidence", p.minConf, &f.MinConfidence}, {"max-confidence", p.maxConf, &f.MaxConfidence}} {
		if !p.set[c.name] {
			continue
		}
		if *c.v < 0 || *c.v > 1 {
			return f, usagef("%s: --%s must be between 0 and 1, not %g", cmd, c.name, *c.v)
		}
		v := *c.v
		*c.dst = &v
	}
	if err := f.Validate(); err != nil {
		return f, usagef("%s: %v", cmd, err)
	}
	return f, nil
}

// anySet names the first filter flag given, "" when none.
func (p *proposalFlags) anySet() string {
	for _, n := range filterFlagNames {
		if p.set[n] {
			return n
		}
	}
	return ""
}

// ProposalsCommand prints the review queue: every supersession_proposal
// with its current status.
type ProposalsCommand struct{ m *Main }

func (c *ProposalsCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("proposals", "[--agent ID] [--status S] [--signal NAME] [--min-confidence F] [--max-confidence F] [--limit N] [--format table|json]")
	pf := addProposalFlags(fs, "only proposals with this status")
	limit := fs.Int("limit", 0, "at most this many proposals, newest first (default: all of them)")
	format := fs.String("format", "table", "table or json (one object per line, with what the status was derived from)")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("proposals: unexpected argument %q", positional[0])
	}
	f, err := pf.filter(fs, "proposals")
	if err != nil {
		return err
	}
	if *limit < 0 || (*limit == 0 && pf.set["limit"]) {
		return usagef("proposals: --limit must be at least 1")
	}
	if *format != "table" && *format != "json" {
		return usagef("proposals: --format must be table or json, not %q", *format)
	}
	env, err := c.m.open(ctx, *cfgPath, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	// Page through the queue, newest first, until the limit or the end: a
	// first shadow sweep leaves thousands, and "every pending one" is what
	// an operator asks for.
	var ps []audit.Proposal
	for {
		f.Limit = audit.DefaultBatch * 5
		if *limit > 0 {
			f.Limit = min(f.Limit, *limit-len(ps))
		}
		page, err := env.ops().Proposals(ctx, f)
		if err != nil {
			return err
		}
		ps = append(ps, page...)
		if len(page) < f.Limit || (*limit > 0 && len(ps) >= *limit) {
			break
		}
		f.Before = page[len(page)-1].ID
	}
	if *format == "json" {
		return audit.WriteProposalsJSON(c.m.Stdout, ps)
	}
	return audit.WriteProposalsTable(c.m.Stdout, ps)
}

// reviewAll is `review --all`.
func (c *ReviewCommand) reviewAll(ctx context.Context, cfgPath, who string, f audit.ProposalFilter, accept, dry bool, note string) error {
	if f.Status != "" && f.Status != audit.StatusPending {
		return usagef("review --all decides pending proposals only; --status %s selects none", f.Status)
	}
	env, err := c.m.openAs(ctx, cfgPath, who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	res, err := env.ops().ReviewAll(ctx, audit.BulkReview{Filter: f, Accept: accept, Note: note, DryRun: dry})
	out := c.m.Stdout
	verb := strings.TrimSuffix(res.Verdict, "ed")
	if dry {
		fmt.Fprintf(out, "dry run: would %s %s; nothing was written\n", verb, count(len(res.Decided), "pending proposal"))
		if len(res.Decided) > 0 {
			ps := make([]audit.Proposal, len(res.Decided))
			for i, d := range res.Decided {
				ps[i] = d.Proposal
			}
			if err := audit.WriteProposalsTable(out, ps); err != nil {
				return err
			}
		}
		return err
	}
	for _, d := range res.Decided {
		fmt.Fprintf(out, "proposal %s %s (history row %s)\n", d.Proposal.ID, res.Verdict, d.HistoryID)
	}
	for _, id := range res.Skipped {
		fmt.Fprintf(out, "proposal %s skipped: no longer pending (decided, applied or changed meanwhile)\n", id)
	}
	fmt.Fprintf(out, "%s %s", res.Verdict, count(len(res.Decided), "proposal"))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(out, "; %d skipped", len(res.Skipped))
	}
	if res.Selected == 0 {
		fmt.Fprint(out, ": no pending proposal matches")
	}
	fmt.Fprintln(out)
	return err
}

// applyAll is `apply --all`.
func (c *ApplyCommand) applyAll(ctx context.Context, cfgPath, who string, f audit.ProposalFilter, dry bool) error {
	env, err := c.m.openAs(ctx, cfgPath, who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	res, err := env.ops().ApplyAll(ctx, env.settings.Audit, audit.BulkApply{Filter: f, DryRun: dry})
	if res == nil {
		return err
	}
	out := c.m.Stdout
	status := f.Status
	if status == "" {
		status = audit.StatusAccepted
	}
	if dry {
		fmt.Fprintf(out, "dry run: would apply %s; nothing was written\n", count(len(res.Selected), status+" proposal"))
		if len(res.Selected) > 0 {
			if err := audit.WriteProposalsTable(out, res.Selected); err != nil {
				return err
			}
		}
		return err
	}
	var failures []error
	for _, r := range res.Results {
		if r.Err != nil {
			fmt.Fprintf(out, "proposal %s: not applied: %v\n", r.ProposalID, r.Err)
			failures = append(failures, r.Err)
			continue
		}
		fmt.Fprintf(out, "proposal %s: applied (attribute_superseded %s)\n", r.ProposalID, r.HistoryID)
	}
	fmt.Fprintf(out, "applied %d of %d %s proposals\n", len(res.Results)-len(failures), len(res.Results), status)
	if err != nil {
		return err
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d of %d proposals not applied: %w", len(failures), len(res.Results), errors.Join(failures...))
	}
	return nil
}

// count says "1 proposal", "2 proposals".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
