package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func cfg(mut ...func(*config.Config)) *config.Config {
	c := config.Default()
	for _, f := range mut {
		f(c)
	}
	return c
}

func shadowOn(c *config.Config) { c.Memory.PipelineV2.ShadowMode = true }
func frozenOn(c *config.Config) { c.Memory.PipelineV2.MutationsFrozen = true }

func sweepOnce(t *testing.T, db *sqlx.DB, c *config.Config) *sweep.Report {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	engine := supersession.New(jobs.Deps{DB: db, Logger: log, Registry: prometheus.NewRegistry()})
	r, err := sweep.New(jobs.Deps{DB: db, Logger: log}, engine).Once(ctx, daemon.SettingsOf(c).Sweep, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fixture: agent a with a contradiction (a1 → a2) swept in shadow mode, so
// there is one proposal to work with.
func fixture(t *testing.T) (*pgtest.DB, *memtest.Seeder, string) {
	t.Helper()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "a1", Agent: "a", Aspect: asp, Content: "Lives in Toronto", MemoryID: "m-a1"},
		memtest.Attr{ID: "a2", Agent: "a", Aspect: asp, Content: "Lives in Vancouver"},
	)
	sweepOnce(t, db.DB, cfg(shadowOn))
	var proposal string
	if err := db.Get(&proposal, `SELECT id FROM memory_history WHERE event = 'supersession_proposal'`); err != nil {
		t.Fatal(err)
	}
	return db, s, proposal
}

func refused(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, audit.ErrRefused) {
		t.Fatalf("want a refusal (%s), got %v", want, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q does not say %q", err, want)
	}
}

func TestHistoryFiltersAndFormats(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata, created_at) VALUES
		('old-b', 'x', 'agent_event', 'agent', '{"agent_id":"b"}', now() - interval '3 days'),
		('nometa', 'y', 'agent_event', 'agent', NULL, now() - interval '1 hour')`)

	all, err := opsOf(db.DB).History(ctx, audit.Filter{})
	if err != nil || len(all) != 3 || all[0].ID != proposal {
		t.Fatalf("newest first: %v %v", all, err)
	}
	byAgent, _ := opsOf(db.DB).History(ctx, audit.Filter{Agent: "b"})
	byEvent, _ := opsOf(db.DB).History(ctx, audit.Filter{Event: "supersession_proposal"})
	since, _ := audit.ParseSince("2d", time.Now())
	recent, _ := opsOf(db.DB).History(ctx, audit.Filter{Since: since})
	limited, _ := opsOf(db.DB).History(ctx, audit.Filter{Limit: 1})
	if len(byAgent) != 1 || len(byEvent) != 1 || len(recent) != 2 || len(limited) != 1 {
		t.Fatalf("filters: agent %d event %d since %d limit %d", len(byAgent), len(byEvent), len(recent), len(limited))
	}

	var js bytes.Buffer
	if err := audit.WriteJSON(&js, all); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("one object per line: %q", js.String())
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &obj); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason", "metadata", "created_at", "actor_type", "session_id", "request_id"} {
		if _, ok := obj[col]; !ok {
			t.Errorf("json lacks column %s", col)
		}
	}
	if m, ok := obj["metadata"].(map[string]any); !ok || m["old_attribute_id"] != "a1" {
		t.Fatalf("metadata must be an object: %v", obj["metadata"])
	}

	var tb bytes.Buffer
	if err := audit.WriteTable(&tb, all); err != nil {
		t.Fatal(err)
	}
	out := tb.String()
	for _, want := range []string{"TIME", "EVENT", "supersession_proposal (shadow)", "Lives in Toronto → Lives in Vancouver", "value_conflict", proposal} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if _, err := audit.ParseSince("yesterday", time.Now()); err == nil {
		t.Fatal("garbage --since must be an error")
	}
}

func TestReview(t *testing.T) {
	t.Parallel()
	db, _, proposal := fixture(t)
	id, err := opsOf(db.DB).Review(ctx, proposal, true, "checked with Sam")
	if err != nil || id == "" {
		t.Fatal(err)
	}
	var note string
	if err := db.Get(&note, `SELECT metadata->>'note' FROM memory_history WHERE event = 'supersession_proposal_accepted' AND metadata->>'proposal_id' = $1`, proposal); err != nil || note != "checked with Sam" {
		t.Fatalf("note %q %v", note, err)
	}
	_, err = opsOf(db.DB).Review(ctx, proposal, false, "")
	refused(t, err, "already reviewed")
	_, err = opsOf(db.DB).Review(ctx, id, true, "")
	refused(t, err, "not a supersession_proposal")
	_, err = opsOf(db.DB).Review(ctx, "nope", true, "")
	refused(t, err, "no memory_history row")
}

func TestApplyProposal(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	res := opsOf(db.DB).Apply(ctx, cfg(shadowOn), []string{proposal}) // shadowMode does not stop operators
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if st, by := s.Status("a1"); st != "superseded" || by != "a2" {
		t.Fatalf("a1: %s %q", st, by)
	}
	var pid, method, changedBy string
	if err := db.QueryRow(`SELECT metadata->>'proposal_id', metadata->>'method', changed_by FROM memory_history WHERE id = $1`, res[0].HistoryID).
		Scan(&pid, &method, &changedBy); err != nil {
		t.Fatal(err)
	}
	if pid != proposal || method != "heuristic" || changedBy != "supersessiond:cli" {
		t.Fatalf("attribute_superseded: proposal_id %q method %q changed_by %q", pid, method, changedBy)
	}
	again := opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})
	refused(t, again[0].Err, "already applied")
}

func TestApplyRefusesChangedRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, mutate, want string
	}{
		{"old content edited", `UPDATE entity_attributes SET content = 'Lives in Toronto, Ontario' WHERE id = 'a1'`, "content changed"},
		{"new content edited", `UPDATE entity_attributes SET content = 'Lives in Victoria' WHERE id = 'a2'`, "content changed"},
		{"old deleted", `UPDATE entity_attributes SET status = 'deleted' WHERE id = 'a1'`, "no longer active"},
		{"new superseded", `UPDATE entity_attributes SET status = 'superseded' WHERE id = 'a2'`, "new attribute a2 is no longer active"},
		{"old protected", `UPDATE entity_attributes SET protected = true WHERE id = 'a1'`, "protected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, s, proposal := fixture(t)
			s.Exec(tc.mutate)
			res := opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})
			refused(t, res[0].Err, tc.want)
			if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != 0 {
				t.Fatal("nothing may be written")
			}
		})
	}
}

func TestConcurrentApplyAppliesOnce(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	var wg sync.WaitGroup
	results := make([]audit.Applied, 8)
	for i := range results {
		wg.Go(func() { results[i] = opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})[0] })
	}
	wg.Wait()
	ok := 0
	for _, r := range results {
		if r.Err == nil {
			ok++
		} else if !errors.Is(r.Err, audit.ErrRefused) {
			t.Fatalf("unexpected error: %v", r.Err)
		}
	}
	if ok != 1 || s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`) != 1 {
		t.Fatalf("%d applied", ok)
	}
}

func TestUndo(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	applied := opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})[0]
	if applied.Err != nil {
		t.Fatal(applied.Err)
	}
	revert, err := opsOf(db.DB).Undo(ctx, cfg(shadowOn), applied.HistoryID)
	if err != nil {
		t.Fatal(err)
	}
	if st, by := s.Status("a1"); st != "active" || by != "" {
		t.Fatalf("a1 after undo: %s %q", st, by)
	}
	if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE id = 'a1' AND superseded_at IS NULL`); n != 1 {
		t.Fatal("superseded_at must be restored to NULL")
	}
	var reverted, old string
	if err := db.QueryRow(`SELECT metadata->>'reverted_history_id', metadata->>'old_attribute_id' FROM memory_history WHERE id = $1`, revert).Scan(&reverted, &old); err != nil {
		t.Fatal(err)
	}
	if reverted != applied.HistoryID || old != "a1" {
		t.Fatalf("supersession_reverted metadata: %s %s", reverted, old)
	}
	_, err = opsOf(db.DB).Undo(ctx, cfg(), applied.HistoryID)
	refused(t, err, "already undone")
	_, err = opsOf(db.DB).Undo(ctx, cfg(), proposal)
	refused(t, err, "only attribute_superseded")

	// The sweep respects the undo: it does not supersede a1 by a2 again.
	if r := sweepOnce(t, db.DB, cfg()); r.Supersessions != 0 {
		t.Fatalf("sweep re-applied an undone supersession: %+v", r)
	}
}

func TestUndoRefusesWhenRowChangedSince(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"edited":           `UPDATE entity_attributes SET updated_at = now() + interval '1 second' WHERE id = 'a1'`,
		"re-pointed":       `UPDATE entity_attributes SET superseded_by = 'zzz' WHERE id = 'a1'`,
		"status changed":   `UPDATE entity_attributes SET status = 'deleted' WHERE id = 'a1'`,
		"superseded again": `UPDATE entity_attributes SET superseded_at = now() + interval '1 minute' WHERE id = 'a1'`,
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, s, proposal := fixture(t)
			applied := opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})[0]
			if applied.Err != nil {
				t.Fatal(applied.Err)
			}
			s.Exec(mutate)
			_, err := opsOf(db.DB).Undo(ctx, cfg(), applied.HistoryID)
			refused(t, err, "changed after the supersession")
		})
	}
}

func seedManual(t *testing.T) (*pgtest.DB, *memtest.Seeder) {
	t.Helper()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "notes")
	other := s.Aspect("a", "Sam", "misc")
	bAsp := s.Aspect("b", "Kim", "notes")
	s.Add(
		memtest.Attr{ID: "p1", Agent: "a", Aspect: asp, Content: "Seagate recovery notes part 1 of 3"},
		memtest.Attr{ID: "p2", Agent: "a", Aspect: asp, Content: "Seagate recovery notes part 2 of 3"},
		memtest.Attr{ID: "p3", Agent: "a", Aspect: other, Content: "Seagate recovery notes part 3 of 3"},
		memtest.Attr{ID: "all", Agent: "a", Aspect: asp, Content: "Seagate recovery notes, consolidated"},
		memtest.Attr{ID: "con", Agent: "a", Aspect: asp, Kind: "constraint", Content: "Keep recovery notes private"},
		memtest.Attr{ID: "pin", Agent: "a", Aspect: asp, Content: "Pinned note", Protected: true},
		memtest.Attr{ID: "kim", Agent: "b", Aspect: bAsp, Content: "Kim's note"},
		memtest.Attr{ID: "gone", Agent: "a", Aspect: asp, Content: "Deleted note"},
	)
	s.Exec(`UPDATE entity_attributes SET status = 'deleted' WHERE id = 'gone'`)
	return db, s
}

func TestManualSupersedeIsAtomic(t *testing.T) {
	t.Parallel()
	db, s := seedManual(t)
	applied, err := opsOf(db.DB).Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "p2", "p3"}, Reason: "consolidated"})
	if err != nil || len(applied) != 3 {
		t.Fatalf("%v %v", applied, err)
	}
	for _, id := range []string{"p1", "p2", "p3"} {
		if st, by := s.Status(id); st != "superseded" || by != "all" {
			t.Fatalf("%s: %s %q", id, st, by)
		}
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded' AND metadata->>'method' = 'manual' AND metadata->>'reasoning' = 'consolidated'`); n != 3 {
		t.Fatalf("%d manual history rows", n)
	}
}

func TestManualSupersedeRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  audit.SupersedeRequest
		want string
	}{
		{"missing ids listed", audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "nope1", "nope2"}}, `"nope1", "nope2"`},
		{"other agent", audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "kim"}}, `not attributes of agent a (no such id, or another agent's): "kim"`},
		{"constraint", audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "con"}}, "constraint"},
		{"protected", audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"pin"}}, "protected"},
		{"new not active", audit.SupersedeRequest{Agent: "a", New: "gone", Olds: []string{"p1"}}, "not active"},
		{"new among old", audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "all"}}, "both the new attribute"},
		{"wrong agent flag", audit.SupersedeRequest{Agent: "b", New: "all", Olds: []string{"p1"}}, "not attributes of agent b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, s := seedManual(t)
			_, err := opsOf(db.DB).Supersede(ctx, cfg(), tc.req)
			refused(t, err, tc.want)
			if n := s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); n != 0 {
				t.Fatalf("all or nothing: %d rows changed", n)
			}
		})
	}
}

func TestForceChainRepoints(t *testing.T) {
	t.Parallel()
	db, s := seedManual(t)
	if _, err := opsOf(db.DB).Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "a", New: "p2", Olds: []string{"p1"}}); err != nil {
		t.Fatal(err)
	}
	_, err := opsOf(db.DB).Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "p3"}})
	refused(t, err, "already superseded by p2")
	if st, _ := s.Status("p3"); st != "active" {
		t.Fatal("a refused supersede changes nothing")
	}
	if _, err := opsOf(db.DB).Supersede(ctx, cfg(), audit.SupersedeRequest{Agent: "a", New: "all", Olds: []string{"p1", "p3"}, ForceChain: true}); err != nil {
		t.Fatal(err)
	}
	if _, by := s.Status("p1"); by != "all" {
		t.Fatalf("p1 must be re-pointed to all, is %q", by)
	}
}

func TestProtect(t *testing.T) {
	t.Parallel()
	db, s, _ := fixture(t)
	changed, err := opsOf(db.DB).Protect(ctx, cfg(shadowOn), "a1", true)
	if err != nil || !changed {
		t.Fatal(err)
	}
	if changed, _ := opsOf(db.DB).Protect(ctx, cfg(), "a1", true); changed {
		t.Fatal("second protect is a no-op")
	}
	if r := sweepOnce(t, db.DB, cfg()); r.Supersessions != 0 {
		t.Fatal("the sweep must not supersede a protected attribute")
	}
	if _, err := opsOf(db.DB).Protect(ctx, cfg(), "a1", false); err != nil {
		t.Fatal(err)
	}
	if r := sweepOnce(t, db.DB, cfg()); r.Supersessions != 1 {
		t.Fatal("unprotected, it is superseded")
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE event IN ('attribute_protected', 'attribute_unprotected')`); n != 2 {
		t.Fatalf("protect must be audited: %d rows", n)
	}
	_, err = opsOf(db.DB).Protect(ctx, cfg(), "nope", true)
	refused(t, err, "no attribute")
}

func TestMutationsFrozenRefusesEveryChange(t *testing.T) {
	t.Parallel()
	db, s, proposal := fixture(t)
	frozen := cfg(frozenOn)
	refused(t, opsOf(db.DB).Apply(ctx, frozen, []string{proposal})[0].Err, "mutationsFrozen")
	_, err := opsOf(db.DB).Supersede(ctx, frozen, audit.SupersedeRequest{Agent: "a", New: "a2", Olds: []string{"a1"}})
	refused(t, err, "mutationsFrozen")
	_, err = opsOf(db.DB).Protect(ctx, frozen, "a1", true)
	refused(t, err, "mutationsFrozen")
	applied := opsOf(db.DB).Apply(ctx, cfg(), []string{proposal})[0]
	_, err = opsOf(db.DB).Undo(ctx, frozen, applied.HistoryID)
	refused(t, err, "mutationsFrozen")
	if st, _ := s.Status("a1"); st != "superseded" {
		t.Fatal("frozen undo must change nothing")
	}
	// Reviewing writes only the audit trail: allowed while frozen.
	if _, err := opsOf(db.DB).Review(ctx, proposal, false, "frozen but noted"); err != nil {
		t.Fatal(err)
	}
}

// opsOf is the operator commands on a test database of the reference schema.
func opsOf(db *sqlx.DB) *audit.Ops {
	engine := supersession.New(jobs.Deps{DB: db, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	return audit.New(db, nil, engine)
}
