package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

func wholeRows(t *testing.T, db *sqlx.DB, ids ...string) string {
	t.Helper()
	var rows []string
	if err := db.Select(&rows, `SELECT d::text FROM documents d WHERE id = ANY($1) ORDER BY id`, ids); err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, "\n")
}

// `reconcile --once --json` lists what the pass hard-deleted, and
// `reconcile --restore` puts it back as it was, by run or by id, once;
// the brake and bad requests are refused with their exit codes.
func TestReconcileRestore(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	reconcileWorld(t, db.DB)
	before := wholeRows(t, db.DB, "U", "X")
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)

	code, out, errOut := c.run("", "reconcile", "--once", "--json")
	var r tombstones.Report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if !slices.Equal(r.DeletedIDs, []string{"U", "X"}) || r.RunID == "" {
		t.Fatalf("deleted_ids %v, run %q", r.DeletedIDs, r.RunID)
	}
	if code, out, _ := c.run("", "reconcile", "--once"); code != 0 || strings.Contains(out, "--restore --run") {
		t.Fatalf("a pass that deleted nothing offers a restore:\n%s", out)
	}

	for _, bad := range [][]string{{"reconcile", "--restore"}, {"reconcile", "--run", r.RunID}, {"reconcile", "--restore", "--once", "X"}} {
		if code, _, errOut := c.run("", bad...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", bad, code, errOut)
		}
	}
	frozen := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MEMORY__PIPELINEV2__MUTATIONSFROZEN=true")
	if code, _, errOut := frozen.run("", "reconcile", "--restore", "X"); code != exitRefused || !strings.Contains(errOut, "mutationsFrozen") {
		t.Fatalf("frozen restore: exit %d: %s", code, errOut)
	}
	if code, out, errOut := c.run("", "reconcile", "--restore", "--run", r.RunID, "--dry-run"); code != 0 || !strings.Contains(out, "would restore 2 of 2") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if got := wholeRows(t, db.DB, "U", "X"); got != "" {
		t.Fatalf("the dry run restored: %s", got)
	}
	code, out, errOut = c.run("", "reconcile", "--restore", "--run", r.RunID, "--json")
	var rr tombstones.RestoreReport
	if code != 0 || json.Unmarshal([]byte(out), &rr) != nil || rr.Restored != 2 {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if got := wholeRows(t, db.DB, "U", "X"); got != before {
		t.Fatalf("restored as\n%s\nwas\n%s", got, before)
	}
	if code, out, errOut := c.run("", "reconcile", "--restore", "X", "nobody"); code != exitRefused ||
		!strings.Contains(out, "already restored") || !strings.Contains(out, "no deletion of this document is recorded") {
		t.Fatalf("second restore: exit %d\n%s%s", code, out, errOut)
	}
}
