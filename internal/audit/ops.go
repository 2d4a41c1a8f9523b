package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
)

// entryMeta is the metadata of proposal and supersession rows, as read back.
type entryMeta struct {
	supersession.Metadata
	Undo    *snapshot `json:"undo"`
	Applied *snapshot `json:"applied"`
}

// snapshot is an attribute's supersession state at one moment.
type snapshot struct {
	Status       string     `json:"status"`
	SupersededBy *string    `json:"superseded_by"`
	SupersededAt *time.Time `json:"superseded_at"`
	UpdatedAt    *time.Time `json:"updated_at"`
	// Row is the whole row as it was, on a store whose retirement removes
	// it or whose stack may (SPEC §14): what undo re-inserts.
	Row json.RawMessage `json:"row,omitempty"`
}

func (o *Ops) loadEntry(ctx context.Context, q sqlx.QueryerContext, id string) (*Entry, *entryMeta, error) {
	var e Entry
	err := sqlx.GetContext(ctx, q, &e, o.sql.Entry, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, refuse("lookup", "no memory_history row with id %q (see `supersessiond history`)", id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read history row %s: %w", id, err)
	}
	var m entryMeta
	if len(e.Metadata) > 0 {
		if err := json.Unmarshal(e.Metadata, &m); err != nil {
			return nil, nil, refuse("lookup", "history row %s has unreadable metadata: %v", id, err)
		}
	}
	return &e, &m, nil
}

// ---- review ----

// Review records a decision on a supersession_proposal. It writes only a
// history row, so mutationsFrozen does not stop it.
func (o *Ops) Review(ctx context.Context, proposalID string, accept bool, note string) (string, error) {
	op, db := "review", o.db
	e, m, err := o.loadEntry(ctx, db, proposalID)
	if err != nil {
		return "", asOp(err, op)
	}
	if e.Event != "supersession_proposal" {
		return "", refuse(op, "history row %s is a %s, not a supersession_proposal", proposalID, e.Event)
	}
	event := "supersession_proposal_rejected"
	if accept {
		event = "supersession_proposal_accepted"
	}
	meta := o.withOperator(map[string]any{
		"agent_id": m.AgentID, "proposal_id": proposalID, "note": note,
		"old_attribute_id": m.OldAttributeID, "new_attribute_id": m.NewAttributeID,
	})
	var id string
	err = store.InTx(ctx, db, func(tx *sqlx.Tx) error {
		// The old attribute's lock serialises the review with a supersession
		// being written: a rejection recorded here is seen by that write's
		// veto check, or the write is done before the rejection is recorded.
		if _, err := tx.ExecContext(ctx, o.sql.ShareAttribute, m.OldAttributeID, m.AgentID); err != nil {
			return err
		}
		var err error
		id, err = o.insertHistory(ctx, tx, o.historyRow(e.MemoryID, event, e.OldContent, e.NewContent, store.Nullable(note), meta))
		return err
	})
	if store.IsUniqueViolation(err, "supersessiond_history_one_review") {
		var prior struct {
			Event     string    `db:"event"`
			CreatedAt time.Time `db:"created_at"`
			ID        string    `db:"id"`
		}
		_ = db.GetContext(ctx, &prior, o.sql.PriorReview, proposalID)
		return "", refuse(op, "proposal %s was already reviewed: %s at %s (history row %s)", proposalID, prior.Event,
			prior.CreatedAt.UTC().Format(time.RFC3339), prior.ID)
	}
	if err != nil {
		return "", fmt.Errorf("review %s: %w", proposalID, err)
	}
	o.logReview(id, event, note, Proposal{ID: proposalID, AgentID: m.AgentID, OldAttributeID: m.OldAttributeID,
		NewAttributeID: m.NewAttributeID, OldContent: deref(e.OldContent), NewContent: deref(e.NewContent),
		Confidence: m.Confidence, Signals: m.Signals})
	return id, nil
}

// logReview is the change log's line for one recorded review.
func (o *Ops) logReview(historyID, event, note string, p Proposal) {
	o.log().Info("proposal reviewed", "source", supersession.SourceOperator, "by", o.actor.ChangedBy, "operator", o.actor.Operator,
		"history_id", historyID, "proposal_id", p.ID,
		"decision", strings.TrimPrefix(event, "supersession_proposal_"), "agent_id", p.AgentID,
		"old_attribute_id", p.OldAttributeID, "new_attribute_id", p.NewAttributeID,
		"old_content", supersession.Short(p.OldContent), "new_content", supersession.Short(p.NewContent),
		"confidence", p.Confidence, "signals", p.Signals.Names(), "note", supersession.Short(note))
}

// ---- apply ----

// Applied is the outcome of applying one proposal.
type Applied struct {
	ProposalID string
	HistoryID  string // the attribute_superseded row, when applied
	Err        error  // a *Refusal, or a runtime error
}

// Apply applies proposals as real supersessions, each in its own
// transaction with the same guarded write as the sweep. A proposal whose
// rows changed since (old or new no longer active, contents changed, old
// now protected) is refused with the reason. Applying one proposal from two
// processes at once applies it once: the second finds the old row no longer
// active (and a unique index backs that up).
func (o *Ops) Apply(ctx context.Context, s Brake, proposalIDs []string) []Applied {
	out := make([]Applied, 0, len(proposalIDs))
	for _, id := range proposalIDs {
		a := Applied{ProposalID: id}
		if s.Frozen() {
			a.Err = frozen("apply")
		} else {
			a.HistoryID, a.Err = o.applyOne(ctx, id)
		}
		out = append(out, a)
	}
	return out
}

func (o *Ops) applyOne(ctx context.Context, proposalID string) (string, error) {
	op, db := "apply", o.db
	e, m, err := o.loadEntry(ctx, db, proposalID)
	if err != nil {
		return "", asOp(err, op)
	}
	if e.Event != "supersession_proposal" {
		return "", refuse(op, "history row %s is a %s, not a supersession_proposal", proposalID, e.Event)
	}
	meta := m.Metadata
	meta.ProposalID = proposalID
	meta.Mode = supersession.ModeProposal
	meta.RunID = ""
	item := supersession.Supersession{
		Meta: meta, OldContent: deref(e.OldContent), NewContent: deref(e.NewContent),
		Reason: "applied from proposal " + proposalID + ": " + deref(e.Reason),
	}
	items := []supersession.Supersession{item}
	var applied []supersession.Applied
	err = store.InTx(ctx, db, func(tx *sqlx.Tx) error {
		var err error
		applied, err = o.engine.Apply(ctx, tx, o.actor, items)
		return err
	})
	if store.IsUniqueViolation(err, "supersessiond_history_one_apply") {
		return "", refuse(op, "proposal %s was already applied", proposalID)
	}
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", proposalID, err)
	}
	o.engine.LogApplied(supersession.SourceOperator, items, applied)
	if len(applied) == 1 {
		return applied[0].HistoryID, nil
	}
	return "", refuse(op, "proposal %s no longer holds: %s", proposalID, o.whyNot(ctx, m.Metadata, deref(e.OldContent), deref(e.NewContent), proposalID))
}

// whyNot explains, after the fact, why a guarded supersession wrote nothing.
func (o *Ops) whyNot(ctx context.Context, m supersession.Metadata, oldContent, newContent, proposalID string) string {
	db := o.db
	if proposalID != "" {
		var h string
		if err := db.GetContext(ctx, &h, o.sql.AppliedFrom, proposalID); err == nil {
			return "it was already applied (history row " + h + ")"
		}
	}
	type row struct {
		ID           string            `db:"id"`
		AgentID      string            `db:"agent_id"`
		Status       string            `db:"status"`
		Kind         supersession.Kind `db:"kind"`
		Protected    bool              `db:"protected"`
		Content      string            `db:"content"`
		SupersededBy *string           `db:"superseded_by"`
		AspectID     *string           `db:"aspect_id"`
	}
	var rows []row
	_ = db.SelectContext(ctx, &rows, o.sql.PairState, pq.Array([]string{m.OldAttributeID, m.NewAttributeID}), m.AgentID)
	byID := map[string]row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	old, okOld := byID[m.OldAttributeID]
	nw, okNew := byID[m.NewAttributeID]
	switch {
	case !okOld:
		return fmt.Sprintf("old attribute %s no longer exists as an attribute of agent %s", m.OldAttributeID, m.AgentID)
	case !okNew:
		return fmt.Sprintf("new attribute %s no longer exists as an attribute of agent %s", m.NewAttributeID, m.AgentID)
	case old.Status != "active":
		by := ""
		if old.SupersededBy != nil {
			by = ", superseded_by " + *old.SupersededBy
		}
		return fmt.Sprintf("old attribute %s is no longer active (status %s%s)", old.ID, old.Status, by)
	case nw.Status != "active":
		return fmt.Sprintf("new attribute %s is no longer active (status %s)", nw.ID, nw.Status)
	case old.Protected:
		return fmt.Sprintf("old attribute %s is protected (supersessiond protect %s --off to allow it)", old.ID, old.ID)
	case old.Kind != supersession.KindAttribute || nw.Kind != supersession.KindAttribute:
		return "one of the attributes is now a constraint, which is never superseded"
	case old.Content != oldContent:
		return fmt.Sprintf("old attribute %s's content changed since (now %q)", old.ID, clip(old.Content, 60))
	case nw.Content != newContent:
		return fmt.Sprintf("new attribute %s's content changed since (now %q)", nw.ID, clip(nw.Content, 60))
	case (old.AspectID == nil) != (nw.AspectID == nil) || (old.AspectID != nil && *old.AspectID != *nw.AspectID):
		return "the attributes are no longer in the same aspect"
	}
	return "the rows changed concurrently; look again with `supersessiond history`"
}

// ---- undo ----

// Undo reverts one attribute_superseded event to its undo snapshot and
// writes supersession_reverted. It is refused when the attribute changed
// after the supersession (it is compared with what the supersession left),
// or when the event was already undone. The restored attribute is never
// retired again by the sweep or the inline hook with a sibling recorded at
// or before the undo (supersession.Vetoes): not only the reverted pair.
func (o *Ops) Undo(ctx context.Context, s Brake, historyID string) (string, error) {
	db := o.db
	op := "undo"
	if s.Frozen() {
		return "", frozen(op)
	}
	var revertID string
	var done func()
	err := store.InTx(ctx, db, func(tx *sqlx.Tx) error {
		e, m, err := o.loadEntry(ctx, tx, historyID)
		if err != nil {
			return asOp(err, op)
		}
		if e.Event != "attribute_superseded" {
			return refuse(op, "history row %s is a %s; only attribute_superseded events can be undone", historyID, e.Event)
		}
		if m.Undo == nil || m.OldAttributeID == "" {
			return refuse(op, "history row %s carries no undo snapshot", historyID)
		}
		var prior string
		if err := tx.GetContext(ctx, &prior, o.sql.PriorRevert, historyID); err == nil {
			return refuse(op, "supersession %s was already undone (history row %s)", historyID, prior)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("undo %s: %w", historyID, err)
		}
		if err := o.restore(ctx, tx, historyID, m); err != nil {
			return err
		}
		u := *m.Undo
		u.Row = nil // the supersession's row keeps it
		meta := o.withOperator(map[string]any{
			"agent_id": m.AgentID, "reverted_history_id": historyID,
			"old_attribute_id": m.OldAttributeID, "new_attribute_id": m.NewAttributeID,
			"restored": u,
		})
		revertID, err = o.insertHistory(ctx, tx, o.historyRow(e.MemoryID, "supersession_reverted", e.OldContent, e.NewContent,
			"reverted supersession "+historyID, meta))
		if store.IsUniqueViolation(err, "supersessiond_history_one_revert") {
			return refuse(op, "supersession %s was already undone", historyID)
		}
		done = func() {
			o.log().Info("supersession undone", "source", supersession.SourceOperator, "by", o.actor.ChangedBy, "operator", o.actor.Operator,
				"history_id", revertID,
				"reverted_history_id", historyID, "agent_id", m.AgentID, "old_attribute_id", m.OldAttributeID,
				"new_attribute_id", m.NewAttributeID, "old_content", supersession.Short(deref(e.OldContent)),
				"new_content", supersession.Short(deref(e.NewContent)), "restored_status", m.Undo.Status)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	done()
	return revertID, nil
}

// restore puts the old attribute of a supersession back as its undo
// snapshot says, under the row's lock, refusing when the row changed since.
// On a store whose retirement removes the row, or whose stack removed it
// since (Honcho's reconciler), the engine re-inserts it from the snapshot.
func (o *Ops) restore(ctx context.Context, tx *sqlx.Tx, historyID string, m *entryMeta) error {
	const op = "undo"
	var cur struct {
		AgentID      string     `db:"agent_id"`
		Status       string     `db:"status"`
		SupersededBy *string    `db:"superseded_by"`
		SupersededAt *time.Time `db:"superseded_at"`
		UpdatedAt    time.Time  `db:"updated_at"`
	}
	store := o.engine.Store()
	err := tx.GetContext(ctx, &cur, o.sql.LockForUndo, m.OldAttributeID, m.AgentID)
	gone := errors.Is(err, sql.ErrNoRows)
	switch {
	case gone && (store == schema.StoreAttributes || len(m.Undo.Row) == 0):
		return refuse(op, "attribute %s no longer exists as an attribute of agent %s", m.OldAttributeID, m.AgentID)
	case gone:
	case err != nil:
		return fmt.Errorf("undo %s: lock attribute %s: %w", historyID, m.OldAttributeID, err)
	case cur.AgentID != m.AgentID:
		return refuse(op, "attribute %s now belongs to agent %s, not %s", m.OldAttributeID, cur.AgentID, m.AgentID)
	default:
		if changed := differs(cur.Status, cur.SupersededBy, cur.SupersededAt, &cur.UpdatedAt, m); changed != "" {
			return refuse(op, "attribute %s changed after the supersession (%s); undoing would overwrite that change", m.OldAttributeID, changed)
		}
	}
	if store != schema.StoreAttributes {
		restored, err := o.engine.Restore(ctx, tx, m.OldAttributeID, m.Undo.Row, gone)
		if err != nil {
			return fmt.Errorf("undo %s: %w", historyID, err)
		}
		if !restored {
			return refuse(op, "attribute %s is back already", m.OldAttributeID)
		}
		return nil
	}
	u := m.Undo
	q, args, err := o.sql.Restore.Bind(map[string]any{"id": m.OldAttributeID, "status": u.Status,
		"superseded_by": u.SupersededBy, "superseded_at": u.SupersededAt})
	if err == nil {
		_, err = tx.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return fmt.Errorf("undo %s: restore attribute %s: %w", historyID, m.OldAttributeID, err)
	}
	return nil
}

// differs compares an attribute's state with what the supersession left.
func differs(status string, by *string, at, updated *time.Time, m *entryMeta) string {
	if status != "superseded" {
		return "status is now " + status
	}
	if by == nil || *by != m.NewAttributeID {
		return fmt.Sprintf("superseded_by is now %s", strOrNull(by))
	}
	if a := m.Applied; a != nil {
		if !sameTime(at, a.SupersededAt) {
			return "superseded_at changed (superseded again?)"
		}
		if !sameTime(updated, a.UpdatedAt) {
			return "updated_at changed (the row was edited)"
		}
	}
	return ""
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// ---- supersede ----

// SupersedeRequest is a manual supersession of olds by new.
type SupersedeRequest struct {
	Agent      string
	New        string
	Olds       []string
	ForceChain bool
	Reason     string
}

// Supersede supersedes every old attribute by new in one transaction: all or
// nothing. Refused: an old already superseded (unless ForceChain, which
// re-points it to new), ids of another agent, a constraint or protected old,
// new not active, new among the olds, ids that do not exist (all listed).
func (o *Ops) Supersede(ctx context.Context, s Brake, req SupersedeRequest) ([]supersession.Applied, error) {
	const op = "supersede"
	if s.Frozen() {
		return nil, frozen(op)
	}
	olds := dedupe(req.Olds)
	if slices.Contains(olds, req.New) {
		return nil, refuse(op, "%s is both the new attribute (--by) and one of the old ones", req.New)
	}
	var applied []supersession.Applied
	var logged []supersession.Supersession
	err := store.InTx(ctx, o.db, func(tx *sqlx.Tx) error {
		byID, err := o.lockForSupersede(ctx, tx, req.Agent, append([]string{req.New}, olds...))
		if err != nil {
			return err
		}
		if err := supersedable(req, olds, byID); err != nil {
			return err
		}
		nw := byID[req.New]
		items := make([]supersession.Supersession, 0, len(olds))
		for _, id := range olds {
			r := byID[id]
			items = append(items, supersession.Supersession{
				Meta: supersession.Metadata{
					AgentID: req.Agent, OldAttributeID: id, NewAttributeID: req.New, AspectID: deref(r.AspectID),
					Method: supersession.MethodManual, Confidence: 1, Reasoning: req.Reason, Mode: supersession.ModeManual,
				},
				OldContent: r.Content, NewContent: nw.Content, ForceChain: req.ForceChain, AnyAspect: true,
				Reason: reasonOr(req.Reason, "manual supersession"),
			})
		}
		applied, err = o.engine.Apply(ctx, tx, o.actor, items)
		if err == nil && len(applied) != len(items) {
			err = fmt.Errorf("supersede: %d of %d rows changed under their locks; rolled back", len(items)-len(applied), len(items))
		}
		logged = items
		return err
	})
	if err != nil {
		return nil, err
	}
	o.engine.LogApplied(supersession.SourceOperator, logged, applied)
	return applied, nil
}

// lockedAttribute is an attribute as supersede sees it, under its lock.
type lockedAttribute struct {
	ID           string            `db:"id"`
	AgentID      string            `db:"agent_id"`
	AspectID     *string           `db:"aspect_id"`
	Kind         supersession.Kind `db:"kind"`
	Status       string            `db:"status"`
	Protected    bool              `db:"protected"`
	SupersededBy *string           `db:"superseded_by"`
	Content      string            `db:"content"`
}

// lockForSupersede locks the named attributes of agent, in id order. Only
// this agent's rows are read: an id of another agent is, to the command, an
// id that does not exist; any such id refuses the whole request.
func (o *Ops) lockForSupersede(ctx context.Context, tx *sqlx.Tx, agent string, ids []string) (map[string]lockedAttribute, error) {
	var rows []lockedAttribute
	if err := tx.SelectContext(ctx, &rows, o.sql.LockForSupersede, pq.Array(ids), agent); err != nil {
		return nil, fmt.Errorf("supersede: lock attributes: %w", err)
	}
	byID := map[string]lockedAttribute{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	var missing []string
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, refuse("supersede", "not attributes of agent %s (no such id, or another agent's): %s; nothing was changed", agent, quoteList(missing))
	}
	return byID, nil
}

// supersedable refuses a manual supersession that breaks a rule: the new
// attribute must be an active attribute; an old one may not be a
// constraint, protected, or already superseded (unless ForceChain).
func supersedable(req SupersedeRequest, olds []string, byID map[string]lockedAttribute) error {
	const op = "supersede"
	nw := byID[req.New]
	if nw.Status != "active" {
		return refuse(op, "new attribute %s is not active (status %s)", nw.ID, nw.Status)
	}
	if nw.Kind != supersession.KindAttribute {
		return refuse(op, "new attribute %s is a %s; only attributes supersede", nw.ID, nw.Kind)
	}
	var problems []string
	for _, id := range olds {
		r := byID[id]
		switch {
		case r.Kind == supersession.KindConstraint:
			problems = append(problems, id+" is a constraint (never superseded)")
		case r.Kind != supersession.KindAttribute:
			problems = append(problems, fmt.Sprintf("%s has kind %q", id, r.Kind))
		case r.Protected:
			problems = append(problems, fmt.Sprintf("%s is protected (supersessiond protect %s --off first)", id, id))
		case r.Status == "superseded" && r.SupersededBy != nil && *r.SupersededBy == req.New:
			problems = append(problems, id+" is already superseded by "+req.New)
		case r.Status == "superseded" && !req.ForceChain:
			problems = append(problems, fmt.Sprintf("%s is already superseded by %s (--force-chain re-points it to %s)", id, strOrNull(r.SupersededBy), req.New))
		case r.Status != "active" && r.Status != "superseded":
			problems = append(problems, fmt.Sprintf("%s has status %s", id, r.Status))
		}
	}
	if len(problems) > 0 {
		return refuse(op, "%s; nothing was changed", strings.Join(problems, "; "))
	}
	return nil
}

// ---- protect ----

// Protect pins (or, with on=false, unpins) an attribute: nothing automatic
// ever supersedes a protected attribute. It writes attribute_protected or
// attribute_unprotected. Returns false when the attribute was already so.
func (o *Ops) Protect(ctx context.Context, s Brake, attrID string, on bool) (bool, error) {
	db := o.db
	op := "protect"
	if s.Frozen() {
		return false, frozen(op)
	}
	if o.engine.Store() == schema.StoreMem0 {
		return false, refuse(op, "protect is not available on store mem0: the mark would have to go into mem0's payload, "+
			"which mem0 hands back to its callers; reject the proposals about the memory instead")
	}
	changed, agent, content := false, "", ""
	err := store.InTx(ctx, db, func(tx *sqlx.Tx) error {
		var r struct {
			AgentID   string  `db:"agent_id"`
			MemoryID  *string `db:"memory_id"`
			Content   string  `db:"content"`
			Protected bool    `db:"protected"`
		}
		err := tx.GetContext(ctx, &r, o.sql.LockForProtect, attrID)
		if errors.Is(err, sql.ErrNoRows) {
			return refuse(op, "no attribute with id %q", attrID)
		}
		if err != nil {
			return fmt.Errorf("protect %s: %w", attrID, err)
		}
		if r.Protected == on {
			return nil
		}
		if o.engine.Store() != schema.StoreAttributes {
			err = o.engine.Protect(ctx, tx, attrID, on)
		} else {
			_, err = tx.ExecContext(ctx, o.sql.Protect, attrID, on)
		}
		if err != nil {
			return fmt.Errorf("protect %s: %w", attrID, err)
		}
		event := "attribute_protected"
		if !on {
			event = "attribute_unprotected"
		}
		memID := attrID
		if r.MemoryID != nil {
			memID = *r.MemoryID
		}
		meta := o.withOperator(map[string]any{"agent_id": r.AgentID, "attribute_id": attrID, "protected": on})
		if _, err := o.insertHistory(ctx, tx, o.historyRow(memID, event, r.Content, nil, nil, meta)); err != nil {
			return fmt.Errorf("protect %s: write history: %w", attrID, err)
		}
		changed, agent, content = true, r.AgentID, r.Content
		return nil
	})
	if err == nil && changed {
		o.log().Info("attribute protection changed", "source", supersession.SourceOperator, "by", o.actor.ChangedBy, "operator", o.actor.Operator,
			"attribute_id", attrID,
			"agent_id", agent, "protected", on, "content", supersession.Short(content))
	}
	return changed, err
}

// ---- helpers ----

// historyRow is the history row (insertHistorySQL's values, by name) the
// operator acting writes.
func (o *Ops) historyRow(memoryID, event string, oldContent, newContent, reason any, meta string) map[string]any {
	a := o.actor
	return map[string]any{"memory_id": memoryID, "event": event, "old_content": oldContent, "new_content": newContent,
		"changed_by": a.ChangedBy, "reason": reason, "metadata": meta, "actor_type": a.Type,
		"request_id": store.Nullable(a.RequestID), "session_id": store.Nullable(a.SessionID)}
}

// insertHistory writes an operator's history row and returns its id.
func (o *Ops) insertHistory(ctx context.Context, tx *sqlx.Tx, row map[string]any) (string, error) {
	q, args, err := o.sql.InsertHistory.Bind(row)
	if err != nil {
		return "", err
	}
	var id string
	err = tx.GetContext(ctx, &id, q, args...)
	return id, err
}

// log is the change log: the engine's logger (the daemon's, or the
// command's on stderr).
func (o *Ops) log() *slog.Logger { return o.engine.Logger() }

// asOp re-labels a lookup refusal with the operation that needed it.
func asOp(err error, op string) error {
	var r *Refusal
	if errors.As(err, &r) && r.Op == "lookup" {
		return &Refusal{Op: op, Reason: r.Reason}
	}
	return err
}

func strOrNull(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

func reasonOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
