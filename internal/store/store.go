package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/redact"
)

// UnavailableError means the database could not be reached, or refused the
// connection. The CLI maps it to exit code 3. Its message never contains the
// password.
type UnavailableError struct {
	DSN string // redacted
	Err error
	// Refused: the server answered and turned the connection down (SSL,
	// authentication), so it is not "unreachable"; Hint says what to do.
	Refused bool
	Hint    string
}

func (e *UnavailableError) Error() string {
	what := "unreachable"
	if e.Refused {
		what = "refused the connection"
	}
	msg := fmt.Sprintf("database %s %s: %v", e.DSN, what, e.Err)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// refusal recognises a connection the server turned down for a reason an
// operator fixes in the connection string, and says how.
func refusal(err error) (hint string, refused bool) {
	var pe *pq.Error
	switch {
	case errors.Is(err, pq.ErrSSLNotSupported):
		return "the server does not accept SSL connections and the connection string does not say sslmode, " +
			"for which the driver requires SSL: add sslmode=disable (postgres://...?sslmode=disable, or " +
			"sslmode=disable in key=value form), or enable SSL on the server (ssl = on)", true
	case errors.As(err, &pe) && pe.Code == "28000" && strings.Contains(pe.Message, "no encryption"):
		return "the server accepts only SSL connections from here: set sslmode=require (or verify-full) in the connection string", true
	case errors.As(err, &pe) && pe.Code == "28P01":
		return "the password is wrong or missing: give it in the URL (percent-encoded), in PGPASSWORD, or in ~/.pgpass " +
			"(host:port:database:user:password, mode 0600)", true
	case errors.As(err, &pe) && pe.Code.Class() == "28":
		return "", true
	}
	return "", false
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

// idleTime is how long an unused connection stays open.
const idleTime = 30 * time.Second

// DefaultPool is what a command-line run uses: one operation at a time.
var DefaultPool = Pool{MaxOpen: 2, MaxIdle: 2, IdleTime: idleTime}

// NewPool is a pool of at most maxOpen connections, maxIdle of them kept
// between uses.
func NewPool(maxOpen, maxIdle int) Pool {
	return Pool{MaxOpen: maxOpen, MaxIdle: maxIdle, IdleTime: idleTime}
}

// ApplicationName is how the daemon's sessions appear in pg_stat_activity
// unless the connection string names them otherwise.
const ApplicationName = "supersessiond"

// Open connects to PostgreSQL and checks the connection within timeout. A
// connection string that cannot be parsed is reported without the driver's
// message, which would quote the password's prefix.
func Open(ctx context.Context, dsn string, pool Pool, timeout time.Duration) (*sqlx.DB, error) {
	db, err := OpenLazy(dsn, pool)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, unavailable(dsn, err)
	}
	return db, nil
}

func unavailable(dsn string, err error) error {
	hint, refused := refusal(err)
	return &UnavailableError{DSN: redact.DSN(dsn), Err: errors.New(redact.Secret(err.Error(), redact.DSNSecrets(dsn)...)),
		Refused: refused, Hint: hint}
}

// OpenLazy is Open without the check: no connection is made until one is
// needed (the console's pool, which holds no slot of the server while
// nobody reads).
func OpenLazy(dsn string, pool Pool) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return nil, unavailable(dsn, err)
	}
	if cfg.ApplicationName == "" || cfg.ApplicationName == "pqgo" {
		cfg.ApplicationName = ApplicationName
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, unavailable(dsn, err)
	}
	db := sqlx.NewDb(sql.OpenDB(sessionSetup{connector}), "postgres")
	if pool.MaxOpen <= 0 {
		pool = DefaultPool
	}
	db.SetMaxOpenConns(pool.MaxOpen)
	db.SetMaxIdleConns(min(pool.MaxIdle, pool.MaxOpen))
	db.SetConnMaxIdleTime(pool.IdleTime)
	return db, nil
}

// setupSQL prepares each new session. A SQL_ASCII database stores whatever
// bytes the agent gave it, and with the UTF8 client encoding lib/pq insists
// on, PostgreSQL refuses to send a row holding bytes that are not UTF-8: one
// such attribute would fail every query that reads it. Talking SQL_ASCII to
// a SQL_ASCII database passes the bytes through, and the jobs skip what is
// not UTF-8, row by row, with a reason.
const setupSQL = `DO $$ BEGIN
  IF current_setting('server_encoding') = 'SQL_ASCII' THEN
    SET client_encoding = 'SQL_ASCII';
  END IF;
END $$`

// sessionSetup runs setupSQL on every connection the pool opens.
type sessionSetup struct{ driver.Connector }

func (s sessionSetup) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := s.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if ex, ok := c.(driver.ExecerContext); ok {
		if _, err := ex.ExecContext(ctx, setupSQL, nil); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
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

// WithApplicationName returns dsn naming ApplicationName as the session's
// application_name unless it names one already: for the connections the
// driver opens outside Open (the inline hook's LISTEN connection).
func WithApplicationName(dsn string) string {
	if strings.Contains(dsn, "application_name=") {
		return dsn
	}
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "application_name=" + ApplicationName
	}
	return dsn + " application_name=" + ApplicationName
}

// freeConnectionsSQL counts the connection slots a role without superuser
// rights (the agent's, usually) can still take. A role without
// pg_read_all_stats (the daemon's, usually) sees another role's session
// without its backend_type: a session with a database (datid) is then
// counted as a client, which counts an autovacuum or parallel worker too,
// on the side that leaves the agent more.
const freeConnectionsSQL = `
SELECT current_setting('max_connections')::int
     - current_setting('superuser_reserved_connections')::int
     - coalesce(nullif(current_setting('reserved_connections', true), '')::int, 0)
     - (SELECT count(*) FROM pg_stat_activity
        WHERE backend_type = 'client backend' OR (backend_type IS NULL AND datid IS NOT NULL))`

// FreeConnections is how many more client connections the server accepts
// from an ordinary role.
func FreeConnections(ctx context.Context, db *sqlx.DB) (int, error) {
	var n int
	err := db.GetContext(ctx, &n, freeConnectionsSQL)
	return n, err
}

// Snapshot returns the current transaction snapshot (pg_current_snapshot),
// for deleting later what it saw committed (pg_visible_in_snapshot): the
// change records and key digests that a read begun after it covers.
func Snapshot(ctx context.Context, q sqlx.QueryerContext) (string, error) {
	var s string
	err := sqlx.GetContext(ctx, q, &s, `SELECT pg_current_snapshot()::text`)
	return s, err
}

// Nullable is s as a statement parameter: NULL when empty.
func Nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Renew calls renew every period until the returned stop is called (or ctx
// ends), so a batch that outlives its claims (a slow LLM) keeps them; a
// process that dies stops renewing, and its claims expire. A failed renewal
// is passed to failed and tried again at the next period. stop waits for a
// renewal in progress.
func Renew(ctx context.Context, period time.Duration, renew func(context.Context) error, failed func(error)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := renew(ctx); err != nil && failed != nil {
					failed(err)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
