package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// A proposal's status (SPEC §10), derived from history on every read.
const (
	StatusPending  = "pending"
	StatusAccepted = "accepted"
	StatusRejected = "rejected"
	StatusApplied  = "applied"
	StatusUndone   = "undone"
	StatusStale    = "stale"
)

// Statuses are the statuses in the order the queue shows them.
var Statuses = []string{StatusPending, StatusAccepted, StatusRejected, StatusApplied, StatusUndone, StatusStale}

// ValidStatus reports whether s is a status name.
func ValidStatus(s string) bool {
	for _, x := range Statuses {
		if s == x {
			return true
		}
	}
	return false
}

// ProposalFilter selects proposals: the filters of `proposals`.
type ProposalFilter struct {
	Agent         string   // metadata agent_id
	Status        string   // "" any; one of Statuses
	Signal        string   // a signal name the proposal carries
	MinConfidence *float64 // inclusive
	MaxConfidence *float64 // inclusive
	Before        string   // a proposal id: only proposals older than it (paging, newest first)
	IDs           []string // only these proposals, when non-empty
	Limit         int      // default 50
}

// Validate says what is wrong with a filter, naming the flag.
func (f ProposalFilter) Validate() error {
	if f.Status != "" && !ValidStatus(f.Status) {
		return fmt.Errorf("--status %q is not one of %s", f.Status, strings.Join(Statuses, ", "))
	}
	if f.MinConfidence != nil && f.MaxConfidence != nil && *f.MinConfidence > *f.MaxConfidence {
		return fmt.Errorf("--min-confidence %g is above --max-confidence %g", *f.MinConfidence, *f.MaxConfidence)
	}
	if f.Limit < 0 {
		return fmt.Errorf("--limit must be at least 1")
	}
	return nil
}

// ReviewRecord is the decision recorded on a proposal.
type ReviewRecord struct {
	HistoryID string    `json:"history_id"`
	Verdict   string    `json:"verdict"` // accepted | rejected
	Note      string    `json:"note"`
	At        time.Time `json:"at"`
	By        *Who      `json:"by"` // who decided, through which channel
}

// Proposal is one supersession_proposal with its derived status.
type Proposal struct {
	ID             string               `json:"id"`
	Status         string               `json:"status"`
	CreatedAt      time.Time            `json:"created_at"`
	AgentID        string               `json:"agent_id"`
	OldAttributeID string               `json:"old_attribute_id"`
	NewAttributeID string               `json:"new_attribute_id"`
	AspectID       string               `json:"aspect_id"`
	OldContent     string               `json:"old_content"`
	NewContent     string               `json:"new_content"`
	Method         string               `json:"method"`
	Confidence     float64              `json:"confidence"`
	Signals        supersession.Signals `json:"signals"`
	Reasoning      string               `json:"reasoning"`
	Mode           string               `json:"mode"`
	// Rule is, for a proposal in probation (earned enforcement), the rule
	// that has not earned auto-apply; Model the LLM's that decided a
	// semantic one.
	Rule   string        `json:"rule,omitempty"`
	Model  string        `json:"model,omitempty"`
	Review *ReviewRecord `json:"review"`
	// AppliedHistoryID is the attribute_superseded row that applied it;
	// RevertedHistoryID the supersession_reverted row that undid that.
	AppliedHistoryID  string     `json:"applied_history_id,omitempty"`
	AppliedAt         *time.Time `json:"applied_at,omitempty"`
	AppliedBy         *Who       `json:"applied_by,omitempty"`
	RevertedHistoryID string     `json:"reverted_history_id,omitempty"`
	RevertedAt        *time.Time `json:"reverted_at,omitempty"`
	RevertedBy        *Who       `json:"reverted_by,omitempty"`
	// StaleReason says why a stale proposal no longer holds.
	StaleReason string `json:"stale_reason,omitempty"`
	// OldProtected: the old attribute is protected now (applying is refused).
	OldProtected bool `json:"old_protected"`
}

// proposalRow is what proposalsSQL returns.
type proposalRow struct {
	ID           string     `db:"id"`
	CreatedAt    time.Time  `db:"created_at"`
	MemoryID     string     `db:"memory_id"`
	OldContent   string     `db:"old_content"`
	NewContent   string     `db:"new_content"`
	Reason       string     `db:"reason"`
	Metadata     JSONB      `db:"metadata"`
	ReviewID     *string    `db:"review_id"`
	ReviewEvent  *string    `db:"review_event"`
	ReviewNote   *string    `db:"review_note"`
	ReviewAt     *time.Time `db:"review_at"`
	AppliedID    *string    `db:"applied_id"`
	AppliedAt    *time.Time `db:"applied_at"`
	RevertedID   *string    `db:"reverted_id"`
	RevertedAt   *time.Time `db:"reverted_at"`
	OldStatus    *string    `db:"old_status"`
	OldNow       *string    `db:"old_now"`
	OldProtected bool       `db:"old_protected"`
	NewStatus    *string    `db:"new_status"`
	NewNow       *string    `db:"new_now"`
	Status       string     `db:"status"`
	ReviewBy     JSONB      `db:"review_by"`
	AppliedBy    JSONB      `db:"applied_by"`
	RevertedBy   JSONB      `db:"reverted_by"`
}

func (r proposalRow) proposal() Proposal {
	var m entryMeta
	_ = json.Unmarshal(r.Metadata, &m)
	p := Proposal{
		ID: r.ID, Status: r.Status, CreatedAt: r.CreatedAt, AgentID: m.AgentID,
		OldAttributeID: m.OldAttributeID, NewAttributeID: m.NewAttributeID, AspectID: m.AspectID,
		OldContent: r.OldContent, NewContent: r.NewContent, Method: string(m.Method), Confidence: m.Confidence,
		Signals: m.Signals, Reasoning: m.Reasoning, Mode: string(m.Mode), Rule: m.Rule, Model: m.Model,
		AppliedHistoryID: deref(r.AppliedID), AppliedAt: r.AppliedAt,
		RevertedHistoryID: deref(r.RevertedID), RevertedAt: r.RevertedAt, OldProtected: r.OldProtected,
		AppliedBy: whoOf(r.AppliedBy), RevertedBy: whoOf(r.RevertedBy),
	}
	if r.ReviewID != nil {
		verdict := StatusRejected
		if deref(r.ReviewEvent) == "supersession_proposal_accepted" {
			verdict = StatusAccepted
		}
		p.Review = &ReviewRecord{HistoryID: *r.ReviewID, Verdict: verdict, Note: deref(r.ReviewNote), By: whoOf(r.ReviewBy)}
		if r.ReviewAt != nil {
			p.Review.At = *r.ReviewAt
		}
	}
	if p.Status == StatusStale {
		p.StaleReason = staleReason(p, r)
	}
	return p
}

// staleReason says which of the proposal's rows no longer holds.
func staleReason(p Proposal, r proposalRow) string {
	side := func(name, id string, status, now *string, was string) string {
		switch {
		case status == nil:
			return fmt.Sprintf("%s attribute %s no longer exists as an attribute of agent %s", name, id, p.AgentID)
		case *status != "active":
			return fmt.Sprintf("%s attribute %s is %s now", name, id, *status)
		case deref(now) != was:
			return fmt.Sprintf("%s attribute %s's content changed since (now %q)", name, id, clip(deref(now), 60))
		}
		return ""
	}
	if s := side("old", p.OldAttributeID, r.OldStatus, r.OldNow, r.OldContent); s != "" {
		return s
	}
	return side("new", p.NewAttributeID, r.NewStatus, r.NewNow, r.NewContent)
}

type queueStatements struct {
	List, Counts, LockOld, ReviewBatch, Attributes, Siblings, Chain, AttrHistory, Agents, Stats string
}

var queueSQL = queueStatements{
	List: proposalsSQL, Counts: proposalCountsSQL, LockOld: lockOldSharedSQL, ReviewBatch: reviewBatchSQL,
	Attributes: attributesSQL, Siblings: siblingsSQL, Chain: chainSQL, AttrHistory: attributeHistorySQL,
	Agents: agentsSQL, Stats: statsSQL,
}

func floatOrNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func (f ProposalFilter) args() []any {
	ids := f.IDs
	if ids == nil {
		ids = []string{}
	}
	return []any{f.Agent, f.Signal, floatOrNil(f.MinConfidence), floatOrNil(f.MaxConfidence), f.Before, pq.Array(ids)}
}

// Proposals lists the proposals f selects with their status, newest first.
func (o *Ops) Proposals(ctx context.Context, f ProposalFilter) ([]Proposal, error) {
	return o.proposals(ctx, o.db, f)
}

func (o *Ops) proposals(ctx context.Context, q sqlx.QueryerContext, f ProposalFilter) ([]Proposal, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	var rows []proposalRow
	if err := sqlx.SelectContext(ctx, q, &rows, o.sql.Queue.List, append(f.args(), f.Status, f.Limit)...); err != nil {
		return nil, fmt.Errorf("proposals: read memory_history: %w", err)
	}
	out := make([]Proposal, len(rows))
	for i, r := range rows {
		out[i] = r.proposal()
	}
	return out, nil
}

// ProposalCounts counts the proposals f selects per status (f's Status,
// Before and Limit are ignored): every status is present, zero or not.
func (o *Ops) ProposalCounts(ctx context.Context, f ProposalFilter) (map[string]int, error) {
	f.Status, f.Before, f.Limit = "", "", 0
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := o.db.SelectContext(ctx, &rows, o.sql.Queue.Counts, f.args()...); err != nil {
		return nil, fmt.Errorf("proposals: count: %w", err)
	}
	out := make(map[string]int, len(Statuses))
	for _, s := range Statuses {
		out[s] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// Agents lists the agents that have proposals.
func (o *Ops) Agents(ctx context.Context) ([]string, error) {
	var out []string
	if err := o.db.SelectContext(ctx, &out, o.sql.Queue.Agents); err != nil {
		return nil, fmt.Errorf("proposals: list agents: %w", err)
	}
	return out, nil
}

// ---- one proposal, in full ----

// Attribute is an attribute as it is now.
type Attribute struct {
	ID           string     `db:"id" json:"id"`
	AgentID      string     `db:"agent_id" json:"agent_id"`
	AspectID     *string    `db:"aspect_id" json:"aspect_id"`
	Kind         string     `db:"kind" json:"kind"`
	Content      string     `db:"content" json:"content"`
	Status       string     `db:"status" json:"status"`
	SupersededBy *string    `db:"superseded_by" json:"superseded_by"`
	SupersededAt *time.Time `db:"superseded_at" json:"superseded_at"`
	Protected    bool       `db:"protected" json:"protected"`
	CreatedAt    time.Time  `db:"created_at" json:"created_at"`
	UpdatedAt    time.Time  `db:"updated_at" json:"updated_at"`
}

// ProposalDetail is a proposal with what a reviewer needs beside it: both
// attributes as they are now, the aspect's other active attributes, where
// the old attribute's content went (its superseded_by chain), and the
// supersession story of both attributes.
type ProposalDetail struct {
	Proposal
	Old      *Attribute  `json:"old"` // nil: gone (or another agent's now)
	New      *Attribute  `json:"new"`
	Siblings []Attribute `json:"siblings"`
	Chain    []Attribute `json:"chain"`
	History  []Entry     `json:"history"`
}

// ErrNotFound is returned for an id that is no proposal.
var ErrNotFound = errors.New("not found")

// ProposalDetail returns one proposal in full. An id that is not a
// supersession_proposal wraps ErrNotFound.
func (o *Ops) ProposalDetail(ctx context.Context, id string) (*ProposalDetail, error) {
	ps, err := o.Proposals(ctx, ProposalFilter{IDs: []string{id}, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("proposal %s: %w", id, ErrNotFound)
	}
	d := &ProposalDetail{Proposal: ps[0], Siblings: []Attribute{}, Chain: []Attribute{}, History: []Entry{}}
	p := d.Proposal
	var attrs []Attribute
	if err := o.db.SelectContext(ctx, &attrs, o.sql.Queue.Attributes, pq.Array([]string{p.OldAttributeID, p.NewAttributeID}), p.AgentID); err != nil {
		return nil, fmt.Errorf("proposal %s: read attributes: %w", id, err)
	}
	for i := range attrs {
		switch attrs[i].ID {
		case p.OldAttributeID:
			d.Old = &attrs[i]
		case p.NewAttributeID:
			d.New = &attrs[i]
		}
	}
	if p.AspectID != "" {
		if err := o.db.SelectContext(ctx, &d.Siblings, o.sql.Queue.Siblings, p.AgentID, p.AspectID,
			pq.Array([]string{p.OldAttributeID, p.NewAttributeID}), 100); err != nil {
			return nil, fmt.Errorf("proposal %s: read siblings: %w", id, err)
		}
	}
	if d.Old != nil && d.Old.SupersededBy != nil {
		if err := o.db.SelectContext(ctx, &d.Chain, o.sql.Queue.Chain, p.OldAttributeID, p.AgentID); err != nil {
			return nil, fmt.Errorf("proposal %s: follow superseded_by: %w", id, err)
		}
	}
	if err := o.db.SelectContext(ctx, &d.History, o.sql.Queue.AttrHistory, pq.Array([]string{p.OldAttributeID, p.NewAttributeID}), p.AgentID); err != nil {
		return nil, fmt.Errorf("proposal %s: read history: %w", id, err)
	}
	return d, nil
}

// ---- bulk decisions ----

// DefaultBatch is how many proposals a bulk decision handles per
// transaction.
const DefaultBatch = 200

// BulkReview is a review --all: a decision on every pending proposal the
// filter selects.
type BulkReview struct {
	Filter ProposalFilter // Status and Limit are ignored: pending, all of them
	Accept bool
	Note   string
	DryRun bool
	Batch  int // default DefaultBatch
}

// Decided is one proposal a bulk review decided (or, dry, would decide).
type Decided struct {
	Proposal  Proposal
	HistoryID string // the review row; "" when dry or skipped
}

// BulkReviewResult is what a bulk review did.
type BulkReviewResult struct {
	Verdict  string    // accepted | rejected
	DryRun   bool      //
	Decided  []Decided // in the order they were selected
	Selected int       // pending when selected
	// Skipped were pending when selected and no longer when their batch
	// was written: another reviewer decided them, or a concurrent write
	// applied them or changed their rows.
	Skipped []string
}

// ReviewAll decides every pending proposal the filter selects, a batch per
// transaction, one review row each. Each batch takes the old attributes'
// locks as a single review does, then records only the proposals still
// pending under them, so a concurrent sweep, inline hook or second reviewer
// serialises with it: a rejection recorded here is seen by their write's
// veto check, or their write is seen here and the proposal is skipped.
// A second run decides nothing. It writes only history rows, so
// mutationsFrozen does not stop it.
func (o *Ops) ReviewAll(ctx context.Context, req BulkReview) (*BulkReviewResult, error) {
	f := req.Filter
	f.Status, f.Limit = StatusPending, req.Batch
	if f.Limit <= 0 {
		f.Limit = DefaultBatch
	}
	event, verdict := "supersession_proposal_rejected", StatusRejected
	if req.Accept {
		event, verdict = "supersession_proposal_accepted", StatusAccepted
	}
	res := &BulkReviewResult{Verdict: verdict, DryRun: req.DryRun, Decided: []Decided{}}
	for {
		batch, err := o.Proposals(ctx, f)
		if err != nil {
			return res, fmt.Errorf("review --all: %w", err)
		}
		if len(batch) == 0 {
			return res, nil
		}
		f.Before = batch[len(batch)-1].ID
		res.Selected += len(batch)
		if req.DryRun {
			for _, p := range batch {
				res.Decided = append(res.Decided, Decided{Proposal: p})
			}
			continue
		}
		ids, olds := make([]string, len(batch)), make([]string, len(batch))
		for i, p := range batch {
			ids[i], olds[i] = p.ID, p.OldAttributeID
		}
		written := map[string]string{}
		err = store.InTx(ctx, o.db, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, o.sql.Queue.LockOld, pq.Array(olds)); err != nil {
				return fmt.Errorf("lock old attributes: %w", err)
			}
			a := o.actor
			rows, err := tx.QueryContext(ctx, o.sql.Queue.ReviewBatch, pq.Array(ids), event, req.Note, a.ChangedBy, a.Type,
				a.RequestID, a.SessionID, a.Operator, a.OperatorSource)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var hid, pid string
				if err := rows.Scan(&hid, &pid); err != nil {
					return err
				}
				written[pid] = hid
			}
			return rows.Err()
		})
		if err != nil {
			return res, fmt.Errorf("review --all: record %d decisions: %w", len(batch), err)
		}
		for _, p := range batch {
			if h, ok := written[p.ID]; ok {
				o.logReview(h, event, req.Note, p)
				p.Status = verdict
				p.Review = &ReviewRecord{HistoryID: h, Verdict: verdict, Note: req.Note, By: o.who()}
				res.Decided = append(res.Decided, Decided{Proposal: p, HistoryID: h})
			} else {
				res.Skipped = append(res.Skipped, p.ID)
			}
		}
	}
}

// BulkApply is an apply --all.
type BulkApply struct {
	Filter ProposalFilter // Status "" means accepted; Limit is ignored
	DryRun bool
	Batch  int
}

// BulkApplyResult is what a bulk apply did: one outcome per selected
// proposal, in order (dry: HistoryID and Err empty).
type BulkApplyResult struct {
	DryRun   bool
	Selected []Proposal
	Results  []Applied
}

// ApplyAll applies the proposals the filter selects (accepted ones unless
// it names a status), each through the same guarded write as `apply`, in
// its own transaction, so a concurrent sweep, inline hook or second
// operator never makes one apply twice: the later one finds the old row no
// longer active, or the unique index refuses it. Refusals are per proposal
// and carry the reason. mutationsFrozen refuses the whole run, dry or not
// (so that a dry run says what a real one would).
func (o *Ops) ApplyAll(ctx context.Context, s Brake, req BulkApply) (*BulkApplyResult, error) {
	if s.Frozen() {
		return nil, frozen("apply")
	}
	f := req.Filter
	if f.Status == "" {
		f.Status = StatusAccepted
	}
	f.Limit = req.Batch
	if f.Limit <= 0 {
		f.Limit = DefaultBatch
	}
	res := &BulkApplyResult{DryRun: req.DryRun}
	for {
		batch, err := o.Proposals(ctx, f)
		if err != nil {
			return res, fmt.Errorf("apply --all: %w", err)
		}
		if len(batch) == 0 {
			return res, nil
		}
		f.Before = batch[len(batch)-1].ID
		res.Selected = append(res.Selected, batch...)
		for _, p := range batch {
			a := Applied{ProposalID: p.ID}
			if !req.DryRun {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				a.HistoryID, a.Err = o.applyOne(ctx, p.ID)
			}
			res.Results = append(res.Results, a)
		}
	}
}

// Undone is the outcome of undoing one applied proposal.
type Undone struct {
	ProposalID string
	HistoryID  string // the supersession_reverted row
	Err        error
}

// UndoAll undoes the supersession of every applied proposal the filter
// selects, each as `undo` would (refused when the row changed since).
func (o *Ops) UndoAll(ctx context.Context, s Brake, f ProposalFilter) ([]Undone, error) {
	if s.Frozen() {
		return nil, frozen("undo")
	}
	f.Status, f.Limit = StatusApplied, DefaultBatch
	var out []Undone
	for {
		batch, err := o.Proposals(ctx, f)
		if err != nil {
			return out, fmt.Errorf("undo: %w", err)
		}
		if len(batch) == 0 {
			return out, nil
		}
		f.Before = batch[len(batch)-1].ID
		for _, p := range batch {
			u := Undone{ProposalID: p.ID}
			u.HistoryID, u.Err = o.Undo(ctx, s, p.AppliedHistoryID)
			out = append(out, u)
		}
	}
}

// HistoryEntry returns one memory_history row; an unknown id wraps
// ErrNotFound.
func (o *Ops) HistoryEntry(ctx context.Context, id string) (*Entry, error) {
	e, _, err := o.loadEntry(ctx, o.db, id)
	var r *Refusal
	if errors.As(err, &r) {
		return nil, fmt.Errorf("%s: %w", r.Reason, ErrNotFound)
	}
	return e, err
}

// FrozenRefusal is the refusal of op while mutationsFrozen is on, for
// callers that check the brake before selecting anything.
func FrozenRefusal(op string) error { return frozen(op) }
