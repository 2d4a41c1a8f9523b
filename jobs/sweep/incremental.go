package sweep

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// incremental examines what the change records name, a batch of aspects at
// a time, through the engine's change feed (supersession.Feed): claim the
// records (all of an aspect's at once, so that no other daemon examines the
// aspect for the same change), decide, then store the keys of what was
// decided and consume the records in one statement. An aspect whose
// records name the attributes that changed is narrowed through its key
// digest to those attributes and the siblings their keys can meet (SPEC
// §11); the others are decided whole (read batchAttributes at a time, so
// that memory stays flat however large the claimed aspects are). It takes
// only records that existed when it started, so it ends however fast the
// agent writes; a change made while it runs stays recorded for the next
// pass. An aspect with a pair the LLM did not answer is recorded again,
// for the next pass. A daemon that dies leaves its claims to expire.
func (j *Job) incremental(ctx context.Context, cfg Settings, budget time.Duration, start time.Time, r *Report) error {
	upto, err := j.feed.Last(ctx)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	// No key cache (Pass.Reloads): a pass reads each changed aspect once.
	pass := j.newPass(r.RunID)
	read := supersession.Reading{Whole: cfg.Engine.SemanticFallback, Bound: batchAttributes, Analyze: runtime.GOMAXPROCS(0)}
	for {
		if err := j.guard.Wait(ctx, Name); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		b, err := j.feed.Claim(ctx, upto, j.BatchAspects, j.ClaimFor)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if b.Empty() {
			break
		}
		x, err := j.feed.Examine(ctx, b, read, func(ctx context.Context, parts []supersession.Part) error {
			return j.decideParts(ctx, cfg, parts, pass, r)
		})
		if err != nil {
			return err
		}
		r.Changes += b.Claimed()
		r.Narrowed += x.Narrowed
		for why, n := range x.ReadWhole {
			r.countWhole(why, n)
		}
		if budget > 0 && j.now().Sub(start) > budget {
			r.Stopped = jobs.StoppedBudget
			return nil
		}
	}
	return j.pruneOutbox(ctx, cfg, start)
}

// decideParts decides what the feed loaded: the narrowed aspects with the
// changes as the focus, the aspects read whole as a full pass decides them
// (every pair, and their complete key digests).
func (j *Job) decideParts(ctx context.Context, cfg Settings, parts []supersession.Part, pass supersession.Pass, r *Report) error {
	for _, p := range parts {
		part := pass
		if p.Whole {
			part.Digests = true
		} else {
			part.Focus = p.Focus
		}
		if err := j.decide(ctx, cfg, p.Groups, part, r); err != nil {
			return err
		}
	}
	return nil
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
