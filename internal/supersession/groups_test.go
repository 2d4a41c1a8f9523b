package supersession_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/job"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// ScanGroups must give each (agent, aspect) one group, oldest first with
// ties broken by id, whatever order the rows arrive in: the queries that
// use it do not sort.
func TestScanGroupsOrdersEachGroupWhateverTheRowOrder(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	home := s.Aspect("a", "Sam", "home")
	work := s.Aspect("a", "Sam", "job")
	other := s.Aspect("b", "Kim", "home")
	t0 := memtest.Base
	s.Add(
		memtest.Attr{ID: "h3", Agent: "a", Aspect: home, Content: "Lives in Lisbon", At: t0.Add(3 * time.Hour)},
		memtest.Attr{ID: "j1", Agent: "a", Aspect: work, Content: "Works at Figma", At: t0},
		memtest.Attr{ID: "h1", Agent: "a", Aspect: home, Content: "Lives in Toronto", At: t0},
		memtest.Attr{ID: "k1", Agent: "b", Aspect: other, Content: "Lives in Oslo", At: t0},
		memtest.Attr{ID: "h2b", Agent: "a", Aspect: home, Content: "Lives in Quito", At: t0.Add(time.Hour)},
		memtest.Attr{ID: "h2a", Agent: "a", Aspect: home, Content: "Lives in Hobart", At: t0.Add(time.Hour)},
		memtest.Attr{ID: "j2", Agent: "a", Aspect: work, Content: "Works at Stripe", At: t0.Add(time.Hour)},
	)
	want := map[string][]string{
		"a " + home:  {"h1", "h2a", "h2b", "h3"},
		"a " + work:  {"j1", "j2"},
		"b " + other: {"k1"},
	}
	// LoadAspects does not sort: the rows come in whatever order the table
	// holds them (here: interleaved, as inserted), and each group must still
	// be oldest first.
	engine := supersession.New(job.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	groups, err := engine.LoadAspects(t.Context(), []string{"a", "a", "b"}, []string{home, work, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for _, g := range groups {
		var got []string
		for _, a := range g.Attrs {
			got = append(got, a.ID)
		}
		w := want[g.AgentID+" "+g.AspectID]
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("group %s/%s holds %v, want %v (oldest first, ties by id)", g.AgentID, g.AspectID, got, w)
		}
		if g.AspectName == "" || g.Dangling {
			t.Fatalf("group %s/%s: aspect name %q, dangling %v", g.AgentID, g.AspectID, g.AspectName, g.Dangling)
		}
	}
}
