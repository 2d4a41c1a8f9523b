package supersession

import (
	"fmt"

	"github.com/supersessiond/supersessiond/internal/earned"
	"github.com/supersessiond/supersessiond/internal/llm"
)

// Policy is how the engine asks the LLM and which live decisions it applies
// (SPEC §13): maintenance.llm's gate, window size and hourly budget, and
// maintenance.enforcement. The daemon makes it from the configuration in
// force (daemon.EnginePolicy); a pass reads it once, at its start.
type Policy struct {
	Gate Gate
	// MaxStatements is the most statements one window shows (0:
	// DefaultMaxStatements).
	MaxStatements int
	// MaxRequestsPerHour bounds the requests of every replica together,
	// counted in the database (0: DefaultRequestsPerHour). A window over it
	// is deferred, never dropped.
	MaxRequestsPerHour int
	// Earned: a live decision is applied only when its rule has earned it;
	// otherwise it is a proposal in probation. TargetPrecision is the bound
	// a rule must reach (0: earned.DefaultTarget).
	Earned          bool
	TargetPrecision float64
}

// DefaultRequestsPerHour is maintenance.llm.maxRequestsPerHour's default.
const DefaultRequestsPerHour = 600

// DefaultPolicy is the configuration's defaults: the aspect as the gate,
// windows of 24, 600 requests an hour, threshold enforcement.
func DefaultPolicy() Policy {
	return Policy{Gate: GateAspect, MaxStatements: DefaultMaxStatements, MaxRequestsPerHour: DefaultRequestsPerHour,
		TargetPrecision: earned.DefaultTarget}
}

// withDefaults fills what p leaves unset.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.Gate == "" {
		p.Gate = d.Gate
	}
	if p.MaxStatements <= 0 {
		p.MaxStatements = d.MaxStatements
	}
	if p.MaxRequestsPerHour <= 0 {
		p.MaxRequestsPerHour = d.MaxRequestsPerHour
	}
	if p.TargetPrecision <= 0 || p.TargetPrecision >= 1 {
		p.TargetPrecision = d.TargetPrecision
	}
	return p
}

// WithPolicy makes the engine read its policy from policy at the start of
// each pass (the configuration in force then). Without it the engine runs
// on DefaultPolicy. It returns e.
func (e *Engine) WithPolicy(policy func() Policy) *Engine {
	e.policy = policy
	return e
}

// currentPolicy is the policy for a pass starting now.
func (e *Engine) currentPolicy() Policy {
	if e.policy == nil {
		return DefaultPolicy()
	}
	return e.policy().withDefaults()
}

// Judgment names what the engine's decisions depend on under the policy in
// force, besides the rows and the thresholds: with the semantic path on,
// the LLM judge's gate, window size and prompt version (a new one asks new
// windows, whose answers may decide otherwise); under earned, the target.
// It is part of the sweep's judgment: a change calls for a full pass.
func (e *Engine) Judgment(semantic bool) string {
	p := e.currentPolicy()
	s := ""
	if semantic {
		s = fmt.Sprintf("; gate %s; window %d; prompt %s", p.Gate, p.MaxStatements, llm.WindowPromptVersion)
	}
	if p.Earned {
		s += fmt.Sprintf("; enforcement earned %g", p.TargetPrecision)
	}
	return s
}
