package audit_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/jobs"
)

// records decodes a JSON log into its records with the message msg.
func records(t *testing.T, log *bytes.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// Every change an operator makes is one log line: the review, the apply
// (a supersession, source operator), the undo and a manual supersede.
func TestOperatorChangesAreLogged(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	var log bytes.Buffer
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	ops := audit.New(db.DB, nil, engine)

	reviewID, err := ops.Review(ctx, proposal, true, "Sam confirmed")
	if err != nil {
		t.Fatal(err)
	}
	applied := ops.Apply(ctx, cfg(), []string{proposal})
	if applied[0].Err != nil {
		t.Fatal(applied[0].Err)
	}
	revertID, err := ops.Undo(ctx, cfg(), applied[0].HistoryID)
	if err != nil {
		t.Fatal(err)
	}
	asp := s.Aspect("a", "Sam", "work")
	s.Add(
		memtest.Attr{ID: "w1", Agent: "a", Aspect: asp, Content: "Works at Figma"},
		memtest.Attr{ID: "w2", Agent: "a", Aspect: asp, Content: "Works at Stripe"},
	)
	manual, err := ops.Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "a", New: "w2", Olds: []string{"w1"}, Reason: "moved"})
	if err != nil {
		t.Fatal(err)
	}

	reviews := records(t, &log, "proposal reviewed")
	if len(reviews) != 1 || reviews[0]["history_id"] != reviewID || reviews[0]["proposal_id"] != proposal ||
		reviews[0]["decision"] != "accepted" || reviews[0]["old_content"] != "Lives in Toronto" || reviews[0]["note"] != "Sam confirmed" {
		t.Fatalf("review line: %v", reviews)
	}
	sups := records(t, &log, "supersession applied")
	if len(sups) != 2 {
		t.Fatalf("want the apply and the supersede, got %v", sups)
	}
	fromProposal, byHand := sups[0], sups[1]
	if fromProposal["history_id"] != applied[0].HistoryID || fromProposal["proposal_id"] != proposal || fromProposal["source"] != "operator" ||
		fromProposal["new_content"] != "Lives in Vancouver" || fromProposal["signals"] != "value_conflict" {
		t.Fatalf("apply line: %v", fromProposal)
	}
	if byHand["history_id"] != manual[0].HistoryID || byHand["method"] != "manual" || byHand["old_content"] != "Works at Figma" || byHand["source"] != "operator" {
		t.Fatalf("supersede line: %v", byHand)
	}
	undos := records(t, &log, "supersession undone")
	if len(undos) != 1 || undos[0]["history_id"] != revertID || undos[0]["reverted_history_id"] != applied[0].HistoryID ||
		undos[0]["agent_id"] != "a" || undos[0]["restored_status"] != "active" {
		t.Fatalf("undo line: %v", undos)
	}

	// A refused change logs nothing.
	log.Reset()
	if _, err := ops.Undo(ctx, cfg(), applied[0].HistoryID); err == nil {
		t.Fatal("a second undo must be refused")
	}
	if ops.Apply(ctx, cfg(), []string{proposal})[0].Err == nil {
		t.Fatal("a second apply must be refused")
	}
	if log.Len() != 0 {
		t.Fatalf("refusals are not changes: %s", log.String())
	}

	// A bulk review logs each decision it records, and nothing when dry.
	s.Add(
		memtest.Attr{ID: "d1", Agent: "a", Aspect: s.Aspect("a", "Sam", "diet"), Content: "Is vegetarian"},
		memtest.Attr{ID: "d2", Agent: "a", Aspect: s.Aspect("a", "Sam", "diet"), Content: "Is no longer vegetarian"},
	)
	sweepOnce(t, db.DB, cfg(shadowOn))
	if _, err := ops.ReviewAll(ctx, audit.BulkReview{DryRun: true}); err != nil || log.Len() != 0 {
		t.Fatalf("a dry bulk review: %v\n%s", err, log.String())
	}
	res, err := ops.ReviewAll(ctx, audit.BulkReview{Note: "bulk"})
	if err != nil || len(res.Decided) == 0 {
		t.Fatalf("bulk review: %v %+v", err, res)
	}
	bulk := records(t, &log, "proposal reviewed")
	if len(bulk) != len(res.Decided) {
		t.Fatalf("%d decisions, %d log lines", len(res.Decided), len(bulk))
	}
	for i, d := range res.Decided {
		if bulk[i]["history_id"] != d.HistoryID || bulk[i]["proposal_id"] != d.Proposal.ID || bulk[i]["decision"] != "rejected" || bulk[i]["note"] != "bulk" {
			t.Errorf("line %d: %v, decision %+v", i, bulk[i], d)
		}
	}
}
