package sweep

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// cursor is a full pass in progress: the keyset position, when the pass
// started, the snapshot it started with (the change records it saw are
// covered by it) and the judgment it decides with.
type cursor struct {
	supersession.Cursor
	PassStartedAt time.Time `json:"pass_started_at"`
	Snapshot      string    `json:"snapshot,omitempty"`
	Judgment      string    `json:"judgment,omitempty"`
}

// Started reports whether a full pass is in progress.
func (c cursor) Started() bool { return c.AgentID != "" || c.AspectID != "" }

// lastFull is the record of the last completed full pass over all agents.
type lastFull struct {
	CompletedAt time.Time `json:"started_at"` // its start: it covered what existed then
	Judgment    string    `json:"judgment"`
}

// state is what the sweep keeps in the daemon's state table.
type state struct {
	cursor cursor
	last   lastFull
}

// State records, by name.
const (
	cursorName = "sweep_cursor"
	lastName   = "sweep_last_full"
)

func (j *Job) loadState(ctx context.Context) (state, error) {
	var st state
	for name, into := range map[string]any{cursorName: &st.cursor, lastName: &st.last} {
		var raw []byte
		err := j.db.GetContext(ctx, &raw, j.sql.LoadState, name)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return st, fmt.Errorf("sweep: load %s: %w", name, err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			j.log.Warn("sweep: unreadable state record; starting afresh", "name", name, "err", err)
		}
	}
	return st, nil
}

func (j *Job) saveCursor(ctx context.Context, c cursor) error {
	raw, _ := json.Marshal(c)
	if _, err := j.db.ExecContext(ctx, j.sql.SaveState, cursorName, string(raw)); err != nil {
		return fmt.Errorf("sweep: save cursor: %w", err)
	}
	return nil
}

// full is a full pass. A scheduled one resumes at the stored cursor (unless
// the judgment changed since it started), saves the cursor after every
// batch and stops at the budget; a CLI one starts afresh and leaves the
// cursor alone. A complete pass over all agents is recorded, and the change
// records its start's snapshot saw are deleted: the pass read every aspect
// after they were committed.
func (j *Job) full(ctx context.Context, cfg Settings, st state, agent string, budget time.Duration, scheduled bool, start time.Time, r *Report) error {
	cur := st.cursor
	if !scheduled || cur.Judgment != j.judgment(cfg) {
		cur = cursor{}
	}
	r.Resumed = cur.Started()
	if !r.Resumed {
		cur = cursor{PassStartedAt: start.UTC(), Judgment: j.judgment(cfg)}
	}
	if !r.Resumed && !r.DryRun {
		var err error
		if cur.Snapshot, err = store.Snapshot(ctx, j.db); err != nil {
			return fmt.Errorf("sweep: take the pass's snapshot: %w", err)
		}
	}
	pass := j.newPass(r.RunID)
	pass.DryRun = r.DryRun
	pass.Digests = !r.DryRun // the incremental passes' key index (SPEC §11)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches, scanned := j.read(ctx, cur.Cursor, agent, j.engine.PlanAhead(ctx, cfg.Engine, pass))
	stop := func() { // ends the read ahead
		cancel()
		for range batches {
		}
		<-scanned
	}
	for groups := range batches {
		err := j.decide(ctx, cfg, groups, pass, r)
		if err == nil && !pass.DryRun {
			err = j.feed.Unsettled(ctx, groups)
		}
		if err == nil && pass.Digests {
			err = j.engine.StoreKeys(ctx, j.db, supersession.Fragments(groups), "")
			for _, g := range groups {
				g.Keys = nil // stored: the batch may stay referenced while the next is read
			}
		}
		if err == nil {
			last := groups[len(groups)-1]
			cur.AgentID, cur.AspectID = last.AgentID, last.AspectID
			if scheduled {
				err = j.saveCursor(ctx, cur)
			}
		}
		if err != nil {
			stop()
			return err
		}
		// Checked after a batch, so every run makes progress.
		if budget > 0 && j.now().Sub(start) > budget {
			r.Stopped = jobs.StoppedBudget
			stop()
			return nil
		}
	}
	if err := <-scanned; err != nil {
		return err
	}
	if agent != "" || r.DryRun {
		return nil
	}
	if err := j.completeFull(ctx, cur, scheduled); err != nil {
		return err
	}
	j.log.Info("sweep: full pass complete", "pass_started_at", cur.PassStartedAt, "judgment", cur.Judgment)
	return j.pruneOutbox(ctx, cfg, cur.PassStartedAt)
}

// completeFull records a complete full pass over all agents, in one
// transaction: the change records it covered deleted, the key digests it
// replaced deleted, its record written, the scheduled runs' cursor reset
// (when it was theirs).
func (j *Job) completeFull(ctx context.Context, cur cursor, scheduled bool) error {
	raw, _ := json.Marshal(lastFull{CompletedAt: cur.PassStartedAt, Judgment: cur.Judgment})
	err := store.InTx(ctx, j.db, func(tx *sqlx.Tx) error {
		if err := j.feed.DropSeen(ctx, tx, cur.Snapshot); err != nil {
			return err
		}
		if err := j.engine.DropKeys(ctx, tx, cur.Snapshot); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, j.sql.SaveState, lastName, string(raw)); err != nil {
			return err
		}
		if scheduled {
			_, err := tx.ExecContext(ctx, j.sql.SaveState, cursorName, `{}`)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sweep: record the complete pass: %w", err)
	}
	return nil
}

// decide decides and writes one batch, adding to the report, once the
// database has connection slots to spare (the guard).
func (j *Job) decide(ctx context.Context, cfg Settings, groups []*supersession.Group, pass supersession.Pass, r *Report) error {
	if err := j.guard.Wait(ctx, Name); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if j.examined != nil {
		for _, g := range groups {
			j.examined(g.AgentID, g.AspectID)
		}
	}
	t, err := j.engine.Process(ctx, cfg.Engine, groups, pass)
	r.Tally.Add(t)
	if err == nil {
		r.Batches++
	}
	return err
}

// read scans the aspects after the cursor in the background, one batch
// ahead of the decisions: reading, analysing and (with ahead) planning the
// next batch overlaps writing this one. The channel closes when the scan ends; its error (nil
// at the end of the aspects) is then sent on the second channel.
func (j *Job) read(ctx context.Context, from supersession.Cursor, agent string, ahead *supersession.Ahead) (<-chan []*supersession.Group, <-chan error) {
	batches := make(chan []*supersession.Group, 1)
	scanned := make(chan error, 1)
	lim := supersession.Limits{Aspects: j.BatchAspects, Attributes: batchAttributes, ChunkRows: j.ChunkRows,
		Analyze: runtime.GOMAXPROCS(0), Plan: ahead}
	if j.engine.Store() != schema.StoreAttributes {
		// A stack's documents are paragraphs where attributes are phrases:
		// half as many to a batch keeps a pass's memory where an attribute
		// graph's is (a Honcho scope of 36,000 observations still comes whole).
		lim.Attributes, lim.ChunkRows = batchAttributes/2, j.ChunkRows/2
	}
	go func() {
		defer close(batches)
		scanned <- j.engine.Scan(ctx, from, agent, lim, func(groups []*supersession.Group) error {
			select {
			case batches <- groups:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return batches, scanned
}

// pruneOutbox drops the inline hook's outbox rows classified before a
// complete pass over all agents started, while the hook is off: nobody else
// drains it, and the pass decided everything they record.
func (j *Job) pruneOutbox(ctx context.Context, cfg Settings, before time.Time) error {
	if cfg.InlineHook || j.PruneOutbox == nil {
		return nil
	}
	if err := j.PruneOutbox(ctx, before); err != nil {
		return fmt.Errorf("sweep: prune the inline outbox: %w", err)
	}
	return nil
}
