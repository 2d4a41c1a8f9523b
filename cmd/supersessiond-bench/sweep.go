package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/supersessiond/supersessiond/internal/bench"
)

type sweepResult struct {
	Data             bench.AttributeStats `json:"data"`
	Seconds          float64              `json:"seconds"`
	AttributesPerSec float64              `json:"attributes_per_sec"`
	PeakRSS          int64                `json:"peak_rss_bytes"`
	Supersessions    int                  `json:"supersessions"`
	Naive            struct {
		Seconds          float64 `json:"seconds"`
		Attributes       int     `json:"attributes"`
		AttributesPerSec float64 `json:"attributes_per_sec"`
		Supersessions    int     `json:"supersessions"`
		Coverage         string  `json:"coverage"`
	} `json:"naive"`
	Ratio float64 `json:"speedup"`
}

func (e *benchEnv) sweep(ctx context.Context) (*sweepResult, error) {
	r := &sweepResult{}
	db, dbURL, err := e.newDB(ctx, "sweep")
	if err != nil {
		return nil, err
	}
	logf("sweep: generating %d attributes", e.o.attributes)
	if r.Data, err = bench.GenerateAttributes(ctx, db, bench.AttributeSpec{Attributes: e.o.attributes}); err != nil {
		return nil, err
	}
	logf("sweep: %d aspects (%d with siblings, largest %d), %d pairs, %d planted contradictions",
		r.Data.Aspects, r.Data.AspectsWithSiblings, r.Data.LargestAspect, r.Data.Pairs, r.Data.Contradictions)
	naiveDB, _, err := e.cloneDB(ctx, db, dbURL, "sweep_naive")
	if err != nil {
		return nil, err
	}
	defer naiveDB.Close()

	cfgEnv, cleanup, err := writeConfig("memory:\n  pipelineV2:\n    shadowMode: false\nmaintenance:\n  log:\n    level: warn\n")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	logf("sweep: supersessiond sweep --once (live)")
	out, elapsed, rss, err := e.runBinary(dbURL, cfgEnv, "sweep", "--once", "--json")
	if err != nil {
		return nil, err
	}
	var rep struct {
		Attributes    int `json:"attributes"`
		Supersessions int `json:"supersessions"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("sweep report: %w: %s", err, out)
	}
	r.Seconds = elapsed.Seconds()
	r.AttributesPerSec = float64(r.Data.Attributes) / r.Seconds
	r.PeakRSS = rss
	r.Supersessions = rep.Supersessions

	logf("sweep: naive baseline (one query per aspect)")
	ns, err := bench.NaiveSweep(ctx, naiveDB, 0.7, e.o.baselineAspects)
	if err != nil {
		return nil, err
	}
	r.Naive.Seconds = ns.Elapsed.Seconds()
	r.Naive.Attributes = ns.Attributes
	r.Naive.Supersessions = ns.Supersessions
	r.Naive.AttributesPerSec = float64(ns.Attributes) / r.Naive.Seconds
	r.Naive.Coverage = "all aspects"
	if e.o.baselineAspects > 0 {
		r.Naive.Coverage = fmt.Sprintf("first %d aspects, %d attributes", ns.Aspects, ns.Attributes)
	}
	// Attributes in aspects with siblings are what both sweeps examine.
	fastPerSec := float64(rep.Attributes) / r.Seconds
	r.Ratio = fastPerSec / r.Naive.AttributesPerSec
	return r, nil
}
