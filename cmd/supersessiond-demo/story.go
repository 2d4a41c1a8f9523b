package main

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

//go:embed seed.sql
var seedSQL string

func (d *demo) seed(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, seedSQL); err != nil {
		return fmt.Errorf("seed the demo database: %w", err)
	}
	return d.showCounts(ctx, "seeded")
}

// showCounts prints what the database holds, per agent.
func (d *demo) showCounts(ctx context.Context, label string) error {
	type row struct {
		Agent      string `db:"agent_id"`
		Active     int    `db:"active"`
		Superseded int    `db:"superseded"`
		Constraint int    `db:"constraints"`
		Protected  int    `db:"protected"`
	}
	var rows []row
	err := d.db.SelectContext(ctx, &rows, `
		SELECT agent_id,
		       count(*) FILTER (WHERE status = 'active' AND kind = 'attribute') AS active,
		       count(*) FILTER (WHERE status = 'superseded') AS superseded,
		       count(*) FILTER (WHERE kind = 'constraint') AS constraints,
		       count(*) FILTER (WHERE protected) AS protected
		FROM entity_attributes GROUP BY agent_id ORDER BY agent_id`)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nattributes (%s):\n", label)
	tw := tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  AGENT\tACTIVE\tSUPERSEDED\tCONSTRAINTS\tPROTECTED")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\n", r.Agent, r.Active, r.Superseded, r.Constraint, r.Protected)
	}
	return tw.Flush()
}

func (d *demo) chapters() []func(context.Context) error {
	return []func(context.Context) error{
		d.shadowSweep,
		d.review,
		d.goLive,
		d.compaction,
		d.tombstones,
		d.inline,
		d.finale,
	}
}

func (d *demo) shadowSweep(ctx context.Context) error {
	d.title("3. Shadow mode first: the sweep only proposes (memory.pipelineV2.shadowMode: true)")
	if err := d.sh("sweep", "--once"); err != nil {
		return err
	}
	if err := d.sh("history", "--event", "supersession_proposal"); err != nil {
		return err
	}
	d.say("\nThe review queue: each proposal with its status, derived from history:")
	if err := d.sh("proposals", "--status", "pending"); err != nil {
		return err
	}
	return d.showCounts(ctx, "after the shadow sweep: nothing changed")
}

// proposalFor finds the proposal about an old attribute.
func (d *demo) proposalFor(ctx context.Context, oldID string) (string, error) {
	var id string
	err := d.db.GetContext(ctx, &id, `SELECT id FROM memory_history WHERE event = 'supersession_proposal'
		AND metadata ->> 'old_attribute_id' = $1`, oldID)
	if err != nil {
		return "", fmt.Errorf("no proposal for %s: %w", oldID, err)
	}
	return id, nil
}

func (d *demo) review(ctx context.Context) error {
	d.title("4. Review: accept, reject, apply, and undo a mistake")
	accept, err := d.proposalFor(ctx, "attr-prefs-1")
	if err != nil {
		return err
	}
	reject, err := d.proposalFor(ctx, "attr-hob-2")
	if err != nil {
		return err
	}
	if err := d.sh("review", accept, "--accept", "--note", "Sam switched to light mode in August"); err != nil {
		return err
	}
	if err := d.sh("review", reject, "--reject", "--note", "Sam trains for both distances"); err != nil {
		return err
	}
	d.say("\nReviewing twice is refused (exit 4):")
	if err := d.shExpect(4, "review", reject, "--accept"); err != nil {
		return err
	}
	if err := d.sh("apply", accept); err != nil {
		return err
	}
	var superseded string
	if err := d.db.GetContext(ctx, &superseded, `SELECT id FROM memory_history WHERE event = 'attribute_superseded'
		AND metadata ->> 'proposal_id' = $1`, accept); err != nil {
		return err
	}
	d.say("\nThat was premature; take it back (the row is restored from the undo snapshot):")
	if err := d.sh("undo", superseded); err != nil {
		return err
	}
	d.say("\nA second undo is refused, and so is anything automatic that would redo it:")
	if err := d.shExpect(4, "undo", superseded); err != nil {
		return err
	}
	d.say("\nAt scale, decide a whole filter at once. A dry run first, then the decisions (one history row each);")
	d.say("a second run finds nothing left to decide:")
	if err := d.sh("review", "--all", "--accept", "--agent", "assistant-kim", "--signal", "value_conflict", "--dry-run"); err != nil {
		return err
	}
	if err := d.sh("review", "--all", "--accept", "--agent", "assistant-kim", "--signal", "value_conflict", "--note", "Kim confirmed both"); err != nil {
		return err
	}
	if err := d.sh("review", "--all", "--accept", "--agent", "assistant-kim", "--signal", "value_conflict"); err != nil {
		return err
	}
	if err := d.sh("proposals", "--agent", "assistant-kim"); err != nil {
		return err
	}
	d.say("\nThe emergency brake refuses every change (mutationsFrozen):")
	d.env = append(d.env, "SUPERSESSIOND_MEMORY__PIPELINEV2__MUTATIONSFROZEN=true")
	err = d.shExpect(4, "supersede", "--agent", "assistant-sam", "--by", "attr-home-3", "attr-home-1", "--reason", "moved")
	d.env = d.env[:len(d.env)-1]
	return err
}

func (d *demo) goLive(ctx context.Context) error {
	d.title("5. Go live: shadowMode: false in agent.yaml, and the sweep applies")
	if err := d.writeConfig(false, 0); err != nil {
		return err
	}
	if err := d.sh("sweep", "--once"); err != nil {
		return err
	}
	if err := d.sh("history", "--event", "attribute_superseded", "--limit", "10"); err != nil {
		return err
	}
	d.say("\nEach supersession is also one line in the log (see the daemon's log in step 8); the commands")
	d.say("on this page run with log.level warn, so that their output is all you read here.")
	d.say("\nA second live sweep finds nothing left to do:")
	if err := d.sh("sweep", "--once"); err != nil {
		return err
	}
	return d.showCounts(ctx, "after the live sweep")
}

func (d *demo) compaction(ctx context.Context) error {
	d.title("6. Compaction retries: no trimmed conversation is lost")
	d.say("maintenance.llm points at the demo's stand-in endpoint: no model is reachable here, so it")
	d.say("returns the user's own statements from the range as the facts. Use Ollama, vLLM or OpenAI for real.")
	d.say("\nIn shadow mode it only reports:")
	d.env = append(d.env, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")
	err := d.sh("compact", "--once")
	d.env = d.env[:len(d.env)-1]
	if err != nil {
		return err
	}
	d.say("\nLive:")
	if err := d.sh("compact", "--once"); err != nil {
		return err
	}
	type mem struct {
		Type    string `db:"type"`
		Source  string `db:"source_id"`
		Content string `db:"content"`
	}
	var mems []mem
	if err := d.db.SelectContext(ctx, &mems, `SELECT type, source_id, content FROM memories
		WHERE source_type = 'compaction' OR type = 'compaction_summary' ORDER BY type, created_at, content`); err != nil {
		return err
	}
	d.prompt(`psql -c "SELECT type, source_id, content FROM memories WHERE source_type = 'compaction' OR type = 'compaction_summary'"`)
	tw := tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tEVENT\tCONTENT")
	for _, m := range mems {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Type, m.Source, clipText(m.Content, 110))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return d.sh("history", "--event", "compaction_retried", "--limit", "3")
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (d *demo) tombstones(ctx context.Context) error {
	d.title("7. Tombstones: keep what live documents cite, delete the rest")
	if err := d.showDocuments(ctx, "before"); err != nil {
		return err
	}
	d.say("\nIn shadow mode it only counts:")
	d.env = append(d.env, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")
	err := d.sh("reconcile", "--once")
	d.env = d.env[:len(d.env)-1]
	if err != nil {
		return err
	}
	d.say("\nLive:")
	if err := d.sh("reconcile", "--once"); err != nil {
		return err
	}
	if err := d.showDocuments(ctx, "after"); err != nil {
		return err
	}
	d.say("\nA second pass changes nothing: preserved tombstones do not re-enter triage.")
	return d.sh("reconcile", "--once")
}

func (d *demo) showDocuments(ctx context.Context, label string) error {
	type doc struct {
		ID        string  `db:"id"`
		Workspace string  `db:"workspace_name"`
		State     string  `db:"state"`
		Cites     *string `db:"cites"`
	}
	var docs []doc
	if err := d.db.SelectContext(ctx, &docs, `
		SELECT id, workspace_name,
		       CASE WHEN deleted_at IS NULL THEN 'live'
		            WHEN tombstone_preserved_at IS NOT NULL THEN 'tombstone (kept' || CASE WHEN embedding IS NULL THEN ', no embedding)' ELSE ')' END
		            ELSE 'soft-deleted ' || CASE WHEN superseded_by IS NOT NULL THEN '(superseded by ' || superseded_by || ')' ELSE '' END
		       END AS state,
		       source_ids::text AS cites
		FROM documents ORDER BY workspace_name, id`); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\ndocuments (%s):\n", label)
	tw := tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tWORKSPACE\tSTATE\tCITES")
	for _, x := range docs {
		cites := "-"
		if x.Cites != nil {
			cites = *x.Cites
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", x.ID, x.Workspace, x.State, cites)
	}
	return tw.Flush()
}

func (d *demo) inline(ctx context.Context) error {
	d.title("8. The daemon: the inline hook decides an attribute the moment it is classified")
	dm, err := d.startDaemon()
	if err != nil {
		return err
	}
	d.say("\nThe agent's classifier gives 'Lives in Lisbon' its aspect:")
	d.prompt(`psql -c "UPDATE entity_attributes SET aspect_id = 'sam-home' WHERE id = 'attr-home-4'"`)
	start := time.Now()
	if _, err := d.db.ExecContext(ctx, `UPDATE entity_attributes SET aspect_id = 'sam-home' WHERE id = 'attr-home-4'`); err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var n int
		if err := d.db.GetContext(ctx, &n, `SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'
			AND changed_by = 'supersessiond:inline'`); err != nil {
			return err
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the inline hook did not decide within 15s:\n%s", dm.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprint(d.out, indent(fmt.Sprintf("decided %s after the classification", time.Since(start).Round(time.Millisecond))))
	if err := d.sh("history", "--limit", "1"); err != nil {
		return err
	}
	body, _ := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", dm.port))
	d.say("\nFrom /metrics:")
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "supersessiond_inline_lag_seconds_count") || strings.HasPrefix(l, "supersessiond_inline_lag_seconds_sum") ||
			strings.HasPrefix(l, "supersessiond_supersessions_total") || strings.HasPrefix(l, "supersessiond_ready ") {
			fmt.Fprint(d.out, indent(l))
		}
	}
	if err := dm.stop(d); err != nil {
		return err
	}
	d.say("\nThe daemon's log (text format here; json by default):")
	fmt.Fprint(d.out, indent(lastLines(dm.logs.String(), 8)))
	return nil
}

func (d *demo) finale(ctx context.Context) error {
	d.title("What the daemon found and did")
	if err := d.showCounts(ctx, "at the end"); err != nil {
		return err
	}
	type ev struct {
		Event string `db:"event"`
		N     int    `db:"n"`
	}
	var evs []ev
	if err := d.db.SelectContext(ctx, &evs, `SELECT event, count(*) AS n FROM memory_history GROUP BY event ORDER BY event`); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "\nmemory_history events:")
	tw := tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	for _, e := range evs {
		fmt.Fprintf(tw, "  %s\t%d\n", e.Event, e.N)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	type st struct {
		What string `db:"what"`
		N    int    `db:"n"`
	}
	var states []st
	if err := d.db.SelectContext(ctx, &states, `
		SELECT 'compaction events ' || status AS what, count(*) AS n FROM compaction_events GROUP BY status
		UNION ALL
		SELECT 'documents ' || CASE WHEN deleted_at IS NULL THEN 'live' WHEN tombstone_preserved_at IS NOT NULL THEN 'kept as tombstones'
		                            ELSE 'soft-deleted, not yet due' END, count(*) FROM documents GROUP BY 1
		ORDER BY 1`); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "\ncompaction and documents:")
	tw = tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	for _, x := range states {
		fmt.Fprintf(tw, "  %s\t%d\n", x.What, x.N)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	d.say("\nUntouched, as they must be: constraints (never superseded), the protected peanut allergy,")
	d.say("Kim's row pointing at Sam's aspect (another agent), Speaks French / Speaks Japanese (many values),")
	d.say("and the vetoed pairs (the rejected marathon proposal, the undone dark→light mode).")
	d.say("Married → divorced stayed a review-band proposal (confidence 0.6): a human decides.")
	d.say("'Apartment hunting with Sam' → 'Broke up with Sam' needs the LLM fallback (supersessionSemanticFallback with a real model).")
	d.say("The compaction queued two minutes ago is left alone until it is stale; the document deleted a minute ago until minAge.")
	d.say("\nWhat the reviews say about the judgment, per signal: the evidence for going live and for supersessionMinConfidence")
	d.say("(the console at /ui/stats shows the same, with a chart per signal):")
	return d.sh("stats")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
