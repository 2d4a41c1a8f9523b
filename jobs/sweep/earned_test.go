package sweep_test

import (
	"context"
	"testing"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// reviewed records decided proposals of one rule (a heuristic signal) for
// another agent's pairs: accepted ones, then rejected ones.
func reviewed(s *memtest.Seeder, signal string, accepted, rejected int) {
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata)
		SELECT 'p-' || $1 || '-' || i, 'm-' || i, 'supersession_proposal', 'supersessiond:sweep',
		       jsonb_build_object('agent_id', 'z', 'method', 'heuristic', 'mode', 'probation', 'old_attribute_id', 'zo' || i,
		                          'new_attribute_id', 'zn' || i, 'signals', jsonb_build_array(jsonb_build_object('name', $1::text, 'confidence', 0.9)))
		FROM generate_series(1, $2::int + $3::int) i`, signal, accepted, rejected)
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata)
		SELECT 'r-' || $1 || '-' || i, 'm-' || i,
		       CASE WHEN i <= $2::int THEN 'supersession_proposal_accepted' ELSE 'supersession_proposal_rejected' END, 'supersessiond:cli',
		       jsonb_build_object('agent_id', 'z', 'proposal_id', 'p-' || $1 || '-' || i)
		FROM generate_series(1, $2::int + $3::int) i`, signal, accepted, rejected)
}

// Under earned enforcement (SPEC §13) a live decision is applied only when
// its rule's Wilson lower bound reaches the target: value_conflict with 35
// accepted reviews applies (35 of 35: 0.90); with none, with too few, or
// with rejections beside them it proposes, in probation, naming the rule.
func TestEarnedRulesApplyAndOthersPropose(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		accepted, rejected int
		applies            bool
	}{
		{"no reviews", 0, 0, false},
		{"too few reviews", 20, 0, false},
		{"enough accepted", 35, 0, true},
		{"rejections beside them", 35, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			s.Moves("a", "p", 1, "Toronto", "Vancouver")
			reviewed(s, "value_conflict", tc.accepted, tc.rejected)
			j, _ := policyJob(db.DB, supersession.Policy{Earned: true})
			r := once(t, j, live(), sweep.Options{})
			st, _ := s.Status("p0-1")
			if got := st == "superseded"; got != tc.applies || r.Supersessions+r.ProposalsProbation != 1 {
				t.Fatalf("p0-1 is %s (applied: want %v): %+v", st, tc.applies, r.Tally)
			}
			event, mode := "supersession_proposal", "probation"
			if tc.applies {
				event, mode = "attribute_superseded", "live"
			}
			if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = $1 AND metadata->>'agent_id' = 'a'
				AND metadata->>'mode' = $2 AND metadata->>'rule' = 'value_conflict'`, event, mode); n != 1 {
				t.Fatalf("no %s row in mode %s naming its rule", event, mode)
			}
		})
	}
}

// An undo of what an earned rule applied sends it back to probation at the
// next decision; so does a rejection.
func TestAnUndoSendsARuleBackToProbation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspects := s.Moves("a", "p", 2, "Toronto", "Vancouver")
	reviewed(s, "value_conflict", 35, 0)
	// Only the first aspect: the second is classified later.
	s.Exec(`UPDATE entity_attributes SET aspect_id = NULL WHERE aspect_id = $1`, aspects[1])
	j, _ := policyJob(db.DB, supersession.Policy{Earned: true})
	if r := once(t, j, live(), sweep.Options{}); r.Supersessions != 1 {
		t.Fatalf("earned: %+v", r.Tally)
	}
	var applied string
	if err := db.Get(&applied, `SELECT id FROM memory_history WHERE event = 'attribute_superseded'`); err != nil {
		t.Fatal(err)
	}
	if _, err := opsOf(db.DB).Undo(ctx, live(), applied); err != nil {
		t.Fatal(err)
	}
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id LIKE 'p1-%'`, aspects[1])
	r := once(t, j, live(), sweep.Options{})
	if st, _ := s.Status("p1-1"); st != "active" || r.ProposalsProbation != 1 || r.Supersessions != 0 {
		t.Fatalf("after the undo p1-1 is %s: %+v", st, r.Tally)
	}
}

// The LLM judge is a rule of its own, per model: under earned with no
// reviews its decision is a proposal naming llm:<model>, with the model
// and the LLM's reasoning in its metadata.
func TestTheLLMJudgeIsARulePerModel(t *testing.T) {
	t.Parallel()
	srv := scripted(t, transport)
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedTransport(s, "Sam", "t")
	j, _ := policyJob(db.DB, supersession.Policy{Earned: true})
	r := once(t, j, llmCfg(srv), sweep.Options{})
	if r.ProposalsProbation != 1 {
		t.Fatalf("%+v", r.Tally)
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal' AND metadata->>'mode' = 'probation'
		AND metadata->>'rule' = 'llm:test-model' AND metadata->>'model' = 'test-model' AND metadata->>'method' = 'semantic'
		AND metadata->>'reasoning' LIKE '%[2] makes [1] no longer true%'`); n != 1 {
		t.Fatal("the semantic proposal does not name its rule, model and reasoning")
	}
}
