package audit

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRefused is wrapped by every refusal; the CLI maps it to exit code 4.
var ErrRefused = errors.New("refused")

// Refusal is an operation the daemon will not perform, and why.
type Refusal struct {
	Op     string
	Reason string
}

func (r *Refusal) Error() string { return r.Op + " refused: " + r.Reason }
func (r *Refusal) Unwrap() error { return ErrRefused }

func refuse(op, format string, args ...any) error {
	return &Refusal{Op: op, Reason: fmt.Sprintf(format, args...)}
}

// frozen is the refusal while memory.pipelineV2.mutationsFrozen is on.
func frozen(op string) error {
	return refuse(op, "memory.pipelineV2.mutationsFrozen is true (the emergency brake): no agent data may change; "+
		"set it to false in agent.yaml (the daemon picks it up without a restart) and try again")
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
