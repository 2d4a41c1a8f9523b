package daemon

import (
	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// EnginePolicy is the supersession engine's policy under cfg (SPEC §13):
// maintenance.llm's gate, window size and hourly budget, and
// maintenance.enforcement. The engine asks for it at the start of each
// pass, so a reload applies to the next one.
func EnginePolicy(cfg *config.Config) supersession.Policy {
	l := cfg.Maintenance.LLM
	return supersession.Policy{Gate: supersession.Gate(cfg.LLMGate()), MaxStatements: l.MaxStatements,
		MaxRequestsPerHour: l.MaxRequestsPerHour, Earned: cfg.Earned(), TargetPrecision: cfg.Maintenance.Enforcement.TargetPrecision}
}

// NewEngine is the supersession engine for deps, its policy read from the
// configuration in force (deps.Config) at each pass, or from cfg when deps
// has none (a one-shot command); with neither, the defaults.
func NewEngine(deps jobs.Deps, cfg *config.Config) *supersession.Engine {
	current := deps.Config
	if current == nil && cfg != nil {
		current = func() *config.Config { return cfg }
	}
	e := supersession.New(deps)
	if current == nil {
		return e
	}
	return e.WithPolicy(func() supersession.Policy { return EnginePolicy(current()) })
}
