package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// reconcileWorld: T superseded and cited (preserved), X and U deleted,
// Y too young to touch.
func reconcileWorld(t *testing.T, db *sqlx.DB) {
	t.Helper()
	_, err := db.Exec(`
		INSERT INTO documents (id, workspace_name, observer, observed, content, source_ids, embedding, deleted_at, superseded_by)
		VALUES ('T', 'ws', 'a', 'u', 't', NULL, '{1,2}', now() - interval '1 hour', 'T2'),
		       ('U', 'ws', 'a', 'u', 'u', NULL, '{1,2}', now() - interval '1 hour', 'U2'),
		       ('X', 'ws', 'a', 'u', 'x', NULL, '{1,2}', now() - interval '1 hour', NULL),
		       ('Y', 'ws', 'a', 'u', 'y', NULL, '{1,2}', now(), 'Y2'),
		       ('D', 'ws', 'a', 'u', 'd', '["T", "X"]', '{1,2}', NULL, NULL)`)
	if err != nil {
		t.Fatal(err)
	}
}

func documentIDs(t *testing.T, db *sqlx.DB) string {
	t.Helper()
	var ids []string
	if err := db.Select(&ids, `SELECT id || CASE WHEN tombstone_preserved_at IS NOT NULL THEN '*' ELSE '' END FROM documents ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, " ")
}

func TestReconcileOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	reconcileWorld(t, db.DB)
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)

	if code, _, errOut := c.run("", "reconcile"); code != exitUsage || !strings.Contains(errOut, "--once") {
		t.Fatalf("without --once: exit %d: %s", code, errOut)
	}
	if code, _, errOut := c.run("", "reconcile", "--once", "--budget", "-1s"); code != exitUsage {
		t.Fatalf("negative budget: exit %d: %s", code, errOut)
	}

	code, out, errOut := c.run("", "reconcile", "--once", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r tombstones.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("--json must print one JSON document: %v\n%s", err, out)
	}
	if r.Shadow() || r.Examined != 3 || r.Preserved != 1 || r.Deleted != 2 || r.Backlog != 0 || r.Held != 1 || r.BudgetSeconds == 0 {
		t.Fatalf("report: %+v", r)
	}
	if got := documentIDs(t, db.DB); got != "D T* Y" {
		t.Fatalf("documents after the pass: %s", got)
	}

	// Text by default; a second pass has nothing to do.
	code, out, errOut = c.run("", "reconcile", "--once", "--budget", "30s")
	if code != 0 || !strings.Contains(out, "preserved   0") || !strings.Contains(out, "1 preserved re-checked, 0 released") ||
		!strings.Contains(out, "budget      30s, not used up") {
		t.Fatalf("second pass: exit %d\n%s%s", code, out, errOut)
	}
}

// Shadow mode and the mutationsFrozen brake: the command reports what it
// would do, exits 0, and changes nothing.
func TestReconcileOnceShadowAndFrozen(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true", "SUPERSESSIOND_MEMORY__PIPELINEV2__MUTATIONSFROZEN=true"} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			reconcileWorld(t, db.DB)
			before := documentIDs(t, db.DB)
			code, out, errOut := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, env).run("", "reconcile", "--once")
			if code != 0 || !strings.Contains(out, ": nothing changed") || !strings.Contains(out, "would keep  1") || !strings.Contains(out, "would drop  2") {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if got := documentIDs(t, db.DB); got != before {
				t.Fatalf("documents changed in shadow: %s -> %s", before, got)
			}
		})
	}
}

func TestReconcileOnceNeedsTheSchema(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	code, _, errOut := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL).run("", "reconcile", "--once")
	if code != exitUnavailable || !strings.Contains(errOut, "supersessiond migrate") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// Two supersessiond processes reconciling one database at once: both
// succeed, and their reports add up to exactly what happened, so no row was
// handled twice.
func TestReconcileTwoProcessesAtOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	stats, err := bench.GenerateTombstones(context.Background(), db.DB, bench.TombstoneCorpus{
		Documents: 20_000, Workspaces: 4, SoftDeleted: 5_000, SupersededShare: 0.6,
		DerivedShare: 0.6, CrossWorkspaceShare: 0.1, Dim: 4, Seed: 0.2,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, "maintenance:\n  tombstones:\n    batchSize: 5\n  log:\n    format: text\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reports := make([]tombstones.Report, 2)
	var wg sync.WaitGroup
	for i := range reports {
		wg.Go(func() {
			cmd := exec.Command(exe, "reconcile", "--once", "--json", "--config", path)
			cmd.Env = append(os.Environ(), beMainEnv+"=1", "SUPERSESSIOND_DATABASE_URL="+db.URL)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Errorf("process %d: %v: %s", i, err, errb.String())
				return
			}
			if err := json.Unmarshal(out.Bytes(), &reports[i]); err != nil {
				t.Errorf("process %d: %v: %s", i, err, out.String())
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var left, held int64
	if err := db.Get(&left, `SELECT count(*) FROM documents WHERE deleted_at IS NOT NULL AND tombstone_preserved_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&held, `SELECT count(*) FROM documents WHERE tombstone_preserved_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	preserved := reports[0].Preserved + reports[1].Preserved
	deleted := reports[0].Deleted + reports[1].Deleted
	if left != 0 || int64(preserved) != held || int64(preserved+deleted) != stats.SoftDeleted || preserved == 0 {
		t.Fatalf("%d + %d preserved, %d + %d deleted of %d; now %d preserved, %d left",
			reports[0].Preserved, reports[1].Preserved, reports[0].Deleted, reports[1].Deleted, stats.SoftDeleted, held, left)
	}
	if reports[0].Examined == 0 || reports[1].Examined == 0 {
		t.Logf("one process found nothing left to do (%d, %d examined): the passes did not overlap this time",
			reports[0].Examined, reports[1].Examined)
	}
}
