package supersession

import (
	"context"
	"fmt"
	"sort"
)

// Planned is a decision a dry run found: what a real pass would write.
type Planned struct {
	// Action is supersede, propose(shadow) or propose(review).
	Action     string  `json:"action"`
	AgentID    string  `json:"agent_id"`
	AspectID   string  `json:"aspect_id"`
	OldID      string  `json:"old_attribute_id"`
	OldContent string  `json:"old_content"`
	NewID      string  `json:"new_attribute_id"`
	NewContent string  `json:"new_content"`
	Method     Method  `json:"method"`
	Confidence float64 `json:"confidence"`
	Signals    Signals `json:"signals"`
}

// Actions of a planned decision.
const (
	ActionSupersede     = "supersede"
	ActionProposeShadow = "propose(shadow)"
	ActionProposeReview = "propose(review)"
)

// dryRun records what write would do with the candidates and writes
// nothing: a supersession for each live decision, a proposal for each other
// one, but for the proposals that exist already (proposeSQL would find them
// in place and write nothing). It only reads.
func (e *Engine) dryRun(ctx context.Context, cands []Candidate, t *Tally) error {
	var olds, news []string
	for _, c := range cands {
		if c.Mode.Proposed() {
			olds, news = append(olds, c.Old.ID), append(news, c.New.ID)
		}
	}
	exists := map[[2]string]bool{}
	if len(olds) > 0 {
		var err error
		if exists, err = e.attrs.proposed(ctx, olds, news); err != nil {
			return fmt.Errorf("supersession: dry run: %w", err)
		}
	}
	for _, c := range cands {
		action := ActionSupersede
		switch {
		case c.Mode.Proposed() && exists[[2]string{c.Old.ID, c.New.ID}]:
			t.skip(SkipDuplicate, 1)
			continue
		case c.Mode == ModeShadow:
			action = ActionProposeShadow
			t.ProposalsShadow++
		case c.Mode == ModeReview:
			action = ActionProposeReview
			t.ProposalsReview++
		default:
			t.Supersessions++
		}
		t.Planned = append(t.Planned, Planned{
			Action: action, AgentID: c.Old.AgentID, AspectID: c.Old.AspectID,
			OldID: c.Old.ID, OldContent: c.Old.Content.String, NewID: c.New.ID, NewContent: c.New.Content.String,
			Method: c.Method, Confidence: round3(c.Confidence), Signals: c.Signals,
		})
	}
	sort.Slice(t.Planned, func(i, j int) bool {
		a, b := t.Planned[i], t.Planned[j]
		if a.AgentID != b.AgentID {
			return a.AgentID < b.AgentID
		}
		if a.AspectID != b.AspectID {
			return a.AspectID < b.AspectID
		}
		return a.OldID < b.OldID
	})
	return nil
}
