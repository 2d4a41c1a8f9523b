package supersession_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
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
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
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

// Scan must hand over every aspect with two or more active non-constraint
// attributes exactly once, whole and oldest first, in cursor order, whatever
// the chunk size: aspects cut by a chunk's end are read again, aspects
// larger than a chunk are read on their own.
func TestScanHandsOverEveryAspectWholeOnceWhateverTheChunkSize(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	want := map[string][]string{} // "agent aspect" → ids, oldest first
	var attrs []memtest.Attr
	for _, agent := range []string{"a", "b", "c"} {
		for k, size := range []int{1, 2, 3, 7, 1, 12, 2} {
			aspect := s.Aspect(agent, "E", fmt.Sprintf("x%d", k))
			var ids []string
			for i := range size {
				id := fmt.Sprintf("%s-%d-%02d", agent, k, i)
				attrs = append(attrs, memtest.Attr{ID: id, Agent: agent, Aspect: aspect, Content: "Likes item " + id,
					At: memtest.Base.Add(time.Duration(size-i) * -time.Hour)}) // inserted oldest first
				ids = append(ids, id)
			}
			// A constraint is never part of a group.
			attrs = append(attrs, memtest.Attr{ID: fmt.Sprintf("%s-%d-c", agent, k), Agent: agent, Aspect: aspect,
				Kind: "constraint", Content: "Never moves"})
			if size >= 2 {
				want[agent+" "+aspect] = ids
			}
		}
	}
	s.Add(attrs...)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})

	// Inserted in an order the index does not follow.
	slices.Reverse(attrs)
	for _, chunk := range []int{1, 2, 3, 5, 11, 1000} {
		for _, lim := range []supersession.Limits{{Aspects: 1, ChunkRows: chunk}, {Aspects: 3, Attributes: 10, ChunkRows: chunk}} {
			got := map[string][]string{}
			var order []string
			err := engine.Scan(t.Context(), supersession.Cursor{}, "", lim, func(groups []*supersession.Group) error {
				if len(groups) > lim.Aspects {
					t.Errorf("chunk %d: a batch of %d aspects, limit %d", chunk, len(groups), lim.Aspects)
				}
				for _, g := range groups {
					k := g.AgentID + " " + g.AspectID
					if _, dup := got[k]; dup {
						t.Errorf("chunk %d: aspect %s handed over twice", chunk, k)
					}
					if g.AspectName == "" || g.Dangling {
						t.Errorf("chunk %d: aspect %s not named (%q, dangling %v)", chunk, k, g.AspectName, g.Dangling)
					}
					for _, a := range g.Attrs {
						got[k] = append(got[k], a.ID)
					}
					order = append(order, k)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("chunk %d, limits %+v:\ngot  %v\nwant %v", chunk, lim, got, want)
			}
			if !slices.IsSorted(order) {
				t.Errorf("chunk %d: aspects out of cursor order: %v", chunk, order)
			}
		}
	}

	// From a cursor, for one agent: only what follows, of that agent.
	var after []string
	cur := supersession.Cursor{AgentID: "b", AspectID: s.Aspect("b", "E", "x3")}
	err := engine.Scan(t.Context(), cur, "b", supersession.Limits{ChunkRows: 4}, func(groups []*supersession.Group) error {
		for _, g := range groups {
			after = append(after, g.AgentID+" "+g.AspectID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantAfter := []string{"b " + s.Aspect("b", "E", "x5"), "b " + s.Aspect("b", "E", "x6")}
	if fmt.Sprint(after) != fmt.Sprint(wantAfter) {
		t.Errorf("after %v for agent b: got %v, want %v", cur, after, wantAfter)
	}
}

// LoadAspectsBounded must hand over every named aspect that has an active
// attribute exactly once, whole and oldest first, in batches that hold at
// most the bound (an aspect larger than the bound alone in its batch).
func TestLoadAspectsBoundedHandsOverEveryAspectWholeOnceWithinTheBound(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	want := map[string][]string{}
	var agents, aspects []string
	var attrs []memtest.Attr
	for _, agent := range []string{"a", "b"} {
		for k, size := range []int{2, 2, 5, 1, 0, 3, 9} {
			aspect := s.Aspect(agent, "E", fmt.Sprintf("x%d", k))
			agents, aspects = append(agents, agent), append(aspects, aspect)
			var ids []string
			for i := range size {
				id := fmt.Sprintf("%s-%d-%02d", agent, k, i)
				attrs = append(attrs, memtest.Attr{ID: id, Agent: agent, Aspect: aspect, Content: "Likes item " + id,
					At: memtest.Base.Add(time.Duration(size-i) * -time.Hour)})
				ids = append(ids, id)
			}
			attrs = append(attrs, memtest.Attr{ID: fmt.Sprintf("%s-%d-c", agent, k), Agent: agent, Aspect: aspect,
				Kind: "constraint", Content: "Never moves"})
			if size > 0 {
				want[agent+" "+aspect] = ids
			}
		}
	}
	slices.Reverse(attrs)
	s.Add(attrs...)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	for _, bound := range []int{1, 3, 4, 10, 1000} {
		got := map[string][]string{}
		batches := 0
		err := engine.LoadAspectsBounded(t.Context(), agents, aspects, bound, 2, func(groups []*supersession.Group) error {
			batches++
			held := 0
			for _, g := range groups {
				k := g.AgentID + " " + g.AspectID
				if _, dup := got[k]; dup {
					t.Errorf("bound %d: aspect %s handed over twice", bound, k)
				}
				for _, a := range g.Attrs {
					got[k] = append(got[k], a.ID)
				}
				held += len(g.Attrs)
			}
			if held > bound && len(groups) > 1 {
				t.Errorf("bound %d: a batch of %d attributes in %d aspects", bound, held, len(groups))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("bound %d:\ngot  %v\nwant %v", bound, got, want)
		}
		if bound == 1000 && batches != 1 {
			t.Errorf("bound %d: %d batches, want 1", bound, batches)
		}
	}
}

// Fragments stored together in one statement come back byte for byte, each
// under its aspect; a replacing store deletes only what its snapshot saw.
func TestStoredKeyFragmentsComeBackWhole(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	frags := []supersession.Fragment{
		{AgentID: "a", AspectID: "x", Keys: []byte{1, 2, 3}},
		{AgentID: "a", AspectID: "y", Keys: bytes.Repeat([]byte{0, 0xff, '\\', '"', 7}, 3000)},
		{AgentID: "b", AspectID: "x", Keys: []byte{9}},
	}
	ctx := t.Context()
	if err := engine.StoreKeys(ctx, db.DB, frags, ""); err != nil {
		t.Fatal(err)
	}
	read := func() map[string][][]byte {
		got := map[string][][]byte{}
		rows, err := db.Query(`SELECT agent_id || ' ' || aspect_id, keys FROM supersessiond.aspect_keys ORDER BY created_at`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var b []byte
			if err := rows.Scan(&k, &b); err != nil {
				t.Fatal(err)
			}
			got[k] = append(got[k], b)
		}
		return got
	}
	got := read()
	for _, f := range frags {
		if g := got[f.AgentID+" "+f.AspectID]; len(g) != 1 || !bytes.Equal(g[0], f.Keys) {
			t.Fatalf("%s %s: stored %d fragments, first %d bytes, want %d bytes", f.AgentID, f.AspectID, len(g), len(g[0]), len(f.Keys))
		}
	}
	var snap string
	if err := db.Get(&snap, `SELECT pg_current_snapshot()::text`); err != nil {
		t.Fatal(err)
	}
	if err := engine.StoreKeys(ctx, db.DB, frags[:1], ""); err != nil { // after the snapshot: kept
		t.Fatal(err)
	}
	if err := engine.StoreKeys(ctx, db.DB, []supersession.Fragment{{AgentID: "a", AspectID: "x", Keys: []byte{4}}}, snap); err != nil {
		t.Fatal(err)
	}
	got = read()
	if x := got["a x"]; len(x) != 2 || !bytes.Equal(x[0], []byte{1, 2, 3}) || !bytes.Equal(x[1], []byte{4}) || len(got["a y"]) != 1 {
		t.Fatalf("after a replacing store: %v", got["a x"])
	}
}

// LoadAspects names each group by its own agent's aspect only: an aspect id
// that belongs to another agent is dangling and unnamed (its name must
// never reach a prompt), and each group is named once, not per row.
func TestLoadAspectsNamesOnlyTheAgentsOwnAspects(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	own := s.Aspect("a", "Sam", "home")
	theirs := s.Aspect("b", "Kim", "secret plans")
	s.Add(
		memtest.Attr{ID: "o1", Agent: "a", Aspect: own, Content: "Lives in Lisbon"},
		memtest.Attr{ID: "o2", Agent: "a", Aspect: own, Content: "Lives in Oslo", At: memtest.Base.Add(time.Hour)},
		memtest.Attr{ID: "x1", Agent: "a", Aspect: theirs, Content: "Lives in Quito"},
		memtest.Attr{ID: "x2", Agent: "a", Aspect: theirs, Content: "Lives in Hobart", At: memtest.Base.Add(time.Hour)},
	)
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
	groups, err := engine.LoadAspects(t.Context(), []string{"a", "a"}, []string{own, theirs})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 {
		t.Fatalf("%d groups, want 2", len(groups))
	}
	for _, g := range groups {
		switch g.AspectID {
		case own:
			if g.AspectName == "" || g.Dangling {
				t.Errorf("own aspect: name %q, dangling %v", g.AspectName, g.Dangling)
			}
		case theirs:
			if g.AspectName != "" || !g.Dangling {
				t.Errorf("another agent's aspect: name %q, dangling %v; want unnamed and dangling", g.AspectName, g.Dangling)
			}
		}
	}
}
