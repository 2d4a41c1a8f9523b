package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/lib/pq"
)

// Whose fault a failed statement is decides what a job does next, and this
// file is the one place that decides it.
//
// A row's fault (RowFault) is an error the server raises because of what
// one row holds or would become: the same statement for another row would
// succeed. The job skips that row with its reason and goes on:
//
//	class 22  data exception: a value a column or function will not take
//	          (bytes that are not UTF-8, out of range, too long, 'infinity')
//	class 23  integrity constraint violation: the stack's own foreign key,
//	          check, unique, not-null or exclusion constraint
//	class 44  WITH CHECK OPTION violation: a view's condition, for this row
//	class P0  PL/pgSQL: a stack trigger's RAISE for this row (P0001), its
//	          ASSERT (P0004), no or too many rows (P0002, P0003)
//	54000     program limit exceeded, when the server names the index the
//	          row does not fit in (an index row too large)
//
// Anything else is not the row's: the server is busy, full, out of memory or
// going away, the role lost a privilege, the schema changed, the daemon has
// a bug. Such an error stops the batch without consuming anything (no
// outbox row, change record or cursor moves past it), the pass reports
// itself incomplete, and it is retried: the inline hook after a pause, the
// sweep at its next tick. Skipping the rows instead would record them as
// decided when nothing was decided (issue 29: a server at max_connections
// lost 16 contradictions for a week).
//
// Transient is the part of those that passes by itself and says nothing
// about the rows, so that a retry is not counted against them:
//
//	class 08  connection exception
//	class 40  transaction rollback (serialization failure, deadlock)
//	class 53  insufficient resources: disk full (53100), out of memory
//	          (53200), too many connections (53300)
//	class 57  operator intervention: shutdown, cancelled, cannot connect now
//	class 58  system error (I/O)
//	55P03     lock not available (lock_timeout)
//	25006     read-only transaction (a failover to a standby)
//
// and the connection dropping (a network error, a closed connection, a
// statement's deadline). The others that are not a row's (privilege 42501,
// an undefined table or column, limits such as 54001 that no single row
// causes) need an operator: they stop the batch too, and the inline hook
// counts them as attempts, so a classification it can never decide goes to
// the sweep (its change record stays) after a few.

// RowFault reports whether err is one row's fault (see above): the row may
// be skipped with its reason while the rest is written.
func RowFault(err error) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code.Class() {
	case "22", "23", "44", "P0":
		return true
	case "54":
		return pe.Code == "54000" && pe.Constraint != ""
	}
	return false
}

// Transient reports whether err is the server's or the connection's and
// passes by itself (see above): worth retrying after a pause, and no
// attempt at the rows.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case "08", "40", "53", "57", "58":
			return true
		}
		return pe.Code == "55P03" || pe.Code == "25006"
	}
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such file or directory")
}

// IsRetryable reports a deadlock (40P01) or serialization failure (40001):
// the statement did nothing and may simply be run again at once.
func IsRetryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// IsTooManyConnections reports the server refusing a connection because it
// is full (53300), or a role over its connection limit.
func IsTooManyConnections(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "53300"
}

// IsUniqueViolation reports a unique_violation (23505), optionally on a named
// constraint or index.
func IsUniqueViolation(err error, constraint string) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return constraint == "" || pe.Constraint == constraint
}
