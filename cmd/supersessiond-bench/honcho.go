package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
)

// honchoResult is the Honcho-shaped run (issue 33): the sweep on Honcho's
// documents (maintenance.supersession.store: honcho), a full pass and an
// incremental one after a share of new observations.
type honchoResult struct {
	Data          bench.HonchoStats `json:"data"`
	Seconds       float64           `json:"seconds"`
	PerSec        float64           `json:"observations_per_sec"`
	PeakRSS       int64             `json:"peak_rss_bytes"`
	Examined      int               `json:"observations_examined"`
	Pairs         int               `json:"pairs"`
	Supersessions int               `json:"supersessions"`
	Incremental   struct {
		Added         int     `json:"added"`
		Kind          string  `json:"kind"`
		Seconds       float64 `json:"seconds"`
		Share         float64 `json:"share_of_full"`
		Scopes        int     `json:"scopes"`
		Narrowed      int     `json:"scopes_narrowed"`
		Examined      int     `json:"observations_examined"`
		Supersessions int     `json:"supersessions"`
		PeakRSS       int64   `json:"peak_rss_bytes"`
	} `json:"incremental"`
}

// honchoConfig is the agent.yaml of the Honcho run: live, the honcho store,
// supersession alone.
const honchoConfig = liveConfig + `  supersession:
    store: honcho
  schedules:
    compactionRetry: "off"
    tombstones: "off"
`

// sweepReport is what the run reads of `sweep --once --json`.
type sweepReport struct {
	Kind          string `json:"kind"`
	Aspects       int    `json:"aspects"`
	Narrowed      int    `json:"aspects_narrowed"`
	Attributes    int    `json:"attributes"`
	Pairs         int    `json:"pairs"`
	Supersessions int    `json:"supersessions"`
}

func (e *benchEnv) honcho(ctx context.Context) (*honchoResult, error) {
	if e.o.observations <= 0 || e.o.peers <= 0 {
		return nil, fmt.Errorf("honcho: --observations and --peers must be positive (%d, %d)", e.o.observations, e.o.peers)
	}
	r := &honchoResult{}
	db, dbURL, err := e.emptyDB(ctx, "honcho")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	logf("honcho: generating %d observations over %d peers", e.o.observations, e.o.peers)
	spec := bench.DefaultHonchoSpec()
	spec.Observations, spec.Peers = e.o.observations, e.o.peers
	if r.Data, err = bench.GenerateHoncho(ctx, db, spec); err != nil {
		return nil, err
	}
	logf("honcho: %d explicit, %d derived; largest peer %d, median %d; %d planted contradictions (%.0f s)",
		r.Data.Explicit, r.Data.Derived, r.Data.LargestPeer, r.Data.MedianPeer, r.Data.Planted, r.Data.Took.Seconds())
	if _, err := storetest.Migrate(ctx, db, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "")); err != nil {
		return nil, err
	}
	cfgEnv, cleanup, err := writeConfig(honchoConfig)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	logf("honcho: supersessiond sweep --once --full (live)")
	var rep sweepReport
	elapsed, rss, err := e.sweepReport(dbURL, cfgEnv, &rep, "sweep", "--once", "--full", "--json")
	if err != nil {
		return nil, err
	}
	r.Seconds, r.PeakRSS, r.Examined, r.Pairs, r.Supersessions = elapsed, rss, rep.Attributes, rep.Pairs, rep.Supersessions
	r.PerSec = float64(r.Data.Observations) / r.Seconds

	inc := &r.Incremental
	if inc.Added, err = addObservations(ctx, db, max(1, int(e.o.changeShare*float64(r.Data.Observations)))); err != nil {
		return nil, err
	}
	logf("honcho: %d new observations; supersessiond sweep --once", inc.Added)
	rep = sweepReport{}
	if inc.Seconds, inc.PeakRSS, err = e.sweepReport(dbURL, cfgEnv, &rep, "sweep", "--once", "--json"); err != nil {
		return nil, err
	}
	inc.Kind, inc.Scopes, inc.Narrowed, inc.Examined, inc.Supersessions = rep.Kind, rep.Aspects, rep.Narrowed, rep.Attributes, rep.Supersessions
	inc.Share = inc.Seconds / r.Seconds
	return r, nil
}

// sweepReport runs the binary and reads its JSON report into rep.
func (e *benchEnv) sweepReport(dbURL string, cfgEnv []string, rep *sweepReport, args ...string) (float64, int64, error) {
	out, elapsed, rss, err := e.runBinary(dbURL, cfgEnv, args...)
	if err != nil {
		return 0, 0, err
	}
	if err := json.Unmarshal(out, rep); err != nil {
		return 0, 0, fmt.Errorf("sweep report: %w: %s", err, out)
	}
	return elapsed.Seconds(), rss, nil
}

// addObservations inserts n new explicit observations as Honcho writes
// them (the change trigger records each): each a peer observing again, in
// its scope and session, what it observed before.
func addObservations(ctx context.Context, db *sqlx.DB, n int) (int, error) {
	ids := storetest.NewNanoids(99)
	fresh := make([]string, n)
	for i := range fresh {
		fresh[i] = ids.Next()
	}
	res, err := db.ExecContext(ctx, `
		WITH src AS (
		  SELECT content, observer, observed, workspace_name, session_name, row_number() OVER () AS n
		  FROM (SELECT * FROM documents WHERE level = 'explicit' AND deleted_at IS NULL ORDER BY md5(id) LIMIT $2) d)
		INSERT INTO documents (id, content, observer, observed, workspace_name, session_name, created_at)
		SELECT i.id, s.content, s.observer, s.observed, s.workspace_name, s.session_name, now()
		FROM src s JOIN unnest($1::text[]) WITH ORDINALITY AS i(id, n) ON i.n = s.n`, pq.Array(fresh), n)
	if err != nil {
		return 0, fmt.Errorf("honcho: add observations: %w", err)
	}
	added, err := res.RowsAffected()
	return int(added), err
}

// emptyDB creates a fresh database with nothing in it (a stack's tables
// go in next).
func (e *benchEnv) emptyDB(ctx context.Context, name string) (*sqlx.DB, string, error) {
	e.n++
	name = fmt.Sprintf("bench_%s_%d", name, e.n)
	if err := e.createDB(ctx, name, `CREATE DATABASE `+name); err != nil {
		return nil, "", err
	}
	u, err := url.Parse(e.server)
	if err != nil {
		return nil, "", err
	}
	u.Path = "/" + name
	db, err := sqlx.Open("postgres", u.String())
	return db, u.String(), err
}
