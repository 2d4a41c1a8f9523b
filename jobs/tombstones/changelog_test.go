package tombstones_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// The tombstone decisions are summarised per batch in the log: one line a
// batch with its counts, never one a document.
func TestTriageIsLoggedPerBatch(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	world(t, db.DB,
		doc{id: "live", sources: `["kept"]`},
		doc{id: "kept", deleted: "old", superseded: true},
		doc{id: "d1", deleted: "old"},
		doc{id: "d2", deleted: "old"},
		doc{id: "d3", deleted: "old", superseded: true},
	)
	var log bytes.Buffer
	j := tombstones.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.NewJSONHandler(&log, nil))}, tombstones.Options{})
	r, err := j.Reconcile(context.Background(), settings(testConfig(2)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Preserved != 1 || r.Deleted != 3 || r.Batches != 2 {
		t.Fatalf("report: %+v", r)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == "tombstones triaged" {
			lines = append(lines, rec)
		}
	}
	if len(lines) != r.Batches {
		t.Fatalf("%d batches, %d lines:\n%s", r.Batches, len(lines), log.String())
	}
	var examined, kept, deleted float64
	for _, l := range lines {
		examined += l["examined"].(float64)
		kept += l["preserved"].(float64)
		deleted += l["deleted"].(float64)
	}
	if examined != 4 || kept != 1 || deleted != 3 {
		t.Fatalf("the lines add up to %v examined, %v preserved, %v deleted", examined, kept, deleted)
	}
}
