package supersession

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// Apply writes supersessions inside tx and returns those whose guards held;
// the others were no-ops (already superseded, changed, gone, vetoed). The
// caller commits.
func (e *Engine) Apply(ctx context.Context, tx *sqlx.Tx, actor Actor, items []Supersession) ([]Applied, error) {
	return e.attrs.apply(ctx, tx, actor, items)
}

// Propose writes proposals and returns those that were new.
func (e *Engine) Propose(ctx context.Context, q sqlx.ExtContext, actor Actor, items []Proposal) ([]Proposed, error) {
	return e.attrs.propose(ctx, q, actor, items)
}

// Store is the store the engine's facts are in (SPEC §14).
func (e *Engine) Store() schema.Store { return e.attrs.store }

// Restore puts back, inside tx, a row a supersession retired on a store
// other than the attribute graph (an operator's undo): a Honcho document
// still soft-deleted is made live; one Honcho's reconciler removed, or a
// mem0 memory, is re-inserted from row, the snapshot the retirement kept
// (gone says the row is not there). It reports whether it restored the
// row (false: the row is back already, or there is no snapshot).
func (e *Engine) Restore(ctx context.Context, tx *sqlx.Tx, id string, row json.RawMessage, gone bool) (bool, error) {
	return e.attrs.restore(ctx, tx, id, row, gone)
}

// Protect marks a row of a store other than the attribute graph protected
// (or not), inside tx: Honcho's documents only (mem0's rows have no place for the mark).
func (e *Engine) Protect(ctx context.Context, tx *sqlx.Tx, id string, on bool) error {
	if e.attrs.store != schema.StoreHoncho {
		return fmt.Errorf("supersession: protect is not available on store %s: its rows have no place for the mark", e.attrs.store)
	}
	return e.attrs.protect(ctx, tx, id, on)
}

// Metadata is the common part of supersession_proposal and
// attribute_superseded history rows (SPEC §5).
type Metadata struct {
	AgentID        string  `json:"agent_id"`
	OldAttributeID string  `json:"old_attribute_id"`
	NewAttributeID string  `json:"new_attribute_id"`
	AspectID       string  `json:"aspect_id"`
	Method         Method  `json:"method"`
	Confidence     float64 `json:"confidence"`
	Signals        Signals `json:"signals"`
	Reasoning      string  `json:"reasoning"`
	Mode           Mode    `json:"mode"`
	ProposalID     string  `json:"proposal_id,omitempty"`
	// Model is the LLM's that decided a semantic decision; Rule, under
	// earned enforcement, the rule the decision was judged by (SPEC §13).
	Model string `json:"model,omitempty"`
	Rule  string `json:"rule,omitempty"`
	RunID string `json:"run_id,omitempty"`
	// Operator names who decided, on an operator's row (Actor.Operator);
	// OperatorSource says how the name is known.
	Operator       string `json:"operator,omitempty"`
	OperatorSource string `json:"operator_source,omitempty"`
}

// Signals are a decision's signals; none is [] in JSON, never null, so a
// history row always holds a list.
type Signals []heuristics.Signal

// MarshalJSON writes none as [].
func (s Signals) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]heuristics.Signal(s))
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
	// an operator undid a supersession of the old attribute after the new
	// one was recorded (Vetoes): set by the automatic paths, not by an
	// operator applying or superseding by hand.
	RespectVetoes bool
}

// Actor says who writes: the changed_by, actor_type, request_id and
// session_id columns, and for an operator the name in the metadata.
type Actor struct {
	ChangedBy string // supersessiond:sweep | :inline | :cli | :console | :api
	Type      string // system | operator
	RequestID string
	SessionID string // the console session an operator decided in
	// Operator is the operator's name (metadata operator), OperatorSource
	// how it is known: token (a named token), login (given at login with
	// the shared admin token), os_user or flag (the CLI).
	Operator       string
	OperatorSource string
}

// Applied is one written supersession.
type Applied struct {
	HistoryID      string
	OldAttributeID string
}

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

// Vetoes are what operators said no to, about some old attributes: the
// pairs a reviewer rejected, and the attributes an operator restored with
// undo. An undo says "this is still true": it vetoes the attribute against
// every sibling recorded (created_at) at or before the undo, not only the
// pair it reverted; a sibling recorded after it may still retire it.
type Vetoes struct {
	pairs  map[[2]string]bool   // (old id, new id)
	undone map[string]time.Time // old id → its latest undo
}

// Has reports whether the pair (old, nw) is vetoed. A nil *Vetoes vetoes
// nothing.
func (v *Vetoes) Has(old, nw *Attribute) bool {
	if v == nil {
		return false
	}
	if v.pairs[[2]string{old.ID, nw.ID}] {
		return true
	}
	at, ok := v.undone[old.ID]
	return ok && !nw.CreatedAt.After(at)
}

func (v *Vetoes) empty() bool { return v == nil || (len(v.pairs) == 0 && len(v.undone) == 0) }

// touches reports whether a veto concerns the old attribute id.
func (v *Vetoes) touches(id string) bool {
	if _, ok := v.undone[id]; ok {
		return true
	}
	for k := range v.pairs {
		if k[0] == id {
			return true
		}
	}
	return false
}
