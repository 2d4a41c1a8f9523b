package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// HistoryCommand prints the audit trail from memory_history, newest first.
type HistoryCommand struct{ m *Main }

func (c *HistoryCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("history", "[--agent ID] [--event NAME] [--since DUR|RFC3339] [--limit N] [--format table|json]")
	agent := fs.String("agent", "", "only this agent's rows (metadata agent_id)")
	event := fs.String("event", "", "only this event: one of "+strings.Join(audit.Events, ", "))
	since := fs.String("since", "", "only rows newer than a duration ago (24h, 7d) or an RFC 3339 time")
	limit := fs.Int("limit", 50, "at most this many rows")
	format := fs.String("format", "table", "table or json (one object per line, every column)")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("history: unexpected argument %q", positional[0])
	}
	if *event != "" && !slices.Contains(audit.Events, *event) {
		return usagef("history: unknown --event %q; known events: %s", *event, strings.Join(audit.Events, ", "))
	}
	f := audit.Filter{Agent: *agent, Event: *event, Limit: *limit}
	if *limit < 1 {
		return usagef("history: --limit must be at least 1")
	}
	if *format != "table" && *format != "json" {
		return usagef("history: --format must be table or json, not %q", *format)
	}
	if *since != "" {
		if f.Since, err = audit.ParseSince(*since, time.Now()); err != nil {
			return usagef("history: %v", err)
		}
	}
	env, err := c.m.open(ctx, *cfgPath, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	entries, err := env.ops().History(ctx, f)
	if err != nil {
		return err
	}
	if *format == "json" {
		return audit.WriteJSON(c.m.Stdout, entries)
	}
	return audit.WriteTable(c.m.Stdout, entries)
}

// ReviewCommand records an accept/reject decision on a proposal.
type ReviewCommand struct{ m *Main }

func (c *ReviewCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("review", "HISTORY_ID (--accept|--reject) [--note TEXT] [--operator NAME]\n       supersessiond review --all (--accept|--reject) [filters of proposals] [--dry-run] [--note TEXT] [--operator NAME]")
	accept := fs.Bool("accept", false, "accept the proposal")
	reject := fs.Bool("reject", false, "reject the proposal (automatic jobs will never apply this pair)")
	note := fs.String("note", "", "why, for the audit trail")
	all := fs.Bool("all", false, "decide every pending proposal the filters select, instead of one HISTORY_ID")
	dry := fs.Bool("dry-run", false, "with --all: print what would be decided and write nothing")
	pf := addProposalFlags(fs, "with --all: only pending proposals are decided")
	who := operatorFlag(fs)
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *accept == *reject {
		return usagef("review: give exactly one of --accept or --reject")
	}
	f, err := pf.filter(fs, "review")
	if err != nil {
		return err
	}
	if *all {
		if len(positional) > 0 {
			return usagef("review: --all decides what the filters select; give no HISTORY_ID with it")
		}
		return c.reviewAll(ctx, *cfgPath, *who, f, *accept, *dry, *note)
	}
	if n := pf.anySet(); n != "" {
		return usagef("review: --%s needs --all", n)
	}
	if *dry {
		return usagef("review: --dry-run needs --all")
	}
	if len(positional) != 1 {
		return usagef("review: give exactly one HISTORY_ID, or --all with filters (see `supersessiond proposals --status pending`)")
	}
	env, err := c.m.openAs(ctx, *cfgPath, *who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	id, err := env.ops().Review(ctx, positional[0], *accept, *note)
	if err != nil {
		return err
	}
	verb := "rejected"
	if *accept {
		verb = "accepted"
	}
	fmt.Fprintf(c.m.Stdout, "proposal %s %s (history row %s)\n", positional[0], verb, id)
	return nil
}

// ApplyCommand applies proposals as real supersessions.
type ApplyCommand struct{ m *Main }

func (c *ApplyCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("apply", "HISTORY_ID... [--operator NAME]\n       supersessiond apply --all [filters of proposals] [--dry-run] [--operator NAME]")
	all := fs.Bool("all", false, "apply every proposal the filters select (accepted ones unless --status says otherwise)")
	dry := fs.Bool("dry-run", false, "with --all: print what would be applied and write nothing")
	pf := addProposalFlags(fs, "with --all: apply proposals with this status (default accepted)")
	who := operatorFlag(fs)
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	f, err := pf.filter(fs, "apply")
	if err != nil {
		return err
	}
	if *all {
		if len(positional) > 0 {
			return usagef("apply: --all applies what the filters select; give no HISTORY_ID with it")
		}
		return c.applyAll(ctx, *cfgPath, *who, f, *dry)
	}
	if n := pf.anySet(); n != "" {
		return usagef("apply: --%s needs --all", n)
	}
	if *dry {
		return usagef("apply: --dry-run needs --all")
	}
	if len(positional) == 0 {
		return usagef("apply: give one or more proposal HISTORY_IDs, or --all (see `supersessiond proposals --status accepted`)")
	}
	env, err := c.m.openAs(ctx, *cfgPath, *who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	var failures []error
	for _, r := range env.ops().Apply(ctx, env.settings.Audit, positional) {
		if r.Err != nil {
			fmt.Fprintf(c.m.Stdout, "proposal %s: not applied: %v\n", r.ProposalID, r.Err)
			failures = append(failures, r.Err)
			continue
		}
		fmt.Fprintf(c.m.Stdout, "proposal %s: applied (attribute_superseded %s)\n", r.ProposalID, r.HistoryID)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d of %d proposals not applied: %w", len(failures), len(positional), errors.Join(failures...))
	}
	return nil
}

// UndoCommand reverts one attribute_superseded event.
type UndoCommand struct{ m *Main }

func (c *UndoCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("undo", "HISTORY_ID [--operator NAME]")
	who := operatorFlag(fs)
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("undo: give exactly one attribute_superseded HISTORY_ID (see `supersessiond history --event attribute_superseded`)")
	}
	env, err := c.m.openAs(ctx, *cfgPath, *who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	id, err := env.ops().Undo(ctx, env.settings.Audit, positional[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(c.m.Stdout, "supersession %s undone (supersession_reverted %s)\n", positional[0], id)
	fmt.Fprintln(c.m.Stdout, "the attribute is active again; no sibling recorded up to now will retire it automatically, "+
		"a newer one still may (protect pins it for good)")
	return nil
}

// SupersedeCommand supersedes attributes by hand, atomically.
type SupersedeCommand struct{ m *Main }

func (c *SupersedeCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("supersede", "--agent ID --by NEW_ID OLD_ID... [--force-chain] [--reason TEXT] [--operator NAME]")
	agent := fs.String("agent", "", "the agent the attributes belong to (required)")
	by := fs.String("by", "", "the attribute that supersedes the others (required)")
	force := fs.Bool("force-chain", false, "re-point OLD attributes that are already superseded to NEW")
	reason := fs.String("reason", "", "why, for the audit trail")
	who := operatorFlag(fs)
	olds, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *agent == "" || *by == "" || len(olds) == 0 {
		return usagef("supersede: --agent, --by and at least one OLD_ID are required")
	}
	env, err := c.m.openAs(ctx, *cfgPath, *who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	applied, err := env.ops().Supersede(ctx, env.settings.Audit, audit.SupersedeRequest{Agent: *agent, New: *by, Olds: olds, ForceChain: *force, Reason: *reason})
	if err != nil {
		return err
	}
	ids := make([]string, len(applied))
	for i, a := range applied {
		ids[i] = a.OldAttributeID + " (" + a.HistoryID + ")"
	}
	fmt.Fprintf(c.m.Stdout, "superseded by %s: %s\n", *by, strings.Join(ids, ", "))
	return nil
}

// ProtectCommand pins or unpins an attribute.
type ProtectCommand struct{ m *Main }

func (c *ProtectCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("protect", "ATTR_ID [--off] [--operator NAME]")
	off := fs.Bool("off", false, "remove the protection")
	who := operatorFlag(fs)
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("protect: give exactly one ATTR_ID")
	}
	env, err := c.m.openAs(ctx, *cfgPath, *who, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	changed, err := env.ops().Protect(ctx, env.settings.Audit, positional[0], !*off)
	if err != nil {
		return err
	}
	state := "protected"
	if *off {
		state = "not protected"
	}
	if !changed {
		fmt.Fprintf(c.m.Stdout, "attribute %s was already %s\n", positional[0], state)
		return nil
	}
	fmt.Fprintf(c.m.Stdout, "attribute %s is now %s\n", positional[0], state)
	return nil
}

// DependentsCommand lists the live Honcho documents that cite retired ones.
type DependentsCommand struct{ m *Main }

func (c *DependentsCommand) Run(ctx context.Context, args []string) error {
	fs, cfgPath := c.m.newFlagSet("dependents", "[--workspace NAME] [--limit N] [--json]")
	workspace := fs.String("workspace", "", "only this workspace's documents")
	limit := fs.Int("limit", 50, "at most this many documents")
	asJSON := fs.Bool("json", false, "one JSON object per line")
	positional, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("dependents: unexpected argument %q", positional[0])
	}
	if *limit < 1 {
		return usagef("dependents: --limit must be at least 1")
	}
	env, err := c.m.open(ctx, *cfgPath, schema.Supersession)
	if err != nil {
		return err
	}
	defer env.db.Close()
	deps, err := env.ops().Dependents(ctx, *workspace, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		for _, d := range deps {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return nil
	}
	if len(deps) == 0 {
		fmt.Fprintln(c.m.Stdout, "no live document cites a retired one")
		return nil
	}
	for _, d := range deps {
		fmt.Fprintf(c.m.Stdout, "%s  %s %s→%s  cites retired %s  %s\n", d.ID, d.Workspace, d.Observer, d.Observed,
			strings.Join(d.StaleBasis, ", "), d.Content)
	}
	return nil
}
