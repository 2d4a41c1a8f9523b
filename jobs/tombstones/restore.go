package tombstones

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/jobs"
)

// ErrRefused is a restore the configuration forbids (mutationsFrozen). The
// CLI maps it to exit code 4.
var ErrRefused = errors.New("refused")

// RestoreRequest selects the deletions to undo: documents by id, every
// document one pass deleted (its run id), or both.
type RestoreRequest struct {
	IDs    []string
	RunID  string
	DryRun bool // say what would be restored, change nothing
}

// Restore outcomes.
const (
	OutcomeRestored      = "restored"
	OutcomeWouldRestore  = "would_restore"
	OutcomeNotRestorable = "not_restorable"
)

// RestoredDocument is what became of one requested document.
type RestoredDocument struct {
	ID            string     `json:"id"`
	WorkspaceName string     `json:"workspace_name,omitempty"`
	RunID         string     `json:"run_id,omitempty"`
	ContentSHA256 string     `json:"content_sha256,omitempty"`
	DeletedAt     *time.Time `json:"deleted_at,omitempty"`
	Outcome       string     `json:"outcome"`
	Reason        string     `json:"reason,omitempty"`
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	DryRun    bool               `json:"dry_run"`
	Restored  int                `json:"restored"`
	Refused   int                `json:"not_restorable"`
	Documents []RestoredDocument `json:"documents"`
}

// Text is the report for people.
func (r *RestoreReport) Text() string {
	var b strings.Builder
	for _, d := range r.Documents {
		fmt.Fprintf(&b, "document %s", d.ID)
		if d.WorkspaceName != "" {
			fmt.Fprintf(&b, " (workspace %s, deleted %s by run %s)", d.WorkspaceName, d.DeletedAt.UTC().Format(time.RFC3339), d.RunID)
		}
		fmt.Fprintf(&b, ": %s", strings.ReplaceAll(d.Outcome, "_", " "))
		if d.Reason != "" {
			fmt.Fprintf(&b, ": %s", d.Reason)
		}
		b.WriteString("\n")
	}
	verb := "restored"
	if r.DryRun {
		verb = "would restore"
	}
	fmt.Fprintf(&b, "%s %d of %d documents", verb, r.Restored, len(r.Documents))
	if r.Restored > 0 {
		b.WriteString(", as they were when deleted (still soft-deleted: the next pass triages them again, " +
			"so fix what made the pass wrong first, or clear their deleted_at)")
	}
	b.WriteString("\n")
	return b.String()
}

// deletion is a recorded deletion, as deletionsSQL reads it.
type deletion struct {
	Seq           int64      `db:"seq"`
	RunID         string     `db:"run_id"`
	DocumentID    string     `db:"document_id"`
	WorkspaceName string     `db:"workspace_name"`
	ContentSHA256 string     `db:"content_sha256"`
	Phase         string     `db:"phase"`
	DeletedAt     time.Time  `db:"deleted_at"`
	PurgedAt      *time.Time `db:"purged_at"`
	RestoredAt    *time.Time `db:"restored_at"`
	Document      string     `db:"document"`
}

// Restore puts back documents a pass hard-deleted, each from the row kept
// with its record, exactly as it was (soft-deleted, with its embedding), in
// a transaction of its own, and records the restore. It is an operator's
// command: it acts in shadow mode and refuses under mutationsFrozen. A
// document whose copy was purged, that was restored already, or whose id
// exists again is not restored, with the reason.
func (j *Job) Restore(ctx context.Context, s Settings, req RestoreRequest) (*RestoreReport, error) {
	if s.Mode == jobs.ModeFrozen {
		return nil, fmt.Errorf("restore %w: memory.pipelineV2.mutationsFrozen is true (the emergency brake); nothing was restored", ErrRefused)
	}
	var found []deletion
	if err := j.db.SelectContext(ctx, &found, j.sql.Deletions, pq.Array(req.IDs), req.RunID); err != nil {
		return nil, fmt.Errorf("tombstones: read the record of deleted documents: %w", err)
	}
	var columns []string
	if err := j.db.SelectContext(ctx, &columns, j.sql.Columns); err != nil {
		return nil, fmt.Errorf("tombstones: read the documents table's columns: %w", err)
	}
	r := &RestoreReport{DryRun: req.DryRun, Documents: []RestoredDocument{}}
	seen := map[string]bool{}
	for _, d := range found {
		seen[d.DocumentID] = true
		doc := RestoredDocument{ID: d.DocumentID, WorkspaceName: d.WorkspaceName, RunID: d.RunID, ContentSHA256: d.ContentSHA256,
			DeletedAt: &d.DeletedAt}
		doc.Outcome, doc.Reason = j.restoreOne(ctx, d, columns, req.DryRun)
		r.add(doc)
	}
	for _, id := range req.IDs {
		if !seen[id] {
			seen[id] = true
			r.add(RestoredDocument{ID: id, Outcome: OutcomeNotRestorable, Reason: "no deletion of this document is recorded"})
		}
	}
	if req.RunID != "" && len(found) == 0 {
		return r, fmt.Errorf("restore: run %s deleted no document that is recorded", req.RunID)
	}
	return r, nil
}

func (r *RestoreReport) add(d RestoredDocument) {
	if d.Outcome == OutcomeNotRestorable {
		r.Refused++
	} else {
		r.Restored++
	}
	r.Documents = append(r.Documents, d)
}

// restoreOne restores one recorded deletion and returns its outcome and,
// when it is not restored, why.
func (j *Job) restoreOne(ctx context.Context, d deletion, columns []string, dryRun bool) (string, string) {
	switch {
	case d.RestoredAt != nil:
		return OutcomeNotRestorable, "already restored at " + d.RestoredAt.UTC().Format(time.RFC3339)
	case d.Document == "":
		return OutcomeNotRestorable, fmt.Sprintf("its copy was purged at %s (kept for maintenance.tombstones.keepDeleted); its content's SHA-256 was %s",
			d.PurgedAt.UTC().Format(time.RFC3339), d.ContentSHA256)
	}
	cols, err := restorable(d.Document, columns)
	if err != nil {
		return OutcomeNotRestorable, err.Error()
	}
	if dryRun {
		var exists bool
		if err := j.db.GetContext(ctx, &exists, j.sql.Exists, d.DocumentID); err != nil {
			return OutcomeNotRestorable, "could not look for it: " + err.Error()
		}
		if exists {
			return OutcomeNotRestorable, "a document with this id exists"
		}
		return OutcomeWouldRestore, ""
	}
	tx, err := j.db.BeginTxx(ctx, nil)
	if err != nil {
		return OutcomeNotRestorable, "could not begin: " + err.Error()
	}
	defer func() { _ = tx.Rollback() }()
	var one int
	err = tx.GetContext(ctx, &one, strings.ReplaceAll(j.sql.Restore, columnsMark, cols), d.Document)
	if errors.Is(err, sql.ErrNoRows) {
		return OutcomeNotRestorable, "a document with this id (or another of its unique keys) exists"
	}
	if err == nil {
		_, err = tx.ExecContext(ctx, j.sql.MarkRestored, d.Seq)
	}
	if err == nil {
		err = tx.Commit()
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "42501" { // insufficient_privilege
		return OutcomeNotRestorable, "the connecting role may not write it back (" + pqErr.Message + "): " +
			"restore as the tables' owner, the role that runs migrate"
	}
	if err != nil {
		return OutcomeNotRestorable, "the database refused it: " + err.Error()
	}
	j.log.Info("deleted document restored", "document_id", d.DocumentID, "workspace", d.WorkspaceName, "run_id", d.RunID,
		"deleted_at", d.DeletedAt, "content_sha256", d.ContentSHA256)
	return OutcomeRestored, ""
}

// restorable is the quoted column list to restore a kept row with: its keys
// that the table has now, in the table's order.
func restorable(document string, columns []string) (string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(document), &keys); err != nil {
		return "", fmt.Errorf("its kept copy does not parse: %v", err)
	}
	var cols []string
	for _, c := range columns {
		if _, ok := keys[c]; ok {
			cols = append(cols, pq.QuoteIdentifier(c))
		}
	}
	if !slices.Contains(cols, pq.QuoteIdentifier("id")) {
		return "", errors.New("the documents table has no column of its kept copy's id")
	}
	return strings.Join(cols, ", "), nil
}
