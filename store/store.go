package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/redact"
)

// UnavailableError means the database could not be reached. The CLI maps it
// to exit code 3. Its message never contains the password.
type UnavailableError struct {
	DSN string // redacted
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("database %s unreachable: %v", e.DSN, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Pool bounds the connections the daemon holds, so that it never crowds out
// the agent it serves: at most MaxOpen at once, at most MaxIdle kept between
// uses, and those closed after IdleTime unused.
type Pool struct {
	MaxOpen  int
	MaxIdle  int
	IdleTime time.Duration
}

// DefaultPool is what a command-line run uses: one operation at a time.
var DefaultPool = Pool{MaxOpen: 2, MaxIdle: 1, IdleTime: 30 * time.Second}

// Open connects to PostgreSQL and checks the connection within timeout. A
// connection string that cannot be parsed is reported without the driver's
// message, which would quote the password's prefix.
func Open(ctx context.Context, dsn string, pool Pool, timeout time.Duration) (*sqlx.DB, error) {
	if _, err := pq.NewConnector(dsn); err != nil {
		return nil, &UnavailableError{DSN: redact.DSN(dsn), Err: errors.New(redact.Secret(err.Error(), redact.DSNSecrets(dsn)...))}
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, &UnavailableError{DSN: redact.DSN(dsn), Err: errors.New(redact.Secret(err.Error(), redact.DSNSecrets(dsn)...))}
	}
	if pool.MaxOpen <= 0 {
		pool = DefaultPool
	}
	db.SetMaxOpenConns(pool.MaxOpen)
	db.SetMaxIdleConns(min(pool.MaxIdle, pool.MaxOpen))
	db.SetConnMaxIdleTime(pool.IdleTime)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, &UnavailableError{DSN: redact.DSN(dsn), Err: errors.New(redact.Secret(err.Error(), redact.DSNSecrets(dsn)...))}
	}
	return db, nil
}

// Redact returns dsn with any password replaced, for logs and errors.
func Redact(dsn string) string { return redact.DSN(dsn) }

// InTx runs fn in a transaction, committing when fn returns nil.
func InTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// IsConnectionError reports whether err means the database went away (as
// opposed to a query being wrong): such failures are retried on the next tick.
func IsConnectionError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case "08", "57": // connection exception, operator intervention (shutdown)
			return true
		}
	}
	return strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such file or directory")
}

// IsRetryable reports a deadlock (40P01) or serialization failure (40001):
// the statement did nothing and may simply be run again.
func IsRetryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
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
