package tombstones

import (
	"fmt"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/jobs"
)

// Report says what one pass did. In a shadow pass (shadowMode or
// mutationsFrozen) nothing is changed: Preserved, Deleted and Released stay
// zero and the Would* counts say what a live pass would have done. (A live
// pass's own deletions never change another tombstone's fate: it only
// removes soft-deleted documents, and those were never live dependents.)
type Report struct {
	jobs.Run
	// Braked: the pass began live, and shadowMode or mutationsFrozen was
	// turned on while it ran; it changed nothing from then on.
	Braked bool `json:"braked,omitempty"`

	// Triage of tombstones awaiting it.
	Batches   int `json:"batches"`   // triage batches committed
	Examined  int `json:"examined"`  // tombstones triaged
	Preserved int `json:"preserved"` // kept: superseded and cited by a live document of the same workspace
	Deleted   int `json:"deleted"`   // hard-deleted at triage

	// Re-check of preserved tombstones.
	Rechecked int `json:"rechecked"` // preserved tombstones re-checked
	Released  int `json:"released"`  // hard-deleted: their last live dependent is gone
	// RecheckComplete is true when every preserved tombstone (but those
	// preserved during this pass) was re-checked since the previous pass
	// stopped: the re-check went round once.
	RecheckComplete bool `json:"recheck_complete"`

	// DeletedIDs are the documents the pass hard-deleted (at triage and
	// released), each recorded with its workspace and content digest in
	// supersessiond.deleted_documents under the pass's run id, the row kept
	// for keepDeleted (reconcile --restore). Purged is how many kept copies
	// older than that the pass dropped.
	DeletedIDs []string `json:"deleted_ids"`
	Purged     int      `json:"purged"`

	WouldPreserve int `json:"would_preserve"`
	WouldDelete   int `json:"would_delete"`
	WouldRelease  int `json:"would_release"`

	// Budget is the pass's time budget. When it stopped the pass (Stopped
	// is "budget"), LeftForLater is the triage backlog left to the next
	// passes.
	Budget        time.Duration `json:"-"`
	BudgetSeconds float64       `json:"budget_seconds"`
	LeftForLater  int64         `json:"left_for_later"`

	// Backlog is what awaits triage after the pass (soft-deleted, older than
	// minAge, not preserved); Held is how many preserved tombstones remain.
	// Both are -1 when the pass failed before counting them.
	Backlog int64 `json:"backlog"`
	Held    int64 `json:"held"`

	// Skipped is always empty: a pass leaves no tombstone alone for a
	// reason of its own (a row another pass holds is that pass's).
	Skipped []jobs.Skip `json:"skipped"`
}

// Shadow reports whether the pass changed nothing (shadowMode or
// mutationsFrozen when it began).
func (r *Report) Shadow() bool { return r.Mode != jobs.ModeLive }

// BudgetExhausted reports whether the pass stopped at its time budget.
func (r *Report) BudgetExhausted() bool { return r.Stopped == jobs.StoppedBudget }

// Text is the report for people (`supersessiond reconcile --once`).
func (r *Report) Text() string {
	var b strings.Builder
	mode := "live"
	if r.Shadow() {
		mode = string(r.Mode) + ": nothing changed"
	}
	fmt.Fprintf(&b, "tombstone reconciliation (%s) in %s\n", mode, r.Duration().Round(time.Millisecond))
	batches := "batches"
	if r.Batches == 1 {
		batches = "batch"
	}
	fmt.Fprintf(&b, "  triage      %d examined in %d %s\n", r.Examined, r.Batches, batches)
	if r.Shadow() {
		fmt.Fprintf(&b, "  would keep  %d superseded, cited by a live document of the same workspace (embedding would be removed)\n", r.WouldPreserve)
		fmt.Fprintf(&b, "  would drop  %d\n", r.WouldDelete)
		fmt.Fprintf(&b, "  re-check    %d preserved re-checked, %d would be released\n", r.Rechecked, r.WouldRelease)
	} else {
		fmt.Fprintf(&b, "  preserved   %d superseded, cited by a live document of the same workspace (embedding removed)\n", r.Preserved)
		fmt.Fprintf(&b, "  deleted     %d\n", r.Deleted)
		fmt.Fprintf(&b, "  re-check    %d preserved re-checked, %d released (last live dependent gone)\n", r.Rechecked, r.Released)
		if len(r.DeletedIDs) > 0 {
			fmt.Fprintf(&b, "  recorded    %d deleted documents under run %s (--json lists them); undo with `supersessiond reconcile --restore --run %s`\n",
				len(r.DeletedIDs), r.RunID, r.RunID)
		}
		if r.Purged > 0 {
			fmt.Fprintf(&b, "  purged      %d kept copies of documents deleted before maintenance.tombstones.keepDeleted\n", r.Purged)
		}
	}
	if r.BudgetExhausted() {
		fmt.Fprintf(&b, "  budget      %s used up: %d left for later passes\n", r.Budget, r.LeftForLater)
	} else {
		fmt.Fprintf(&b, "  budget      %s, not used up\n", r.Budget)
	}
	fmt.Fprintf(&b, "  now         %s awaiting triage, %s preserved\n", count(r.Backlog), count(r.Held))
	return b.String()
}

func count(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}
