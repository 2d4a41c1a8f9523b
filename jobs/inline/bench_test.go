package inline_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
)

// BenchmarkDrainOneClassification is the hook's latency for one
// classification, without LISTEN, the agent's load or a second drain: a
// drain of one classification into an aspect of a swept graph (a quarter of
// the aspects large enough for a key digest, as in the bench command's
// graph), from the claim to the outbox row's deletion. At low rates a batch
// is one classification, and its round trips to the server are its lag.
//
//	go test -run '^$' -bench DrainOneClassification -benchtime 2000x ./jobs/inline/
func BenchmarkDrainOneClassification(b *testing.B) {
	db := pgtest.New(b)
	s := memtest.New(b, db.DB)
	var aspects []string
	for a := range 40 {
		asp := s.Aspect("a", fmt.Sprintf("e%d", a), "life")
		aspects = append(aspects, asp)
		n := 4
		if a%4 == 0 {
			n = 40 // a digest's worth
		}
		for i := range n {
			s.Add(memtest.Attr{ID: fmt.Sprintf("f%d-%d", a, i), Agent: "a", Aspect: asp,
				Content: fmt.Sprintf("Visited city number %d in %d", i, 1990+i%30)})
		}
	}
	cfg := config.Default()
	cfg.Maintenance.Database.URL = db.URL
	deps := jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()}
	engine := supersession.New(deps)
	groups, err := engine.LoadAspects(b.Context(), repeat("a", len(aspects)), aspects)
	if err != nil {
		b.Fatal(err)
	}
	pass := supersession.Pass{Actor: supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system"}, Source: "sweep", Digests: true}
	if _, err := engine.Process(b.Context(), settings(cfg).Engine, groups, pass); err != nil {
		b.Fatal(err)
	}
	if err := engine.StoreKeys(b.Context(), db.DB, supersession.Fragments(groups), ""); err != nil {
		b.Fatal(err)
	}
	s.Exec(`DELETE FROM supersessiond.changes; DELETE FROM supersessiond.classified`)
	for i := range b.N {
		s.Add(memtest.Attr{ID: fmt.Sprintf("c%d", i), Agent: "a", Content: []string{"Lives in Oslo", "Lives in Quito", "Bought a ticket"}[i%3]})
	}
	h := inline.New(deps, engine)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, aspects[i%len(aspects)], fmt.Sprintf("c%d", i))
		b.StartTimer()
		if err := h.Drain(b.Context(), settings(cfg)); err != nil {
			b.Fatal(err)
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
