package supersession

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/store"
)

// The background asker (SPEC §13: the LLM never holds up what the
// heuristics decide). A reader that must not wait for the LLM (the inline
// hook) decides its batch on the narrowed read, heuristics only, as it
// would without the fallback, and hands what it decided to the asker
// (Reading.Ask): the aspects, and in each the attributes decided. The
// asker reads those aspects whole, off the reader's path, finds the pairs
// of those attributes the heuristics leave to the LLM (focusPairs) and
// asks their windows through resolve (claims, budgets, backoff, as any
// pass).
//
// Nothing is lost on the way, across restarts: the statement that consumes
// the batch's change records (keepSQL) records each aspect anew as owed an
// answer (a record naming the attribute "", which a reader that narrows
// passes over: nothing in the aspect changed), claimed by the hand-off's
// own token while the asker works on it. When the asker is done, an aspect
// it had nothing to ask about, or whose answers decide nothing the
// heuristics did not, has its record deleted; one whose windows were not
// all answered (over budget, claimed by another asker, backing off,
// failed), or whose answers call for a semantic decision, has its claim
// given back, and the sweep reads it whole and decides with the answers
// stored (an aspect of at most maxStatements is one window, the same
// question the sweep's plan asks; in a larger one the sweep's windows may
// differ, and it asks them). A process that dies leaves the claims to expire, and the sweep
// asks. When the asker already holds backgroundBatches batches, the
// records are made unclaimed (deferred: later) for the sweep at once.

// OwedAttribute is the attribute_id of a change record that says an aspect
// is owed the LLM's answer: nothing in it changed.
const OwedAttribute = ""

// Asking is one batch's hand-off to the background asker, from before the
// batch's records are consumed (Engine.AskLater) to the asker's end.
type Asking struct {
	e        *Engine
	cfg      Settings
	a        asking
	token    string // the claim the owed records are made with; "": none (no room)
	claimFor time.Duration
	started  bool
}

// AskLater prepares a batch's hand-off to the background asker under cfg:
// nil when there is no LLM to ask (the fallback off, or no client). It
// takes one of the asker's backgroundBatches slots when one is free;
// otherwise the batch's aspects go to the sweep (deferred: later). Every
// Asking is ended by Examine (started, or dropped when the batch failed).
func (e *Engine) AskLater(cfg Settings) *Asking {
	if !cfg.SemanticFallback || e.llms == nil {
		return nil
	}
	client := e.llms.Client(cfg.LLM)
	if client == nil {
		return nil
	}
	x := &Asking{e: e, cfg: cfg, a: asking{client: client, policy: e.currentPolicy(), timeout: cfg.SemanticTimeout,
		budget: NewBudget(DefaultQuestions)}}
	x.claimFor = x.a.claimFor()
	select {
	case e.background <- struct{}{}:
		x.token = ident.Random("asker:", 8)
	default:
	}
	return x
}

// owedBy is what keepSQL claims the owed records with.
func (x *Asking) owedBy() (holder any, seconds float64) {
	if x == nil || x.token == "" {
		return nil, 0
	}
	return x.token, x.claimFor.Seconds()
}

// drop ends a hand-off whose batch failed: nothing was recorded.
func (x *Asking) drop() {
	if x != nil && x.token != "" && !x.started {
		<-x.e.background
	}
}

// start hands the aspects a batch decided (and recorded as owed) to the
// asker, or counts them deferred when it had no room.
func (x *Asking) start(ctx context.Context, aspects []AspectChanges) {
	if x == nil {
		return
	}
	if x.token == "" {
		x.e.metrics.LLMDeferred.WithLabelValues(DeferLater).Add(float64(len(aspects)))
		return
	}
	if len(aspects) == 0 {
		x.drop() // nothing decided, nothing recorded
		return
	}
	x.started = true
	x.e.pending.Add(1)
	go func() {
		defer x.e.pending.Done()
		defer func() { <-x.e.background }()
		stop := x.e.renewOwed(ctx, x.token, x.claimFor)
		owed, err := x.ask(ctx, aspects)
		stop()
		if err != nil {
			x.e.log.Warn("supersession: the background asker could not ask about a batch; the sweep asks", "err", err)
			owed = map[aspectRef]bool{} // every record given back
			for _, c := range aspects {
				owed[aspectRef{c.AgentID, c.AspectID}] = true
			}
		}
		if err := x.e.settleOwed(context.WithoutCancel(ctx), x.token, owed); err != nil {
			x.e.log.Warn("supersession: could not settle the records the background asker held; their claims expire and the sweep asks", "err", err)
		}
	}()
}

// ask reads the aspects whole, finds the pairs of their decided attributes
// the heuristics leave to the LLM and asks their windows. It returns the
// aspects still owed: a window not answered, or an answer that a pair
// contradicts, which the sweep decides with; an error when it could not
// read them or the windows (every aspect is then owed).
func (x *Asking) ask(ctx context.Context, aspects []AspectChanges) (map[aspectRef]bool, error) {
	e := x.e
	agents, ids := make([]string, len(aspects)), make([]string, len(aspects))
	focus := map[string]bool{}
	for i, c := range aspects {
		agents[i], ids[i] = c.AgentID, c.AspectID
		for _, id := range c.IDs {
			focus[id] = true
		}
	}
	groups, err := e.LoadAspects(ctx, agents, ids)
	if err != nil {
		return nil, err
	}
	in := planInput{thresholds: x.cfg.Thresholds, shadow: x.cfg.Shadow, semantic: true, gate: x.a.policy.Gate}
	pending := map[pairKey]pendingPair{}
	groupOf := map[*Attribute]*Group{}
	var olds []string
	for _, g := range groups {
		for _, pp := range focusPairs(g, focus, in) {
			pending[keyOf(pp.old, pp.new)], groupOf[pp.old] = pp, g
			olds = append(olds, pp.old.ID)
		}
	}
	owed := map[aspectRef]bool{}
	if len(pending) == 0 {
		return owed, nil // nothing for the LLM: no record stays
	}
	vetoed, err := e.attrs.vetoes(ctx, olds, keys(agentSet(groups)))
	if err != nil {
		return nil, err
	}
	for k, pp := range pending {
		if vetoed.Has(pp.old, pp.new) {
			delete(pending, k)
		}
	}
	var t Tally
	known, err := e.resolve(ctx, x.a, pending, groupOf, &t)
	if err != nil {
		return nil, err
	}
	for k, pp := range pending {
		g := groupOf[pp.old]
		if v := known[k]; g.Unsettled || v.failed || v.contradicts {
			owed[aspectRef{g.AgentID, g.AspectID}] = true // the sweep decides with the answer stored
		}
	}
	return owed, nil
}

// focusPairs are the pairs of g with a side in focus that the heuristics
// do not decide and the gate lets reach the LLM: the questions a
// classification adds. The pairs between the other siblings were asked
// when the newer of them was classified (or by the sweep); deciding an
// old attribute by the full rule is the sweep's, which reads the aspect
// whole with the answers stored. Every sibling is tried against each
// focus attribute: a few focus attributes against the aspect, not the
// aspect against itself.
func focusPairs(g *Group, focus map[string]bool, in planInput) []pendingPair {
	if g.Dangling {
		return nil
	}
	var out []pendingPair
	for _, f := range g.Attrs {
		if !focus[f.ID] {
			continue
		}
		for _, o := range g.Attrs {
			if o == f || (focus[o.ID] && o.ID < f.ID) { // a pair of two focus attributes once
				continue
			}
			old, nw := o, f
			if o.newer(f) {
				old, nw = f, o
			}
			if ok, _, _ := eligibility(old); !ok {
				continue
			}
			if _, ok, _ := eligibility(nw); !ok {
				continue
			}
			if _, need, _ := decideMet(old, nw, true, in); need {
				out = append(out, pendingPair{old, nw})
			}
		}
	}
	return out
}

func agentSet(groups []*Group) map[string]bool {
	m := map[string]bool{}
	for _, g := range groups {
		m[g.AgentID] = true
	}
	return m
}

// renewOwed renews the asker's claim on its owed records while it works.
func (e *Engine) renewOwed(ctx context.Context, token string, claimFor time.Duration) (stop func()) {
	return store.Renew(ctx, claimFor/3, func(ctx context.Context) error {
		_, err := e.db.ExecContext(ctx, e.sql.Feed.ExtendOwed, token, claimFor.Seconds())
		return err
	}, func(err error) {
		e.log.Warn("supersession: could not renew the background asker's claims; the sweep may ask the same aspects", "err", err)
	})
}

// settleOwed ends the asker's claim on its owed records: those of the
// aspects still owed are given back to the sweep, the others deleted.
func (e *Engine) settleOwed(ctx context.Context, token string, owed map[aspectRef]bool) error {
	var agents, aspects []string
	for ref := range owed {
		agents, aspects = append(agents, ref.agent), append(aspects, ref.aspect)
	}
	if _, err := e.db.ExecContext(ctx, e.sql.Feed.SettleOwed, token, pq.Array(agents), pq.Array(aspects)); err != nil {
		return fmt.Errorf("supersession: settle the owed records: %w", err)
	}
	return nil
}

// The asker's SQL on the change records it holds (the feed's table).
const (
	// extendOwedSQL renews a hand-off's claim on its owed records.
	extendOwedSQL = `
UPDATE {{.Changes}} SET claimed_until = now() + make_interval(secs => $2)
WHERE claimed_by = $1`

	// settleOwedSQL deletes a hand-off's owed records, but gives back those
	// of the aspects still owed ($2, $3) to the sweep.
	settleOwedSQL = `
WITH owed AS (
  SELECT * FROM unnest($2::text[], $3::text[]) AS o(agent_id, aspect_id)
),
kept AS (
  UPDATE {{.Changes}} c SET claimed_by = NULL, claimed_until = NULL
  FROM owed o
  WHERE c.claimed_by = $1 AND c.agent_id = o.agent_id AND c.aspect_id = o.aspect_id
  RETURNING c.seq
)
DELETE FROM {{.Changes}} c
WHERE c.claimed_by = $1 AND c.seq NOT IN (SELECT seq FROM kept)`
)
