package storetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// Plan is base (the default configuration's plan: daemon.DefaultPlan) for a
// database holding a store's tables in tables' schema ("" is the search
// path), with only the supersession job on and Honcho's levels as given
// (none: explicit).
func Plan(base schema.Plan, store schema.Store, tables string, levels ...string) schema.Plan {
	p := base
	p.On = map[schema.Job]bool{}
	for _, j := range schema.Jobs {
		p.On[j] = false
	}
	p.On[schema.Supersession] = true
	p.Store, p.Schema, p.HonchoLevels = store, tables, levels
	if len(levels) == 0 {
		p.HonchoLevels = []string{"explicit"}
	}
	return p
}

// Migrate migrates db for the plan (the store's change trigger and indexes,
// the daemon's own schema and history) and returns the names its
// statements render over.
func Migrate(ctx context.Context, db *sqlx.DB, plan schema.Plan) (*schema.Names, error) {
	res, err := schema.Migrate(ctx, db, plan, schema.Options{})
	if err != nil {
		return nil, fmt.Errorf("storetest: migrate: %w", err)
	}
	return res.Layout.Names, nil
}
