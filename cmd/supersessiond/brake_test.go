package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

// seedAspects gives agent a n aspects, each with a contradiction: o<i>
// ("Lives in Toronto") and, a month later, n<i> ("Lives in Vancouver").
func seedAspects(t *testing.T, db *pgtest.DB, n int) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO entities (id, agent_id, name) SELECT 'a:e' || lpad(i::text, 5, '0'), 'a', 'e' || i FROM generate_series(0, $1 - 1) i`,
		`INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name)
		 SELECT 'a:e' || lpad(i::text, 5, '0') || ':home', 'a:e' || lpad(i::text, 5, '0'), 'a', 'home', 'home' FROM generate_series(0, $1 - 1) i`,
		`INSERT INTO entity_attributes (id, aspect_id, agent_id, kind, content, normalized_content, created_at, updated_at)
		 SELECT v.p || lpad(i::text, 5, '0'), 'a:e' || lpad(i::text, 5, '0') || ':home', 'a', 'attribute', v.c, lower(v.c), v.at, v.at
		 FROM generate_series(0, $1 - 1) i,
		   (VALUES ('o', 'Lives in Toronto', timestamptz '2026-01-05'), ('n', 'Lives in Vancouver', timestamptz '2026-02-05')) v(p, c, at)`,
	} {
		if _, err := db.Exec(q, n); err != nil {
			t.Fatal(err)
		}
	}
}

// sweep --once follows the configuration file it loaded, as the daemon
// does: mutationsFrozen set while it runs is obeyed from the next write
// batch on. The first batch's write is held (another session locks one of
// its rows), the brake is written meanwhile, then the lock is released: the
// batch in flight is written, and the two after it only propose. Issue 29:
// the one-shot commands were built without the live configuration, and
// 107,220 supersessions went through the brake.
func TestSweepOnceObeysTheBrakeSetWhileItRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	seedAspects(t, db, 1500) // three batches of 500 aspects
	cfgPath := writeConfig(t, "maintenance:\n  log:\n    level: info\n")

	holder, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.Exec(`SELECT 1 FROM entity_attributes WHERE id = 'o00000' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	stderr := &proctest.Buffer{}
	var stdout strings.Builder
	type result struct {
		err error
	}
	swept := make(chan result, 1)
	go func() {
		m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: stderr,
			Environ: func() []string { return []string{"SUPERSESSIOND_DATABASE_URL=" + db.URL} }}
		swept <- result{m.Run(ctx, []string{"sweep", "--once", "--json", "--config", cfgPath})}
	}()
	waitFor(t, stderr, "the first write batch to wait on the held lock", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)
		return n > 0
	})
	tmp := cfgPath + ".new"
	if err := os.WriteFile(tmp, []byte("maintenance:\n  log:\n    level: info\nmemory:\n  pipelineV2:\n    mutationsFrozen: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfgPath); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "the sweep to reload its configuration", func() bool {
		return strings.Contains(stderr.String(), "configuration reloaded") && strings.Contains(stderr.String(), "mutations_frozen=true")
	})
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-swept:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the sweep did not end\n%s", stderr)
	}
	if r.err != nil {
		t.Fatalf("sweep: %v\n%s", r.err, stderr)
	}
	var rep struct {
		Supersessions   int  `json:"supersessions"`
		ProposalsShadow int  `json:"proposals_shadow"`
		Braked          int  `json:"braked"`
		Complete        bool `json:"complete"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	var superseded, proposed int
	if err := db.Get(&superseded, `SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&proposed, `SELECT count(*) FROM memory_history WHERE event = 'supersession_proposal'`); err != nil {
		t.Fatal(err)
	}
	if superseded != 500 || rep.Supersessions != 500 {
		t.Fatalf("%d attributes superseded (report: %d): only the batch in flight when the brake was set may be, 500", superseded, rep.Supersessions)
	}
	if proposed != 1000 || rep.Braked != 1000 || !rep.Complete {
		t.Fatalf("%d proposals, report %+v: the braked rest of the pass proposes what it would have applied", proposed, rep)
	}
}
