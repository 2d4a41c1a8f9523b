package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
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

// Open connects to PostgreSQL and checks the connection within timeout.
func Open(ctx context.Context, dsn string, timeout time.Duration) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, &UnavailableError{DSN: Redact(dsn), Err: errors.New(scrub(err.Error(), dsn))}
	}
	// Jobs run one at a time per kind and keep transactions short; a small
	// pool is plenty and leaves the agent's own connections alone.
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, &UnavailableError{DSN: Redact(dsn), Err: errors.New(scrub(err.Error(), dsn))}
	}
	return db, nil
}

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact returns dsn with any password replaced, for logs and errors.
func Redact(dsn string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "<unparseable database URL>"
		}
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return kvPassword.ReplaceAllString(dsn, "${1}xxxxx")
}

// scrub removes a DSN's password from a driver message, should a driver ever
// echo it.
func scrub(msg, dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		if v := strings.Trim(m[2], "'"); v != "" {
			msg = strings.ReplaceAll(msg, v, "xxxxx")
		}
	}
	return msg
}

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
