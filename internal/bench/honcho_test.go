package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// At issue 33's scale the sizes are what the bench promises: 1,000,000
// observations over 10,000 peers, a few peers with tens of thousands, most
// with a few dozen.
func TestZipfSizes(t *testing.T) {
	t.Parallel()
	s := DefaultHonchoSpec().withDefaults()
	sizes := ZipfSizes(s.Observations, s.Peers, s.Exponent)
	sum := 0
	for i, n := range sizes {
		sum += n
		if n < 1 || (i > 0 && n > sizes[i-1]) {
			t.Fatalf("size %d of peer %d (previous %d)", n, i, sizes[max(i-1, 0)])
		}
	}
	over := 0
	for _, n := range sizes {
		if n > 10_000 {
			over++
		}
	}
	median := sizes[len(sizes)/2]
	if sum != s.Observations || sizes[0] < 20_000 || sizes[0] > 60_000 || over < 3 || over > 10 || median > 100 {
		t.Fatalf("sum %d, largest %d, over 10k %d, median %d", sum, sizes[0], over, median)
	}
	t.Logf("largest %d, second %d, over 10k %d, median %d, smallest %d", sizes[0], sizes[1], over, median, sizes[len(sizes)-1])
}

// A small corpus, on each Honcho shape: it loads into Honcho's tables
// (every foreign key and CHECK of theirs satisfied); the heuristics find
// exactly the planted contradictions among each scope's explicit
// observations, and nothing else, so the count the bench compares with is
// known; every conclusion cites explicit observations of its own scope made
// before it.
func TestHonchoCorpus(t *testing.T) {
	t.Parallel()
	for _, sources := range []bool{false, true} {
		t.Run(map[bool]string{false: "source_ids", true: "document_sources"}[sources], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewEmpty(t)
			spec := HonchoSpec{Observations: 1500, Peers: 24, ContradictionShare: 0.05, Sources: sources, RecordPlanted: true, Seed: 7}
			st, err := GenerateHoncho(context.Background(), db.DB, spec)
			if err != nil {
				t.Fatal(err)
			}
			var count, peers int
			if err := db.Get(&count, `SELECT count(*) FROM documents`); err != nil || count != 1500 || st.Observations != 1500 {
				t.Fatalf("%d documents (%v), stats %+v", count, err, st)
			}
			if err := db.Get(&peers, `SELECT count(DISTINCT observer) FROM documents`); err != nil || peers != 24 {
				t.Fatalf("%d peers (%v)", peers, err)
			}
			if st.Planted < 30 || len(st.PlantedPairs) != st.Planted || st.Derived == 0 || st.Explicit+st.Derived != 1500 {
				t.Fatalf("stats %+v", st)
			}
			found := contradictions(t, db)
			planted := map[[2]string]bool{}
			for _, p := range st.PlantedPairs {
				planted[p] = true
				if !found[p] {
					t.Errorf("planted pair %v: the heuristics do not find it", p)
				}
			}
			for p := range found {
				if !planted[p] {
					t.Errorf("an unplanted contradiction: %v", p)
				}
			}
			citationsPrecede(t, db, sources, st.Derived)
		})
	}
}

type doc struct {
	ID      string    `db:"id"`
	Scope   string    `db:"observer"`
	Content string    `db:"content"`
	At      time.Time `db:"created_at"`
}

// contradictions decides every ordered pair of each scope's explicit
// observations, as a sweep whose blocking let every pair through would,
// and returns those at or above the default threshold.
func contradictions(t *testing.T, db *pgtest.DB) map[[2]string]bool {
	t.Helper()
	var docs []doc
	if err := db.Select(&docs, `SELECT id, observer, content, created_at FROM documents WHERE level = 'explicit' ORDER BY observer, created_at, id`); err != nil {
		t.Fatal(err)
	}
	found := map[[2]string]bool{}
	for start := 0; start < len(docs); {
		end := start
		for end < len(docs) && docs[end].Scope == docs[start].Scope {
			end++
		}
		scope := docs[start:end]
		analysed := make([]*heuristics.Statement, len(scope))
		for i, d := range scope {
			analysed[i] = heuristics.Analyze(heuristics.Input{Content: d.Content, CreatedAt: d.At})
		}
		for i := range scope {
			for j := i + 1; j < len(scope); j++ {
				if heuristics.DecideAnalyzed(analysed[i], analysed[j]).Confidence >= 0.7 {
					found[[2]string{scope[i].ID, scope[j].ID}] = true
				}
			}
		}
		start = end
	}
	return found
}

// citationsPrecede: every conclusion cites one to three explicit
// observations of its scope, each made before it.
func citationsPrecede(t *testing.T, db *pgtest.DB, edges bool, derived int) {
	t.Helper()
	q := `SELECT d.id, s.id AS source, d.created_at > s.created_at AS before, s.level = 'explicit' AND s.observer = d.observer AS own
		FROM documents d CROSS JOIN LATERAL jsonb_array_elements_text(d.source_ids) AS c(id) JOIN documents s ON s.id = c.id`
	if edges {
		q = `SELECT d.id, s.id AS source, d.created_at > s.created_at AS before, s.level = 'explicit' AND s.observer = d.observer AS own
			FROM document_sources e JOIN documents d ON d.id = e.derived_id JOIN documents s ON s.id = e.source_id`
	}
	var rows []struct {
		ID     string `db:"id"`
		Source string `db:"source"`
		Before bool   `db:"before"`
		Own    bool   `db:"own"`
	}
	if err := db.Select(&rows, q); err != nil {
		t.Fatal(err)
	}
	citing := map[string]int{}
	for _, r := range rows {
		citing[r.ID]++
		if !r.Before || !r.Own {
			t.Fatalf("conclusion %s cites %s: made before it %t, explicit of its scope %t", r.ID, r.Source, r.Before, r.Own)
		}
	}
	if len(citing) != derived {
		t.Fatalf("%d conclusions cite, of %d", len(citing), derived)
	}
	for id, n := range citing {
		if n < 1 || n > 3 {
			t.Fatalf("conclusion %s cites %d", id, n)
		}
	}
}

// The same spec makes the same corpus: figures are comparable across runs.
func TestHonchoCorpusIsDeterministic(t *testing.T) {
	t.Parallel()
	gen := func() string {
		g := newHonchoGenerator(HonchoSpec{Observations: 3000, Peers: 40, Seed: 3}.withDefaults())
		var rows [][]any
		for i := range g.sizes {
			rows = append(rows, g.peer(i)...)
		}
		b, _ := json.Marshal(rows)
		return string(b)
	}
	if a, b := gen(), gen(); a != b {
		t.Fatal("two generations of one spec differ")
	}
}
