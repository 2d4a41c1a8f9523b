package supersession

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/heuristics"
)

// Metadata is the common part of supersession_proposal and
// attribute_superseded history rows (SPEC §5).
type Metadata struct {
	AgentID        string              `json:"agent_id"`
	OldAttributeID string              `json:"old_attribute_id"`
	NewAttributeID string              `json:"new_attribute_id"`
	AspectID       string              `json:"aspect_id"`
	Method         string              `json:"method"`
	Confidence     float64             `json:"confidence"`
	Signals        []heuristics.Signal `json:"signals"`
	Reasoning      string              `json:"reasoning"`
	Mode           Mode                `json:"mode"`
	ProposalID     string              `json:"proposal_id,omitempty"`
	RunID          string              `json:"run_id,omitempty"`
}

// Supersession is one (old → new) supersession to write.
type Supersession struct {
	Meta Metadata
	// OldContent and NewContent are the contents the decision saw; the
	// write is refused if either row's content changed since.
	OldContent string
	NewContent string
	Reason     string
	// ForceChain lets an already-superseded old row be re-pointed (manual
	// supersede --force-chain only).
	ForceChain bool
	// AnyAspect lets old and new belong to different aspects (manual
	// supersede consolidating attributes); automatic paths never set it.
	AnyAspect bool
	// RespectVetoes refuses the write when a reviewer rejected the pair or
	// an operator undid its supersession: set by the automatic paths, not
	// by an operator applying or superseding by hand.
	RespectVetoes bool
}

// Actor says who writes: changed_by, actor_type and request_id columns.
type Actor struct {
	ChangedBy string // supersessiond:sweep | supersessiond:inline | supersessiond:cli
	Type      string // system | operator
	RequestID string
}

// lockSQL takes the old rows' locks, in id order so that concurrent writers
// never deadlock on each other, before anything is checked. Under READ
// COMMITTED the statement that follows then sees every change that was
// committed before the locks were granted: an operator's undo (which holds
// the same lock while it restores the row and writes its revert) or review
// (which takes it while it records the rejection) is either fully visible to
// the guard or waits for this write to finish. Checking in the statement
// that locks would not do: its snapshot is older than the lock it waited for.
const lockSQL = `
SELECT id FROM entity_attributes WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// applySQL supersedes a batch of old attributes in one statement, under the
// locks lockSQL took. For each request it re-checks the decision's
// assumptions, and for the automatic paths that no operator vetoed the pair,
// updates the row and inserts its attribute_superseded row carrying the undo
// snapshot (prior status, superseded_by, superseded_at, updated_at) and what
// the supersession left (for undo's "changed since" check). Requests whose
// guard fails produce no row: the caller compares what came back.
const applySQL = `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
    ord int, old_id text, new_id text, agent_id text, old_content text, new_content text,
    meta jsonb, reason text, force_chain boolean, any_aspect boolean, respect_vetoes boolean)
),
prior AS (
  SELECT r.ord, a.id, a.status, a.superseded_by, a.superseded_at, a.updated_at, a.memory_id, a.content,
         r.new_id, r.new_content, r.meta, r.reason
  FROM req r
  JOIN entity_attributes a ON a.id = r.old_id AND a.agent_id = r.agent_id
  WHERE (a.status = 'active' OR (r.force_chain AND a.status = 'superseded' AND a.superseded_by IS DISTINCT FROM r.new_id))
    AND a.kind = 'attribute'
    AND NOT a.protected
    AND a.content = r.old_content
    AND EXISTS (
      SELECT 1 FROM entity_attributes n
      WHERE n.id = r.new_id AND n.agent_id = r.agent_id AND n.status = 'active' AND n.kind = 'attribute'
        AND (r.any_aspect OR n.aspect_id IS NOT DISTINCT FROM a.aspect_id) AND n.content = r.new_content AND n.id <> a.id)
    AND NOT (r.respect_vetoes AND EXISTS (
      SELECT 1 FROM memory_history h
      WHERE h.event IN ('supersession_proposal_rejected', 'supersession_reverted')
        AND h.metadata ->> 'old_attribute_id' = a.id AND h.metadata ->> 'new_attribute_id' = r.new_id))
  ORDER BY a.id
  FOR UPDATE OF a
),
upd AS (
  UPDATE entity_attributes a
  SET status = 'superseded', superseded_by = p.new_id, superseded_at = now(), updated_at = now()
  FROM prior p
  WHERE a.id = p.id
  RETURNING p.ord, a.id, p.memory_id, p.content, p.new_content, p.meta, p.reason,
            p.status AS prior_status, p.superseded_by AS prior_superseded_by,
            p.superseded_at AS prior_superseded_at, p.updated_at AS prior_updated_at,
            a.superseded_at, a.updated_at
)
INSERT INTO memory_history (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id)
SELECT gen_random_uuid()::text, coalesce(u.memory_id, u.id), 'attribute_superseded', u.content, u.new_content, $2, u.reason,
       u.meta || jsonb_build_object(
         'undo', jsonb_build_object(
           'status', u.prior_status, 'superseded_by', u.prior_superseded_by,
           'superseded_at', u.prior_superseded_at, 'updated_at', u.prior_updated_at),
         'applied', jsonb_build_object(
           'status', 'superseded', 'superseded_by', u.meta ->> 'new_attribute_id',
           'superseded_at', u.superseded_at, 'updated_at', u.updated_at)),
       $3, $4
FROM upd u
RETURNING id, metadata ->> 'old_attribute_id'`

// Applied is one written supersession.
type Applied struct {
	HistoryID      string
	OldAttributeID string
}

// Apply writes supersessions inside tx and returns those whose guards held;
// the others were no-ops (already superseded, changed, gone, vetoed). The
// caller commits.
func Apply(ctx context.Context, tx *sqlx.Tx, actor Actor, items []Supersession) ([]Applied, error) {
	if len(items) == 0 {
		return nil, nil
	}
	type reqRow struct {
		Ord           int             `json:"ord"`
		OldID         string          `json:"old_id"`
		NewID         string          `json:"new_id"`
		AgentID       string          `json:"agent_id"`
		OldContent    string          `json:"old_content"`
		NewContent    string          `json:"new_content"`
		Meta          json.RawMessage `json:"meta"`
		Reason        string          `json:"reason"`
		ForceChain    bool            `json:"force_chain"`
		AnyAspect     bool            `json:"any_aspect"`
		RespectVetoes bool            `json:"respect_vetoes"`
	}
	reqs := make([]reqRow, len(items))
	olds := make([]string, len(items))
	for i, it := range items {
		meta, err := json.Marshal(it.Meta)
		if err != nil {
			return nil, fmt.Errorf("supersession: encode metadata: %w", err)
		}
		reqs[i] = reqRow{i, it.Meta.OldAttributeID, it.Meta.NewAttributeID, it.Meta.AgentID, it.OldContent, it.NewContent,
			meta, it.Reason, it.ForceChain, it.AnyAspect, it.RespectVetoes}
		olds[i] = it.Meta.OldAttributeID
	}
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("supersession: encode batch: %w", err)
	}
	if _, err := tx.ExecContext(ctx, lockSQL, pq.Array(olds)); err != nil {
		return nil, fmt.Errorf("supersession: lock %d attributes: %w", len(items), err)
	}
	rows, err := tx.QueryxContext(ctx, applySQL, string(body), actor.ChangedBy, actor.Type, nullIfEmpty(actor.RequestID))
	if err != nil {
		return nil, fmt.Errorf("supersession: apply %d supersessions: %w", len(items), err)
	}
	defer rows.Close()
	var out []Applied
	for rows.Next() {
		var a Applied
		if err := rows.Scan(&a.HistoryID, &a.OldAttributeID); err != nil {
			return nil, fmt.Errorf("supersession: apply: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: apply %d supersessions: %w", len(items), err)
	}
	return out, nil
}

// proposeSQL inserts proposals, one per (old, new) pair ever: the unique
// index decides, not a prior read, so concurrent writers cannot duplicate.
// Proposals for rows no longer active are not written.
const proposeSQL = `
INSERT INTO memory_history (id, memory_id, event, old_content, new_content, changed_by, reason, metadata, actor_type, request_id)
SELECT gen_random_uuid()::text, coalesce(a.memory_id, a.id), 'supersession_proposal', a.content, r.new_content, $2, r.reason, r.meta, $3, $4
FROM jsonb_to_recordset($1::jsonb) AS r(old_id text, agent_id text, new_content text, meta jsonb, reason text)
JOIN entity_attributes a ON a.id = r.old_id AND a.agent_id = r.agent_id AND a.status = 'active'
ON CONFLICT ((metadata ->> 'old_attribute_id'), (metadata ->> 'new_attribute_id'))
  WHERE event = 'supersession_proposal' DO NOTHING
RETURNING id, metadata ->> 'mode', metadata ->> 'old_attribute_id', metadata ->> 'new_attribute_id'`

// Proposed is one proposal that was written.
type Proposed struct {
	HistoryID      string
	Mode           Mode
	OldAttributeID string
	NewAttributeID string
}

// Proposal is one (old → new) proposal to write.
type Proposal struct {
	Meta       Metadata
	NewContent string
	Reason     string
}

// Propose writes proposals and returns those that were new.
func Propose(ctx context.Context, q sqlx.ExtContext, actor Actor, items []Proposal) ([]Proposed, error) {
	if len(items) == 0 {
		return nil, nil
	}
	type reqRow struct {
		OldID      string          `json:"old_id"`
		AgentID    string          `json:"agent_id"`
		NewContent string          `json:"new_content"`
		Meta       json.RawMessage `json:"meta"`
		Reason     string          `json:"reason"`
	}
	seen := map[[2]string]bool{}
	reqs := make([]reqRow, 0, len(items))
	for _, it := range items {
		k := [2]string{it.Meta.OldAttributeID, it.Meta.NewAttributeID}
		if seen[k] {
			continue
		}
		seen[k] = true
		meta, err := json.Marshal(it.Meta)
		if err != nil {
			return nil, fmt.Errorf("supersession: encode metadata: %w", err)
		}
		reqs = append(reqs, reqRow{it.Meta.OldAttributeID, it.Meta.AgentID, it.NewContent, meta, it.Reason})
	}
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("supersession: encode batch: %w", err)
	}
	rows, err := q.QueryxContext(ctx, proposeSQL, string(body), actor.ChangedBy, actor.Type, nullIfEmpty(actor.RequestID))
	if err != nil {
		return nil, fmt.Errorf("supersession: propose %d pairs: %w", len(reqs), err)
	}
	defer rows.Close()
	var out []Proposed
	for rows.Next() {
		var p Proposed
		if err := rows.Scan(&p.HistoryID, &p.Mode, &p.OldAttributeID, &p.NewAttributeID); err != nil {
			return nil, fmt.Errorf("supersession: propose: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: propose %d pairs: %w", len(reqs), err)
	}
	return out, nil
}

// vetoesSQL finds the pairs a reviewer rejected or an operator undid among
// the given old attributes. The plan reads them to pick another target; the
// write re-checks them under the row lock (applySQL).
const vetoesSQL = `
SELECT metadata ->> 'old_attribute_id' AS old_id, metadata ->> 'new_attribute_id' AS new_id
FROM memory_history
WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted')
  AND metadata ->> 'old_attribute_id' = ANY($1)
  AND metadata ->> 'agent_id' = ANY($2)`

// loadVetoes returns the vetoed (old, new) pairs among the given old
// attributes.
func loadVetoes(ctx context.Context, q sqlx.QueryerContext, oldIDs []string, agents []string) (map[[2]string]bool, error) {
	out := map[[2]string]bool{}
	if len(oldIDs) == 0 {
		return out, nil
	}
	rows, err := q.QueryxContext(ctx, vetoesSQL, pq.Array(oldIDs), pq.Array(agents))
	if err != nil {
		return nil, fmt.Errorf("supersession: load vetoes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o, n *string
		if err := rows.Scan(&o, &n); err != nil {
			return nil, err
		}
		if o != nil && n != nil {
			out[[2]string{*o, *n}] = true
		}
	}
	return out, rows.Err()
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
