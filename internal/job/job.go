// Package job is what every scheduled job and long-running service of the
// daemon is built from, and what a run of one says it did. One Deps for all
// of them: the database and its names, the logger, the metrics registry, the
// LLM, the clock, and the configuration in force; so a job is built the same
// way by the daemon, by its one-shot command and by its tests.
package job

import (
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
)

// Deps are the dependencies a job or service is built from. Zero values are
// usable: nil Names is the reference schema, a nil Logger discards, a nil
// Registry counts without exporting, a nil LLM has no model, a nil Now is
// the wall clock, and a nil Config never engages the brake mid-run.
type Deps struct {
	DB       *sqlx.DB
	Names    *schema.Names
	Logger   *slog.Logger
	Registry prometheus.Registerer
	LLM      *llm.Provider
	Now      func() time.Time
	// Config returns the configuration in force now. A run decides under
	// the configuration it was given, but asks this one before each write
	// batch whether the brake (shadowMode, mutationsFrozen) was engaged.
	Config func() *config.Config
}

// WithDefaults fills the zero values in.
func (d Deps) WithDefaults() Deps {
	if d.Names == nil {
		d.Names = schema.ReferenceNames()
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// Braked reports whether the configuration in force now forbids changing
// agent data (false when there is no way to know).
func (d Deps) Braked() bool { return d.Config != nil && d.Config().Shadow() }

// Report is what a run says it did: printed as text on a terminal, encoded
// as one JSON document by --json, logged by the daemon.
type Report interface {
	Text() string
}
