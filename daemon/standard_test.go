package daemon_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
)

// The composition root builds the operators' commands on a pool of their
// own (the console's) with an engine that counts in the daemon's metrics:
// one set of series, every known label value at zero, and no second
// registration.
func TestStandardOpsShareTheDaemonsMetrics(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	reg := prometheus.NewRegistry()
	std := daemon.NewStandard(jobs.Deps{DB: db.DB, Registry: reg}, daemon.StandardOptions{})
	if ops := std.Ops(db.DB); ops == nil {
		t.Fatal("no operators' commands")
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range families {
		series[f.GetName()] = len(f.GetMetric())
	}
	for name, min := range map[string]int{
		"supersessiond_supersessions_total":          2,  // sweep, inline
		"supersessiond_proposals_total":              4,  // × shadow, review
		"supersessiond_supersession_skips_total":     30, // × every reason
		"supersessiond_semantic_llm_calls_total":     6,  // ok and every error kind
		"supersessiond_inline_classifications_total": 3,
	} {
		if series[name] < min {
			t.Errorf("%s has %d series, want at least %d", name, series[name], min)
		}
	}
}
