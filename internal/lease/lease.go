// Package lease lets several daemons share one database and still run each
// scheduled job once per tick.
//
// A lease is a row in supersessiond_leases: the job name, its holder, a term
// and the tick (the schedule time) the holder is running for. Acquiring is one
// guarded upsert that succeeds only when the row is free (expired, or already
// ours) and the tick is newer than the last one run; the term increases on
// every acquisition. A running holder renews the lease well before it
// expires; renewal is guarded by holder and term, so a holder that stalled
// past expiry (a long GC pause, a frozen VM) and was replaced finds its term
// stale, stops, and cannot extend a lease that is no longer its own. A holder
// that dies simply stops renewing and loses the lease within the TTL.
//
// Times are the database's clock (now()), never the replicas': the replicas'
// clocks may disagree, the database is the one place they all meet.
//
// Correctness never depends on leases: every job's writes are idempotent and
// guarded. Leases buy efficiency (one sweep per tick, not one per replica).
package lease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// Manager acquires leases for one holder (one daemon process).
type Manager struct {
	db     *sqlx.DB
	sql    statements
	holder string
	ttl    time.Duration
}

// New returns a Manager on the leases table names describes (nil: the
// reference layout). holder must be unique per process; ttl bounds how long
// a dead holder keeps a lease.
func New(db *sqlx.DB, names *schema.Names, holder string, ttl time.Duration) *Manager {
	return &Manager{db: db, holder: holder, ttl: ttl, sql: schema.Render(names, leaseSQL)}
}

// statements are the leases' SQL, rendered for one database
// (schema.Render).
type statements struct {
	Acquire, Renew schema.Named
	Release        string
}

var leaseSQL = statements{Acquire: schema.NamedSQL(acquireSQL), Renew: schema.NamedSQL(renewSQL), Release: releaseSQL}

// Lease is a held lease.
type Lease struct {
	m    *Manager
	name string
	term int64
	tick time.Time
}

// Term is the lease's fencing term.
func (l *Lease) Term() int64 { return l.term }

const acquireSQL = `
INSERT INTO {{.Leases}} AS l (name, holder, term, tick, acquired_at, expires_at)
VALUES (:name, :holder, 1, :tick, now(), now() + make_interval(secs => :ttl))
ON CONFLICT (name) DO UPDATE
SET holder = EXCLUDED.holder,
    term = l.term + 1,
    tick = EXCLUDED.tick,
    acquired_at = now(),
    expires_at = EXCLUDED.expires_at
WHERE (l.expires_at <= now() OR l.holder = EXCLUDED.holder)
  AND (l.tick IS NULL OR l.tick < EXCLUDED.tick)
RETURNING term`

// Acquire takes the lease on name for tick. It returns (nil, nil) when
// another holder has it, or when this tick already ran (here or elsewhere).
func (m *Manager) Acquire(ctx context.Context, name string, tick time.Time) (*Lease, error) {
	var term int64
	q, args, err := m.sql.Acquire.Bind(map[string]any{"name": name, "holder": m.holder, "tick": tick, "ttl": m.ttl.Seconds()})
	if err == nil {
		err = m.db.GetContext(ctx, &term, q, args...)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lease: acquire %s: %w", name, err)
	}
	return &Lease{m: m, name: name, term: term, tick: tick}, nil
}

const (
	renewSQL = `
UPDATE {{.Leases}} SET expires_at = now() + make_interval(secs => :ttl)
WHERE name = :name AND holder = :holder AND term = :term`
	releaseSQL = `
UPDATE {{.Leases}} SET expires_at = now()
WHERE name = $1 AND holder = $2 AND term = $3`
)

// ErrLost means the lease expired and was taken over, or vanished.
var ErrLost = errors.New("lease lost")

// Renew extends the lease by the TTL; ErrLost when it is no longer ours.
func (l *Lease) Renew(ctx context.Context) error {
	q, args, err := l.m.sql.Renew.Bind(map[string]any{"name": l.name, "holder": l.m.holder, "term": l.term, "ttl": l.m.ttl.Seconds()})
	var res sql.Result
	if err == nil {
		res, err = l.m.db.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return fmt.Errorf("lease: renew %s: %w", l.name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("lease: renew %s (term %d): %w", l.name, l.term, ErrLost)
	}
	return nil
}

// Release frees the lease at once, keeping its tick so this tick does not run
// again elsewhere.
func (l *Lease) Release(ctx context.Context) error {
	_, err := l.m.db.ExecContext(ctx, l.m.sql.Release, l.name, l.m.holder, l.term)
	if err != nil {
		return fmt.Errorf("lease: release %s: %w", l.name, err)
	}
	return nil
}

// Hold runs fn with a context that is cancelled if the lease is lost,
// renewing it every TTL/3 meanwhile, and releases it afterwards.
func (l *Lease) Hold(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(l.m.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := l.Renew(ctx); err != nil {
					// A transient failure is retried on the next tick of the
					// ticker; only a definite loss stops the job.
					if errors.Is(err, ErrLost) {
						cancel(err)
						return
					}
				}
			}
		}
	}()
	err := fn(ctx)
	close(done)
	if cause := context.Cause(ctx); errors.Is(cause, ErrLost) && err != nil {
		err = fmt.Errorf("%w (%v)", err, cause)
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if rerr := l.Release(rctx); rerr != nil && err == nil {
		err = rerr
	}
	return err
}
