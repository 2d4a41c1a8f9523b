package supersession

import (
	"context"
	"fmt"

	"github.com/supersessiond/supersessiond/internal/earned"
)

// Earned auto-apply (SPEC §13). Under maintenance.enforcement.mode earned a
// live decision is applied only when its rule has earned it: the lower
// bound of the 95% Wilson interval of the rule's reviewed precision
// (package earned) reaches the target. Otherwise it is written as a
// proposal in probation, naming its rule, and the reviews of those
// proposals are what earn it. The records are read once per batch, so a
// rejection or an undo takes a rule back to probation at the next batch.

// rulesSQL is each rule's record for earned auto-apply, over the proposals
// and supersessions of $1 (an agent; empty: all) created at or after $2
// (NULL: ever): a heuristic proposal counts for each signal it carries, a
// semantic one for the LLM judge of the model its metadata names. A
// proposal is decided when it was reviewed or applied, and correct when it
// was accepted or applied and not undone; a supersession applied on the
// rule's own (no proposal_id) that an operator undid counts as decided and
// wrong, so that an undo of what an earned rule applied sends it back. The
// undone supersessions are found by the revert's index
// (supersessiond_history_one_revert). `stats` reads it too (audit).
const rulesSQL = `
WITH p AS MATERIALIZED (
  SELECT {{meta "h"}} ->> 'method' AS method, {{meta "h"}} ->> 'model' AS model,
         CASE WHEN jsonb_typeof({{meta "h"}} -> 'signals') = 'array' THEN {{meta "h"}} -> 'signals' ELSE '[]'::jsonb END AS signals,
         (r.id IS NOT NULL OR ap.id IS NOT NULL) AS decided,
         (coalesce(r.event = 'supersession_proposal_accepted', false) OR ap.id IS NOT NULL) AND rv.id IS NULL AS correct
  FROM {{.History}} h
  LEFT JOIN LATERAL (
    SELECT x.id, x.event FROM {{.History}} x
    WHERE x.event IN ('supersession_proposal_accepted', 'supersession_proposal_rejected')
      AND {{meta "x"}} ->> 'proposal_id' = h.id
    LIMIT 1) r ON true
  LEFT JOIN LATERAL (
    SELECT x.id FROM {{.History}} x
    WHERE x.event = 'attribute_superseded' AND {{meta "x"}} ? 'proposal_id' AND {{meta "x"}} ->> 'proposal_id' = h.id
    LIMIT 1) ap ON true
  LEFT JOIN LATERAL (
    SELECT x.id FROM {{.History}} x
    WHERE x.event = 'supersession_reverted' AND {{meta "x"}} ->> 'reverted_history_id' = ap.id
    LIMIT 1) rv ON true
  WHERE h.event = 'supersession_proposal'
    AND ($1 = '' OR {{meta "h"}} ->> 'agent_id' = $1)
    AND ($2::timestamptz IS NULL OR h.created_at >= $2)
  UNION ALL
  SELECT {{meta "x"}} ->> 'method', {{meta "x"}} ->> 'model',
         CASE WHEN jsonb_typeof({{meta "x"}} -> 'signals') = 'array' THEN {{meta "x"}} -> 'signals' ELSE '[]'::jsonb END,
         true, false
  FROM {{.History}} x
  WHERE x.event = 'attribute_superseded' AND NOT ({{meta "x"}} ? 'proposal_id')
    AND {{meta "x"}} ->> 'method' IN ('heuristic', 'semantic')
    AND ($1 = '' OR {{meta "x"}} ->> 'agent_id' = $1)
    AND ($2::timestamptz IS NULL OR x.created_at >= $2)
    AND EXISTS (SELECT 1 FROM {{.History}} rv
                WHERE rv.event = 'supersession_reverted' AND {{meta "rv"}} ->> 'reverted_history_id' = x.id)
)
SELECT rule, count(*) FILTER (WHERE decided) AS decided, count(*) FILTER (WHERE decided AND correct) AS correct
FROM p CROSS JOIN LATERAL (
  SELECT 'llm:' || coalesce(nullif(p.model, ''), 'unknown') AS rule WHERE p.method = 'semantic'
  UNION
  SELECT coalesce(e ->> 'name', '?') FROM jsonb_array_elements(p.signals) e WHERE p.method IS DISTINCT FROM 'semantic'
) r
GROUP BY rule
ORDER BY rule`

// Rules reads each rule's record for earned auto-apply over the proposals
// and supersessions of agent (empty: all) since since (nil: ever).
func (e *Engine) Rules(ctx context.Context, agent string, since any) ([]earned.Record, error) {
	var rows []struct {
		Rule    string `db:"rule"`
		Decided int    `db:"decided"`
		Correct int    `db:"correct"`
	}
	if err := e.db.SelectContext(ctx, &rows, e.sql.Rules, agent, since); err != nil {
		return nil, fmt.Errorf("supersession: read the rules' records from the history: %w", err)
	}
	out := make([]earned.Record, len(rows))
	for i, r := range rows {
		out[i] = earned.Record{Rule: r.Rule, Decided: r.Decided, Correct: r.Correct}
	}
	return out, nil
}

// RuleOf is the rule a decision is judged by: the LLM judge of its model,
// or its strongest heuristic signal (the one its confidence is).
func RuleOf(c Candidate) string {
	if c.Method == MethodSemantic {
		return earned.LLMRule(c.Model)
	}
	rule, best := string(c.Method), -1.0
	for _, s := range c.Signals {
		if s.Confidence > best {
			rule, best = s.Name, s.Confidence
		}
	}
	return rule
}

// enforce turns, under earned, every live decision whose rule has not
// earned auto-apply into a proposal in probation, naming the rule; a live
// decision of an earned rule names it too. The rules' records are read
// once, and only when there is a live decision to judge.
func (e *Engine) enforce(ctx context.Context, cands []Candidate, pol Policy) error {
	if !pol.Earned {
		return nil
	}
	var standing map[string]bool
	for i := range cands {
		c := &cands[i]
		if c.Mode != ModeLive {
			continue
		}
		if standing == nil {
			records, err := e.Rules(ctx, "", nil)
			if err != nil {
				return err
			}
			standing = map[string]bool{}
			for _, r := range records {
				standing[r.Rule] = earned.Judge(r, pol.TargetPrecision).State == earned.Earned
			}
		}
		c.Rule = RuleOf(*c)
		if !standing[c.Rule] {
			c.Mode = ModeProbation
		}
	}
	return nil
}
