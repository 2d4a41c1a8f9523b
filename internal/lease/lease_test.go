package lease_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/lease"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var tick1 = time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)

func TestOneHolderPerTick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	a := lease.New(db.DB, nil, "a", time.Minute)
	b := lease.New(db.DB, nil, "b", time.Minute)

	la, err := a.Acquire(ctx, "sweep", tick1)
	if err != nil || la == nil {
		t.Fatalf("a must get the lease: %v", err)
	}
	if lb, err := b.Acquire(ctx, "sweep", tick1); err != nil || lb != nil {
		t.Fatalf("b must not get a held lease: %v %v", lb, err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if lb, err := b.Acquire(ctx, "sweep", tick1); err != nil || lb != nil {
		t.Fatalf("the tick already ran: b must not run it again: %v %v", lb, err)
	}
	lb, err := b.Acquire(ctx, "sweep", tick1.Add(30*time.Minute))
	if err != nil || lb == nil {
		t.Fatalf("b must get the next tick: %v", err)
	}
	if lb.Term() != la.Term()+1 {
		t.Fatalf("term must increase: %d then %d", la.Term(), lb.Term())
	}
	// Other jobs are independent.
	if l, err := a.Acquire(ctx, "tombstones", tick1); err != nil || l == nil {
		t.Fatalf("a different job's lease is free: %v", err)
	}
}

func TestDeadHolderLosesLeaseAndIsFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	a := lease.New(db.DB, nil, "a", time.Second)
	b := lease.New(db.DB, nil, "b", time.Second)
	la, err := a.Acquire(ctx, "sweep", tick1)
	if err != nil || la == nil {
		t.Fatal("a must get the lease", err)
	}
	// a "dies" (stops renewing); once expired, b takes over a later tick.
	var lb *lease.Lease
	deadline := time.Now().Add(10 * time.Second)
	for lb == nil && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if lb, err = b.Acquire(ctx, "sweep", tick1.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if lb == nil {
		t.Fatal("b never got the expired lease")
	}
	// a comes back: its term is stale, it cannot renew or release b's lease.
	if err := la.Renew(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("stale holder renewed: %v", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lb.Renew(ctx); err != nil {
		t.Fatalf("b's lease must survive a's release: %v", err)
	}
}

func TestHoldRenewsAndCancelsOnLoss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	m := lease.New(db.DB, nil, "a", 600*time.Millisecond)
	l, err := m.Acquire(ctx, "sweep", tick1)
	if err != nil || l == nil {
		t.Fatal(err)
	}
	// Held across several TTLs: renewal keeps it ours.
	err = l.Hold(ctx, func(ctx context.Context) error {
		time.Sleep(1500 * time.Millisecond)
		return ctx.Err()
	})
	if err != nil {
		t.Fatalf("renewed lease was lost: %v", err)
	}
	// Stolen mid-run (simulating expiry and takeover): the job is cancelled.
	l, err = m.Acquire(ctx, "sweep", tick1.Add(time.Minute))
	if err != nil || l == nil {
		t.Fatal(err)
	}
	err = l.Hold(ctx, func(ctx context.Context) error {
		if _, err := db.Exec(`UPDATE supersessiond.leases SET holder = 'thief', term = term + 1`); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("not cancelled")
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation after loss, got %v", err)
	}
}

func TestConcurrentAcquireHasOneWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	var winners atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		m := lease.New(db.DB, nil, string(rune('a'+i)), time.Minute)
		wg.Go(func() {
			l, err := m.Acquire(ctx, "sweep", tick1)
			if err != nil {
				t.Error(err)
			}
			if l != nil {
				winners.Add(1)
			}
		})
	}
	wg.Wait()
	if winners.Load() != 1 {
		t.Fatalf("%d winners", winners.Load())
	}
}
