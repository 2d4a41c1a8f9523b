package sweep

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// change is a claimed change record.
type change struct {
	Seq      int64  `db:"seq"`
	AgentID  string `db:"agent_id"`
	AspectID string `db:"aspect_id"`
}

// incremental examines the aspects the change records name, a batch at a
// time: claim the records (all of an aspect's at once, so that no other
// daemon examines the aspect for the same change), decide the aspects
// whole (loaded batchAttributes at a time, so that memory stays flat
// however large the claimed aspects are), then delete the records. It takes only records that existed when it
// started, so it ends however fast the agent writes; a change made while it
// runs stays recorded for the next pass. An aspect with a pair the LLM did
// not answer is recorded again, for the next pass. A daemon that dies leaves
// its claims to expire.
func (j *Job) incremental(ctx context.Context, cfg *config.Config, budget time.Duration, start time.Time, r *Report) error {
	var upto int64
	if err := j.db.GetContext(ctx, &upto, j.sql.lastChange); err != nil {
		return fmt.Errorf("sweep: read the change records: %w", err)
	}
	// No key cache (Pass.Reloads): a pass reads each changed aspect once,
	// hundreds of thousands of attributes for a Zipf-shaped graph, more than
	// the cache holds; it would only cost memory.
	pass := j.newPass(r.RunID)
	for {
		var claimed []change
		err := j.db.SelectContext(ctx, &claimed, j.sql.claim, j.holder, upto, j.BatchAspects, j.ClaimFor.Seconds())
		if err != nil {
			return fmt.Errorf("sweep: claim change records: %w", err)
		}
		if len(claimed) == 0 {
			break
		}
		if err := j.examine(ctx, cfg, claimed, pass, r); err != nil {
			return err
		}
		if budget > 0 && j.now().Sub(start) > budget {
			r.Stopped = job.StoppedBudget
			return nil
		}
	}
	return j.pruneOutbox(ctx, cfg, start)
}

// examine decides the aspects of a batch of claimed change records and
// consumes the records.
func (j *Job) examine(ctx context.Context, cfg *config.Config, claimed []change, pass supersession.Pass, r *Report) error {
	type key struct{ agent, aspect string }
	seen := map[key]bool{}
	var agents, aspects []string
	seqs := make([]int64, 0, len(claimed))
	for _, c := range claimed {
		seqs = append(seqs, c.Seq)
		if k := (key{c.AgentID, c.AspectID}); !seen[k] {
			seen[k] = true
			agents, aspects = append(agents, c.AgentID), append(aspects, c.AspectID)
		}
	}
	release := store.Renew(ctx, j.ClaimFor/3, func(ctx context.Context) error {
		_, err := j.db.ExecContext(ctx, j.sql.extend, pq.Array(seqs), j.holder, j.ClaimFor.Seconds())
		return err
	}, func(err error) {
		j.log.Warn("sweep: could not renew claims on change records; another daemon may take them over", "err", err)
	})
	var again []string // aspects to record anew (the LLM owes them an answer)
	err := j.engine.LoadAspectsBounded(ctx, agents, aspects, batchAttributes, runtime.GOMAXPROCS(0), func(groups []*supersession.Group) error {
		if err := j.decide(ctx, cfg, groups, pass, r); err != nil {
			return err
		}
		for _, g := range groups {
			if g.Unsettled {
				again = append(again, g.AgentID, g.AspectID)
			}
		}
		return nil
	})
	release()
	if err != nil {
		return err // the claims expire; the records are taken again
	}
	err = store.InTx(ctx, j.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, j.sql.consume, pq.Array(seqs), j.holder); err != nil {
			return err
		}
		if len(again) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, j.sql.record, pq.Array(again))
		return err
	})
	if err != nil {
		return fmt.Errorf("sweep: consume change records: %w", err)
	}
	r.Changes += len(claimed)
	return nil
}

// newPass is the engine's pass for a run.
func (j *Job) newPass(runID string) supersession.Pass {
	return supersession.Pass{
		Actor:     supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system", RequestID: runID},
		Source:    Name,
		Questions: supersession.NewBudget(supersession.DefaultQuestions),
		Brake:     j.braked,
	}
}
