package daemon

import (
	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/supersession"
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
