package main

import (
	"errors"
	"fmt"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/jobs/tombstones"
)

// Exit codes (SPEC §2).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2 // usage or invalid configuration
	exitUnavailable = 3 // database unreachable or schema incompatible
	exitRefused     = 4 // refused operation
)

// usageError is a command-line mistake: unknown command or flag, missing or
// malformed argument.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// quietError carries an exit code for a failure the command has already
// reported on its own output (detect's per-line errors).
type quietError struct{ code int }

func (e *quietError) Error() string { return "failed" }

// report prints err on stderr, in one line, unless the command has already
// said all there is (detect's per-line errors, a usage printed on request).
func (m *Main) report(err error) {
	var quiet *quietError
	if err != nil && !errors.As(err, &quiet) {
		fmt.Fprintln(m.Stderr, "supersessiond:", err)
	}
}

// ExitCode maps an error to the process exit code. This is the only place
// that does.
func ExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var (
		ue *usageError
		ce *config.Error
		qe *quietError
		un *store.UnavailableError
		se *schema.SchemaError
		co *schema.CollisionError
		rr *schema.RemoveRefusal
	)
	switch {
	case errors.As(err, &qe):
		return qe.code
	case errors.As(err, &ue), errors.As(err, &ce):
		return exitUsage
	case errors.As(err, &un), errors.As(err, &se), errors.As(err, &co):
		return exitUnavailable
	case errors.Is(err, audit.ErrRefused), errors.Is(err, tombstones.ErrRefused), errors.As(err, &rr):
		return exitRefused
	}
	return exitFailure
}
