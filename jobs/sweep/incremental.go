package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// change is a claimed change record.
type change struct {
	Seq         int64          `db:"seq"`
	AgentID     string         `db:"agent_id"`
	AspectID    string         `db:"aspect_id"`
	AttributeID sql.NullString `db:"attribute_id"`
}

// incremental examines what the change records name, a batch of aspects at
// a time: claim the records (all of an aspect's at once, so that no other
// daemon examines the aspect for the same change), decide, then consume
// the records. An aspect whose records name the attributes that changed is
// narrowed through its stored key digest to those attributes and the
// siblings their keys can meet (SPEC §11); the others are decided whole
// (loaded batchAttributes at a time, so that memory stays flat however
// large the claimed aspects are). It takes only records that existed when
// it started, so it ends however fast the agent writes; a change made while
// it runs stays recorded for the next pass. An aspect with a pair the LLM
// did not answer is recorded again, for the next pass. A daemon that dies
// leaves its claims to expire.
func (j *Job) incremental(ctx context.Context, cfg *config.Config, budget time.Duration, start time.Time, r *Report) error {
	var upto int64
	if err := j.db.GetContext(ctx, &upto, j.sql.lastChange); err != nil {
		return fmt.Errorf("sweep: read the change records: %w", err)
	}
	// No key cache (Pass.Reloads): a pass reads each changed aspect once.
	pass := j.newPass(r.RunID)
	for {
		if err := j.guard.Wait(ctx, Name); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
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
			r.Stopped = jobs.StoppedBudget
			return nil
		}
	}
	return j.pruneOutbox(ctx, cfg, start)
}

// aspectChanges gathers claimed records by aspect, in claim order. With
// the semantic fallback every aspect is examined whole: the pairs the LLM is
// asked about are not in the key digests.
func aspectChanges(claimed []change, whole bool) []supersession.AspectChanges {
	type key struct{ agent, aspect string }
	at := map[key]int{}
	var out []supersession.AspectChanges
	for _, c := range claimed {
		k := key{c.AgentID, c.AspectID}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, supersession.AspectChanges{AgentID: c.AgentID, AspectID: c.AspectID, Whole: whole})
		}
		if c.AttributeID.Valid && c.AttributeID.String != "" {
			out[i].IDs = append(out[i].IDs, c.AttributeID.String)
		} else {
			out[i].Whole = true
		}
	}
	return out
}

// examine decides the aspects of a batch of claimed change records and
// consumes the records, storing in the same transaction the key digest
// fragments of what it read: a change is consumed only once the keys that
// let later passes find the changed attribute are stored. A batch that
// fails consumes nothing and gives its claims back, so the next pass (the
// next tick, or another daemon) takes the records again; one cancelled
// leaves them to expire, as a process killed does.
func (j *Job) examine(ctx context.Context, cfg *config.Config, claimed []change, pass supersession.Pass, r *Report) error {
	seqs := make([]int64, 0, len(claimed))
	for _, c := range claimed {
		seqs = append(seqs, c.Seq)
	}
	stop := store.Renew(ctx, j.ClaimFor/3, func(ctx context.Context) error {
		_, err := j.db.ExecContext(ctx, j.sql.extend, pq.Array(seqs), j.holder, j.ClaimFor.Seconds())
		return err
	}, func(err error) {
		j.log.Warn("sweep: could not renew claims on change records; another daemon may take them over", "err", err)
	})
	ex, err := j.decideClaimed(ctx, cfg, claimed, pass, r)
	stop()
	if err == nil {
		err = j.consume(ctx, seqs, ex)
	}
	if err != nil {
		if ctx.Err() == nil { // cancelled: like a process killed, it leaves its claims to expire
			j.release(ctx, seqs)
		}
		return err
	}
	r.Changes += len(claimed)
	return nil
}

// examined is what deciding a batch of change records leaves to store with
// their consumption.
type examined struct {
	again          []string // aspects to record anew (the LLM owes them an answer)
	deltas, wholes []supersession.Fragment
	snapshot       string // before the aspects read whole were read
}

// decideClaimed decides the aspects the claimed records name: narrowed
// through their key digests where the records name attributes, whole
// (a bounded batch at a time) where not.
func (j *Job) decideClaimed(ctx context.Context, cfg *config.Config, claimed []change, pass supersession.Pass, r *Report) (*examined, error) {
	ex := &examined{}
	changes := aspectChanges(claimed, cfg.SemanticFallback())
	whole := changes
	if cfg.SemanticFallback() {
		r.countWhole("semantic", len(changes))
	} else {
		nar, err := j.engine.LoadChanged(ctx, changes)
		if err != nil {
			return nil, err
		}
		if len(nar.Groups) > 0 {
			focused := pass
			focused.Focus = nar.Focus
			if err := j.decide(ctx, cfg, nar.Groups, focused, r); err != nil {
				return nil, err
			}
			r.Narrowed += len(nar.Groups)
			for _, g := range nar.Groups {
				if g.Unsettled {
					ex.again = append(ex.again, g.AgentID, g.AspectID)
				}
				if f := supersession.DeltaFragment(g, nar.Focus); f != nil {
					ex.deltas = append(ex.deltas, *f)
				}
			}
		}
		for why, n := range nar.Why {
			r.countWhole(why, n)
		}
		whole = nar.Whole
	}
	if len(whole) == 0 {
		return ex, nil
	}
	// The fragments of aspects read whole replace those this snapshot saw.
	var err error
	if ex.snapshot, err = store.Snapshot(ctx, j.db); err != nil {
		return nil, fmt.Errorf("sweep: take a snapshot: %w", err)
	}
	agents, aspects := make([]string, len(whole)), make([]string, len(whole))
	for i, c := range whole {
		agents[i], aspects[i] = c.AgentID, c.AspectID
	}
	wholePass := pass
	wholePass.Digests = true
	err = j.engine.LoadAspectsBounded(ctx, agents, aspects, batchAttributes, runtime.GOMAXPROCS(0), func(groups []*supersession.Group) error {
		if err := j.decide(ctx, cfg, groups, wholePass, r); err != nil {
			return err
		}
		for _, g := range groups {
			if g.Unsettled {
				ex.again = append(ex.again, g.AgentID, g.AspectID)
			}
		}
		ex.wholes = append(ex.wholes, supersession.Fragments(groups)...)
		return nil
	})
	return ex, err
}

// consume deletes the decided records and stores the keys of what was
// decided, in one transaction.
func (j *Job) consume(ctx context.Context, seqs []int64, ex *examined) error {
	err := store.InTx(ctx, j.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, j.sql.consume, pq.Array(seqs), j.holder); err != nil {
			return err
		}
		if err := j.engine.StoreKeys(ctx, tx, ex.deltas, ""); err != nil {
			return err
		}
		if err := j.engine.StoreKeys(ctx, tx, ex.wholes, ex.snapshot); err != nil {
			return err
		}
		if len(ex.again) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, j.sql.record, pq.Array(ex.again))
		return err
	})
	if err != nil {
		return fmt.Errorf("sweep: consume change records: %w", err)
	}
	return nil
}

// release gives back the claims of a batch that failed, so that the next
// pass need not wait for them to expire. When even that fails (the server
// is gone), they expire.
func (j *Job) release(ctx context.Context, seqs []int64) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := j.db.ExecContext(rctx, j.sql.release, pq.Array(seqs), j.holder); err != nil {
		j.log.Warn("sweep: could not give back the claims of a failed batch; they expire", "claim_for", j.ClaimFor.String(), "err", err)
	}
}

func (r *Report) countWhole(why string, n int) {
	if r.ReadWhole == nil {
		r.ReadWhole = map[string]int{}
	}
	r.ReadWhole[why] += n
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
