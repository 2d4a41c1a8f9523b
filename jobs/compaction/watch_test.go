package compaction

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
)

// A clawbolt-style sweeper holding its recovery lock (another session, as
// clawbolt's start-up recovery holds it for its whole sweep) blocks the
// daemon's claims: nothing is claimed, no attempt counted, the report says
// why; once released, the next pass claims, and its attempt is counted in
// the same retry_count clawbolt's attempts were.
func TestStackRecoveryLockBlocksClaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.messages("a", 1, 4)
	id := e.event("a", stale, "pending", int64(1), int64(4))
	e.exec(`UPDATE compaction_events SET retry_count = 2 WHERE id = $1`, id) // clawbolt tried twice

	clawbolt, err := e.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer clawbolt.Close()
	var locked bool
	if err := clawbolt.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext('compaction_recovery:cleanup'))`).Scan(&locked); err != nil || !locked {
		t.Fatalf("the sweeper could not take its own lock: %v", err)
	}
	before := e.snapshot()
	j, reg := e.job()
	rep, err := j.Pass(ctx, e.cfg)
	if err != nil {
		t.Fatalf("a held lock is not a failure: %v", err)
	}
	if rep.Claimed != 0 || !rep.StackLockHeld || e.snapshot() != before {
		t.Fatalf("claimed %d while the stack held its lock (lock held reported: %t)", rep.Claimed, rep.StackLockHeld)
	}
	if !strings.Contains(skipReasons(rep), "compaction_recovery:cleanup") || !strings.Contains(rep.Text(), "compaction_recovery:cleanup") {
		t.Fatalf("the report does not say why nothing was claimed: %+v", rep.Skipped)
	}
	if n := metric(t, reg, "supersessiond_compaction_claims_blocked_total"); n != 1 {
		t.Fatalf("claims_blocked_total = %v", n)
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"stack_lock_held":true`) {
		t.Fatalf("--json does not say the lock was held: %s", b)
	}

	if _, err := clawbolt.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtext('compaction_recovery:cleanup'))`); err != nil {
		t.Fatal(err)
	}
	rep = e.pass()
	if rep.Claimed != 1 || rep.StackLockHeld {
		t.Fatalf("after the lock was released: claimed %d, lock held %t", rep.Claimed, rep.StackLockHeld)
	}
	if r := e.row(id); r.RetryCount != 3 || r.Status != "completed" {
		t.Fatalf("the event: %+v (want attempt 3 counted in retry_count, after clawbolt's two)", r)
	}
	// The claim's lock went with its transaction: the sweeper can take it.
	if err := clawbolt.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext('compaction_recovery:cleanup'))`).Scan(&locked); err != nil || !locked {
		t.Fatalf("the daemon kept clawbolt's lock after its claim: %v", err)
	}
}

// Another replica's claim, holding the stack's lock for its transaction
// at the moment this one claims, is not the stack's recovery: this pass
// claims and completes its event. (Issue: with the lock taken exclusive, a
// replica that claimed while another was between two claims skipped its
// pass, blaming clawbolt.)
func TestAnotherReplicasClaimDoesNotBlockClaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.messages("a", 1, 4)
	id := e.event("a", stale, "pending", int64(1), int64(4))
	replica, err := e.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replica.Rollback() }()
	var locked bool
	if err := replica.GetContext(ctx, &locked, stackLockSQL); err != nil || !locked {
		t.Fatalf("the other replica could not take the lock: %v", err)
	}
	rep := e.pass()
	if rep.Claimed != 1 || rep.StackLockHeld || rep.Completed != 1 {
		t.Fatalf("claimed %d, completed %d, lock held reported %t while another replica claimed: %s", rep.Claimed, rep.Completed, rep.StackLockHeld, rep.Text())
	}
	if r := e.row(id); r.Status != "completed" {
		t.Fatalf("the event: %+v", r)
	}
}

func skipReasons(rep *Report) string {
	var s []string
	for _, sk := range rep.Skipped {
		s = append(s, sk.Reason)
	}
	return strings.Join(s, "\n")
}

// On clawbolt's own schema the job cannot re-compact: it watches. It lists
// the events pending past staleAfter and those at clawbolt's retry cap,
// counts them in its gauges, never calls the LLM, and writes nothing.
func TestWatchOnClawbolt(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	pgtest.LoadStack(t, db, "../../testdata/stacks/clawbolt.sql")
	ctx := context.Background()
	plan := schema.Plan{On: map[schema.Job]bool{schema.Compaction: true}, Schema: "clawbolt", Own: "supersessiond", Tables: map[string]string{}}
	res, err := schema.Migrate(ctx, db.DB, plan, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Layout.Names.CompactionWatch || !res.Layout.OK() {
		t.Fatalf("clawbolt's schema: %s", res.Layout.Reports[schema.Compaction].Line())
	}
	e := newEnv(t)
	var events string
	snapshot := func() string {
		if err := db.Get(&events, `SELECT json_agg(c ORDER BY id)::text FROM clawbolt.compaction_events c`); err != nil {
			t.Fatal(err)
		}
		return events
	}
	before := snapshot()
	reg := prometheus.NewRegistry()
	j := New(jobs.Deps{DB: db.DB, Names: res.Layout.Names, Registry: reg, LLM: e.prov}, Options{})
	e.cfg.Mode = jobs.ModeLive
	rep, err := j.Pass(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Watch
	if w == nil || w.Pending != 3 || w.Stale != 3 || w.AtStackCap != 1 || len(w.Events) != 3 || rep.Claimed != 0 {
		t.Fatalf("watch: %+v", w)
	}
	// Event 5: three hours pending at clawbolt's cap; 2: encrypted, not
	// retried since; 3: no range, which clawbolt's recovery skips.
	capped := w.Events[0]
	if capped.EventID != 5 || !capped.AtStackCap || capped.RetryCount != 3 || capped.AgentID != "a81d5e07-2c9b-4f63-b0e4-9d7716c3e2f5" ||
		!strings.Contains(capped.Reason, "never be retried again") {
		t.Fatalf("the event at clawbolt's cap: %+v", capped)
	}
	if w.Events[1].EventID != 3 || !strings.Contains(w.Events[1].Reason, "no message range") || w.Events[2].EventID != 2 || w.Events[2].AtStackCap {
		t.Fatalf("the other events: %+v", w.Events[1:])
	}
	for name, want := range map[string]float64{
		"supersessiond_compaction_at_stack_cap_events": 1, "supersessiond_compaction_stale_events": 3, "supersessiond_compaction_watching": 1,
		"supersessiond_compaction_retries_total": 0,
	} {
		if got := metric(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if snapshot() != before || len(e.llm.received()) != 0 {
		t.Fatalf("the watch changed clawbolt's events or asked the LLM (%d prompts)", len(e.llm.received()))
	}
	if text := rep.Text(); !strings.Contains(text, "watching only") || !strings.Contains(text, "event 5 (user a81d5e07") {
		t.Fatalf("text:\n%s", text)
	}
	// A cap of 4 (another stack's): event 5 is no longer at it.
	e.cfg.StackMaxAttempts = 4
	if rep, err = j.Pass(ctx, e.cfg); err != nil || rep.Watch.AtStackCap != 0 {
		t.Fatalf("with stackMaxAttempts 4: %+v %v", rep.Watch, err)
	}
	// With a staleAfter longer than any has been pending, none is stale:
	// the capped one is listed all the same.
	e.cfg.StackMaxAttempts = 3
	e.cfg.StaleAfter = 4 * time.Hour
	if rep, err = j.Pass(ctx, e.cfg); err != nil || rep.Watch.Stale != 0 || len(rep.Watch.Events) != 1 || rep.Watch.Events[0].EventID != 5 {
		t.Fatalf("with staleAfter 4h: %+v %v", rep.Watch, err)
	}
}
