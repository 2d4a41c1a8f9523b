package store_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

// Backoff grows exponentially, stays within [initial, max], and its jitter
// never makes a later attempt come sooner than an earlier one's longest.
func TestBackoff(t *testing.T) {
	t.Parallel()
	initial, most := 250*time.Millisecond, 15*time.Second
	prevHigh := time.Duration(0)
	for attempt := 1; attempt <= 12; attempt++ {
		low, high := store.Backoff(attempt, initial, most, 0), store.Backoff(attempt, initial, most, 0.999999)
		if low < initial || high > most || high < low {
			t.Fatalf("attempt %d: [%s, %s] outside [%s, %s]", attempt, low, high, initial, most)
		}
		if low < most && low <= prevHigh && attempt > 1 {
			t.Fatalf("attempt %d: %s is not past the previous attempt's longest %s", attempt, low, prevHigh)
		}
		prevHigh = high
	}
	if got := store.Backoff(1<<20, initial, most, 0.5); got != most {
		t.Fatalf("a long run of failures waits %s, want the cap %s", got, most)
	}
}

// On a server with few slots, another client takes all but one: the guard
// finds no room (its pool could still grow past the agent's last slots),
// gives back all but one idle connection, and a path waits, counted, until
// the other client lets go. A refused LISTEN dial is counted as well.
func TestGuardWaitsForRoomAndGivesIdleConnectionsBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{MaxConnections: 12})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	// 12 slots, 3 for superusers: 9 for ordinary roles.
	pool := store.Pool{MaxOpen: 3, MaxIdle: 3, IdleTime: time.Minute}
	db, err := store.Open(ctx, cluster.URL("postgres"), pool, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := prometheus.NewRegistry()
	g := store.NewGuard(db, store.GuardOptions{Min: 2, Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	if _, ok := g.Room(ctx, 0); !ok {
		t.Fatal("no room on an idle server")
	}
	// The pool opens its three connections and keeps them idle.
	hold := make([]*sqlx.Conn, 3)
	for i := range hold {
		if hold[i], err = db.Connx(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range hold {
		c.Close()
	}
	// Another client takes 5 of the 6 slots left: 1 free.
	hog, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer hog.Close()
	var held []*sqlx.Conn
	for range 5 {
		c, err := hog.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(300 * time.Millisecond) // past the guard's remembered answer
	if free, ok := g.Room(ctx, 0); ok || free != 1 {
		t.Fatalf("Room = %d, %v with one slot free; want no room", free, ok)
	}
	if idle := db.Stats().Idle; idle > 1 {
		t.Fatalf("the crowded pool still keeps %d idle connections", idle)
	}
	if _, err := g.Dialer("listen").DialContext(ctx, "unix", "/nonexistent"); !errors.Is(err, store.ErrCrowded) {
		t.Fatalf("a LISTEN dial on a crowded server: %v", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- g.Wait(ctx, "test") }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) while the server is crowded", err)
	case <-time.After(time.Second):
	}
	for _, c := range held {
		c.Close()
	}
	hog.Close()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return once the server had room")
	}
	if v := testutil.ToFloat64(g.Metrics().Waits.WithLabelValues("test")); v != 1 {
		t.Fatalf("waits{test} = %v", v)
	}
	if v := testutil.ToFloat64(g.Metrics().Waits.WithLabelValues("listen")); v != 1 {
		t.Fatalf("waits{listen} = %v", v)
	}
	if v := testutil.ToFloat64(g.Metrics().Waited.WithLabelValues("test")); v <= 0 {
		t.Fatalf("wait seconds{test} = %v", v)
	}
}
