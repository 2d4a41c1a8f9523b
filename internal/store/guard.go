package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
)

// Guard leaves a crowded server's last connection slots to the agent.
//
// The pool opens connections as the daemon's paths need them, up to its
// size. Before a path that may open one goes on (a scheduled run, an inline
// drain, each batch of a pass, a LISTEN reconnect, a one-shot command), it
// asks the guard. The guard counts the slots an ordinary role can still take
// and lets the path go on only when, once this process's pool has grown to
// its full size, at least Min of them would still be free. Otherwise the
// path waits, with exponential backoff and jitter, logged and counted by
// path. Connections the pool keeps open are used: they take no new slot.
//
// While the server has no room for this process's pool, the pool is held
// to one connection: it closes the others as they are returned and opens
// none, so work already under way when the server became crowded goes on,
// one statement at a time, without taking the agent's slots. (No path of
// the daemon holds a connection while it waits for another, so one is
// enough.) The pool gets its size back when the guard finds room.
//
// The guard asks one question at a time, on that one connection, and
// remembers the answer briefly, so that many paths waiting at once cost the
// server one connection. The watchdog's ping (Ping) never waits, but it
// asks in turn with the guard.
type Guard struct {
	db      *sqlx.DB
	min     int
	maxOpen int // the pool's size
	maxIdle int // and how many it keeps between uses
	log     *slog.Logger
	rand    func() float64
	m       GuardMetrics

	mu       sync.Mutex
	asked    time.Time // when the last answer was had
	free     int
	room     bool
	yielding bool // the pool is held to one connection until there is room
}

// DefaultMinFree is how many slots the guard leaves to the agent unless
// told otherwise.
const DefaultMinFree = 2

// GuardOptions configure a Guard.
type GuardOptions struct {
	// Min is how many slots must stay free for ordinary roles (default
	// DefaultMinFree).
	Min int
	// Pool is the pool's configuration: its idle limit comes back when the
	// server has room again.
	Pool Pool
	// Logger receives the waits (default: discarded).
	Logger *slog.Logger
	// Registry exports the guard's metrics (nil: counted, not exported).
	Registry prometheus.Registerer
	// Rand is the jitter's source, uniform in [0, 1) (default math/rand/v2).
	Rand func() float64
}

// GuardMetrics are the guard's.
type GuardMetrics struct {
	Waits  *prometheus.CounterVec // path
	Waited *prometheus.CounterVec // path; seconds
	Free   prometheus.Gauge
}

// Backoff bounds of Wait, and how long an answer is reused.
const (
	waitInitial = 250 * time.Millisecond
	waitMax     = 15 * time.Second
	answerFor   = 250 * time.Millisecond
)

// NewGuard returns the guard of db's pool.
func NewGuard(db *sqlx.DB, opts GuardOptions) *Guard {
	if opts.Min <= 0 {
		opts.Min = DefaultMinFree
	}
	if opts.Pool.MaxOpen <= 0 {
		opts.Pool = DefaultPool
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	g := &Guard{db: db, min: opts.Min, maxOpen: opts.Pool.MaxOpen, maxIdle: min(opts.Pool.MaxIdle, opts.Pool.MaxOpen),
		log: opts.Logger, rand: opts.Rand, room: true}
	g.m = GuardMetrics{
		Waits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "connection_waits_total",
			Help: "Times a path found the server nearly out of connection slots and waited for room (a scheduled run skips its tick instead), by path.",
		}, []string{"path"}),
		Waited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "connection_wait_seconds_total",
			Help: "Seconds paths spent waiting for free connection slots, by path.",
		}, []string{"path"}),
		Free: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "supersessiond", Name: "connection_slots_free",
			Help: "Connection slots an ordinary role could still take when the guard last asked (0 when the server refused even that).",
		}),
	}
	if opts.Registry != nil {
		opts.Registry.MustRegister(g.m.Waits, g.m.Waited, g.m.Free)
	}
	return g
}

// Metrics are the guard's metrics (tests).
func (g *Guard) Metrics() *GuardMetrics { return &g.m }

// Min is how many slots the guard leaves free.
func (g *Guard) Min() int {
	if g == nil {
		return 0
	}
	return g.min
}

// Room reports whether a path may go on: the free slots, less those this
// process's pool may still open and the extra connections the path opens
// outside it (a LISTEN connection: 1), leave at least Min. A question the
// server refuses because it is full means no room; one that fails for
// another reason means room (the path will meet the failure and say what
// it is). A nil Guard always has room.
func (g *Guard) Room(ctx context.Context, extra int) (free int, ok bool) {
	if g == nil {
		return 0, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.asked) > answerFor {
		g.ask(ctx)
	}
	return g.free, g.room && g.free-g.grow()-extra >= g.min
}

// grow is how many more connections this process's pool may open (g.mu
// held): up to its size, beyond those it keeps. A connection open beyond
// what the pool keeps between uses is closed when it is returned and opened
// again when it is wanted, so it counts as one the pool may still open.
func (g *Guard) grow() int {
	keeps := g.maxIdle
	if g.yielding {
		keeps = 1
	}
	return max(g.maxOpen-min(g.db.Stats().OpenConnections, keeps), 0)
}

// ask counts the free slots (g.mu held) and holds the pool to one
// connection, or gives it its size back, as the answer changes.
func (g *Guard) ask(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	free, err := FreeConnections(qctx, g.db)
	g.asked = time.Now()
	switch {
	case IsTooManyConnections(err):
		g.free, g.room = 0, false
	case err != nil:
		g.free, g.room = free, true
		return
	default:
		g.free, g.room = free, true
	}
	g.m.Free.Set(float64(g.free))
	crowded := !g.room || g.free-g.grow() < g.min
	switch {
	case crowded && !g.yielding:
		g.yielding = true
		g.db.SetMaxOpenConns(1)
		g.db.SetMaxIdleConns(1)
		g.log.Warn("the database is nearly out of connection slots: the pool is held to one connection, the others go back to the agent",
			"free_slots", g.free, "min_free_slots", g.min)
	case !crowded && g.yielding:
		g.yielding = false
		g.db.SetMaxOpenConns(g.maxOpen)
		g.db.SetMaxIdleConns(g.maxIdle)
		g.log.Info("the database has free connection slots again; the pool has its size back", "free_slots", g.free, "min_free_slots", g.min)
	}
}

// Wait returns once Room says a path may go on (or ctx ends, with its
// error), waiting meanwhile with exponential backoff and jitter. A wait is
// logged when it begins and ends, and counted (connection_waits_total,
// connection_wait_seconds_total) under path.
func (g *Guard) Wait(ctx context.Context, path string) error {
	if g == nil {
		return nil
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		free, ok := g.Room(ctx, 0)
		if ok {
			if attempt > 1 {
				g.m.Waited.WithLabelValues(path).Add(time.Since(start).Seconds())
				g.log.Info("free connection slots again; going on", "path", path, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if attempt == 1 {
			g.m.Waits.WithLabelValues(path).Inc()
			g.log.Warn("waiting: the database is nearly out of connection slots, and the last ones are left to the agent",
				"path", path, "free_slots", free, "min_free_slots", g.min)
		}
		select {
		case <-ctx.Done():
			g.m.Waited.WithLabelValues(path).Add(time.Since(start).Seconds())
			return fmt.Errorf("waiting for free connection slots: %w", ctx.Err())
		case <-time.After(Backoff(attempt, waitInitial, waitMax, g.rand())):
		}
	}
}

// Skipped counts a path that found no room and gave its turn up (a
// scheduled run's tick) instead of waiting.
func (g *Guard) Skipped(path string) {
	if g != nil {
		g.m.Waits.WithLabelValues(path).Inc()
	}
}

// Ping checks that the database answers, without waiting for room: the
// watchdog must be told whenever the database is there. It asks in turn
// with the guard, so that the two share one connection when the pool keeps
// only one.
func (g *Guard) Ping(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.db.PingContext(ctx)
}

// ErrCrowded is a connection not opened because the server is nearly out
// of slots (a Dialer's refusal).
var ErrCrowded = errors.New("not connecting: the database is nearly out of connection slots, and the last ones are left to the agent")

// Dialer is a dialer for connections opened outside the pool (the inline
// hook's LISTEN connection, given to pq.NewDialListener): it dials only when
// Room has room for one more connection. After a refusal it refuses at once,
// without asking, until a backoff (exponential, with jitter) has passed, so
// a driver that retries every few hundred milliseconds asks the server far
// less often. Each refusal is counted under path.
func (g *Guard) Dialer(path string) *Dialer {
	return &Dialer{g: g, path: path}
}

// Dialer: see Guard.Dialer.
type Dialer struct {
	g    *Guard
	path string
	net  net.Dialer

	mu       sync.Mutex
	refused  int
	notUntil time.Time
}

// Dial dials, when there is room.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialTimeout dials within timeout, when there is room.
func (d *Dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

// DialContext dials, when there is room.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if d.g == nil {
		return d.net.DialContext(ctx, network, address)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if time.Now().Before(d.notUntil) {
		return nil, ErrCrowded
	}
	if free, ok := d.g.Room(ctx, 1); !ok {
		d.refused++
		d.notUntil = time.Now().Add(Backoff(d.refused, waitInitial, waitMax, d.g.rand()))
		d.g.Skipped(d.path)
		return nil, fmt.Errorf("%w (%d free, %d kept for the agent)", ErrCrowded, free, d.g.min)
	}
	d.refused = 0
	return d.net.DialContext(ctx, network, address)
}

// Backoff is the delay after the given failed attempt (1-based):
// initial·2^(attempt-1), capped at max, plus up to half of it again
// (jitter, so that what failed together by one outage does not all come
// back in the same instant), capped at max. u is uniform in [0, 1).
//
// The result lies in [initial, max], and while below the cap it strictly
// grows with attempt: the next base (2·base) exceeds this one's largest
// jittered value (1.5·base).
func Backoff(attempt int, initial, max time.Duration, u float64) time.Duration {
	d := initial
	for i := 1; i < attempt && d > 0 && d < max; i++ {
		d *= 2
	}
	base := min(d, max)
	return min(base+time.Duration(u*float64(base)/2), max)
}
