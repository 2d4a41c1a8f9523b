package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
)

// HonchoSpec shapes a Honcho-shaped corpus of observations (SPEC §14's
// honcho store): Honcho's own tables (storetest's, from its migrations),
// one workspace, a peer's observations of itself in each scope, sizes
// following a Zipf law so that a few peers hold tens of thousands of
// observations and most a few dozen, as a busy deployment's do.
type HonchoSpec struct {
	Observations int // total documents (default 1,000,000)
	Peers        int // default 10,000
	// Exponent of the Zipf law of peer sizes: the k-th largest holds
	// about k^-Exponent of the total (default 0.8: at the default scale
	// the largest peer holds about 37,000, five hold over 10,000, the
	// smallest about 20).
	Exponent float64
	// ContradictionShare of each peer's observations are planted as a
	// newer value of a one-value fact of the peer (or of someone close to
	// it) already observed: the contradictions a sweep must find. A scope
	// has only so many one-value facts, so large peers get fewer than the
	// share: the realised count is reported (HonchoStats.Planted).
	ContradictionShare float64 // default 0.02
	// DerivedShare of the observations are Honcho's dreamer's (deductive,
	// inductive), citing one to three of the peer's explicit ones.
	DerivedShare float64 // default 0.1
	// Sources writes citations as document_sources edges (the newer
	// shape), else in documents.source_ids.
	Sources bool
	// RecordPlanted returns every planted pair's ids.
	RecordPlanted bool
	Seed          uint64 // default 1
}

// HonchoStats says what was generated.
type HonchoStats struct {
	Observations int `json:"observations"`
	Explicit     int `json:"explicit"`
	Derived      int `json:"derived"`
	Peers        int `json:"peers"`
	LargestPeer  int `json:"largest_peer"`
	MedianPeer   int `json:"median_peer"`
	PeersOver10k int `json:"peers_over_10000"`
	Sessions     int `json:"sessions"`
	// Planted are the planted contradictions: pairs of explicit
	// observations of one scope, the newer making the older untrue.
	Planted int `json:"planted_contradictions"`
	// PlantedPairs are their (older id, newer id), with RecordPlanted.
	PlantedPairs [][2]string   `json:"-"`
	Took         time.Duration `json:"-"`
}

// HonchoWorkspace is the generated corpus's workspace.
const HonchoWorkspace = "bench"

// DefaultHonchoSpec is issue 33's scale.
func DefaultHonchoSpec() HonchoSpec {
	return HonchoSpec{Observations: 1_000_000, Peers: 10_000}
}

func (s HonchoSpec) withDefaults() HonchoSpec {
	if s.Observations <= 0 {
		s.Observations = 1_000_000
	}
	if s.Peers <= 0 {
		s.Peers = 10_000
	}
	s.Peers = min(s.Peers, s.Observations)
	if s.Exponent <= 0 {
		s.Exponent = 0.8
	}
	if s.ContradictionShare == 0 {
		s.ContradictionShare = 0.02
	}
	if s.DerivedShare == 0 {
		s.DerivedShare = 0.1
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	return s
}

// ZipfSizes splits total into n sizes following a Zipf law of exponent
// a, largest first, each at least 1, summing to total exactly (largest
// remainders get the rounding).
func ZipfSizes(total, n int, a float64) []int {
	weights := make([]float64, n)
	var sum float64
	for i := range weights {
		weights[i] = math.Pow(float64(i+1), -a)
		sum += weights[i]
	}
	sizes := make([]int, n)
	rest := total - n // every peer gets one; the rest by weight
	type frac struct {
		i int
		f float64
	}
	fracs := make([]frac, n)
	given := 0
	for i, w := range weights {
		exact := float64(rest) * w / sum
		sizes[i] = 1 + int(exact)
		given += int(exact)
		fracs[i] = frac{i, exact - math.Floor(exact)}
	}
	slices.SortStableFunc(fracs, func(x, y frac) int {
		if x.f > y.f {
			return -1
		}
		if x.f < y.f {
			return 1
		}
		return 0
	})
	for k := 0; k < rest-given; k++ {
		sizes[fracs[k].i]++
	}
	return sizes
}

// GenerateHoncho creates Honcho's tables in db (storetest's shape) and
// fills them: the workspace, peers, their self-collections and sessions
// first, then each peer's observations streamed through one COPY, then the
// citations. Deterministic for a Seed. The daemon's change trigger, if
// migrate put one on documents already, is disabled during the load (a
// backfill is not a stream of changes) and enabled again after.
func GenerateHoncho(ctx context.Context, db *sqlx.DB, spec HonchoSpec) (HonchoStats, error) {
	start := time.Now()
	spec = spec.withDefaults()
	if _, err := storetest.CreateHoncho(ctx, db, storetest.HonchoShape{Sources: spec.Sources}); err != nil {
		return HonchoStats{}, err
	}
	g := newHonchoGenerator(spec)
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return g.st, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `ALTER TABLE documents DISABLE TRIGGER USER`); err != nil {
		return g.st, fmt.Errorf("bench: disable the triggers on documents: %w", err)
	}
	if err := g.parents(ctx, tx); err != nil {
		return g.st, err
	}
	if err := g.documents(ctx, tx); err != nil {
		return g.st, err
	}
	if err := g.citations(ctx, tx); err != nil {
		return g.st, err
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE documents ENABLE TRIGGER USER`); err != nil {
		return g.st, err
	}
	if err := tx.Commit(); err != nil {
		return g.st, err
	}
	// Vacuumed as autovacuum would have done to tables of that age (as the
	// tombstone corpus is): a freshly loaded GIN index's pending list is no
	// steady state.
	for _, t := range []string{"workspaces", "peers", "collections", "sessions", "documents"} {
		if _, err := db.ExecContext(ctx, `VACUUM (ANALYZE) `+t); err != nil {
			return g.st, fmt.Errorf("bench: vacuum %s: %w", t, err)
		}
	}
	g.st.Took = time.Since(start)
	return g.st, nil
}

// honchoGenerator builds a corpus peer by peer.
type honchoGenerator struct {
	spec  HonchoSpec
	r     *rand.Rand
	ids   *storetest.Nanoids
	sizes []int // by peer index
	st    HonchoStats
	edges [][]any // derived id, source id, position (the newer shape)
}

var honchoBase = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// sessionSize is how many of a peer's observations one session yields.
const sessionSize = 200

func newHonchoGenerator(spec HonchoSpec) *honchoGenerator {
	r := rand.New(rand.NewPCG(spec.Seed, 0x40c40))
	sizes := ZipfSizes(spec.Observations, spec.Peers, spec.Exponent)
	r.Shuffle(len(sizes), func(i, j int) { sizes[i], sizes[j] = sizes[j], sizes[i] }) // peer names do not sort by size
	g := &honchoGenerator{spec: spec, r: r, ids: storetest.NewNanoids(spec.Seed), sizes: sizes}
	sorted := slices.Sorted(slices.Values(sizes))
	g.st.Peers, g.st.LargestPeer, g.st.MedianPeer = len(sizes), sorted[len(sorted)-1], sorted[len(sorted)/2]
	for _, n := range sizes {
		if n > 10_000 {
			g.st.PeersOver10k++
		}
		g.st.Sessions += (n + sessionSize - 1) / sessionSize
	}
	return g
}

// peerName is peer i's name in Honcho, and the name its observations
// call it by.
func peerName(i int) (string, string) {
	first := people[i%len(people)]
	return fmt.Sprintf("%s-%05d", strings.ToLower(first), i), first
}

// parents copies the workspace, the peers, each peer's collection of its
// own observations and its sessions.
func (g *honchoGenerator) parents(ctx context.Context, tx *sqlx.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name) VALUES ($1, $2)`, g.ids.Next(), HonchoWorkspace); err != nil {
		return fmt.Errorf("bench: insert the workspace: %w", err)
	}
	var peers, collections, sessions [][]any
	for i, n := range g.sizes {
		name, _ := peerName(i)
		peers = append(peers, []any{g.ids.Next(), name, HonchoWorkspace})
		collections = append(collections, []any{g.ids.Next(), name, name, HonchoWorkspace})
		for s := 0; s*sessionSize < n; s++ {
			sessions = append(sessions, []any{g.ids.Next(), fmt.Sprintf("%s-s%03d", name, s), HonchoWorkspace})
		}
	}
	for _, c := range []struct {
		sql  string
		rows [][]any
	}{
		{`COPY peers (id, name, workspace_name) FROM STDIN`, peers},
		{`COPY collections (id, observer, observed, workspace_name) FROM STDIN`, collections},
		{`COPY sessions (id, name, workspace_name) FROM STDIN`, sessions},
	} {
		if err := copyRows(ctx, tx, c.sql, c.rows); err != nil {
			return err
		}
	}
	return nil
}

// documents streams every peer's observations into one COPY.
func (g *honchoGenerator) documents(ctx context.Context, tx *sqlx.Tx) error {
	const copySQL = `COPY documents (id, internal_metadata, content, level, source_ids, created_at,
		observer, observed, workspace_name, session_name, sync_state) FROM STDIN`
	stmt, err := tx.PrepareContext(ctx, copySQL)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", copySQL, err)
	}
	for i := range g.sizes {
		for _, row := range g.peer(i) {
			if _, err := stmt.ExecContext(ctx, row...); err != nil {
				return fmt.Errorf("bench: copy documents: %w", err)
			}
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return fmt.Errorf("bench: copy documents: %w", err)
	}
	return stmt.Close()
}

// citations copies the edges of the newer shape.
func (g *honchoGenerator) citations(ctx context.Context, tx *sqlx.Tx) error {
	if !g.spec.Sources || len(g.edges) == 0 {
		return nil
	}
	return copyRows(ctx, tx, `COPY document_sources (derived_id, source_id, position, workspace_name) FROM STDIN`, g.edges)
}

// observation is one generated document of a peer, before it is a row.
type observation struct {
	id, content, level string
	sources            []string
}

// peer generates peer i's observations as COPY rows, oldest first.
func (g *honchoGenerator) peer(i int) [][]any {
	name, first := peerName(i)
	obs := g.scope(first, g.sizes[i])
	rows := make([][]any, len(obs))
	step := 365 * 24 * time.Hour / time.Duration(len(obs)+1)
	base := honchoBase.Add(time.Duration(i) * time.Second)
	for k, o := range obs {
		at := base.Add(time.Duration(k) * step)
		meta := `{}`
		var sources any
		if o.level == "explicit" {
			meta = fmt.Sprintf(`{"message_ids": [%d], "message_created_at": %q}`, k+1, at.Format("2006-01-02T15:04:05.000Z"))
		} else if !g.spec.Sources {
			b, _ := json.Marshal(o.sources)
			sources = string(b)
		}
		rows[k] = []any{o.id, meta, o.content, o.level, sources, at, name, name, HonchoWorkspace,
			fmt.Sprintf("%s-s%03d", name, k/sessionSize), "synced"}
	}
	return rows
}
