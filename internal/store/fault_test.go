package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/supersessiond/supersessiond/internal/store"
)

// Whose fault an error is, in the one place that decides it: a row's data
// or constraint skips that row; a busy, full or vanishing server stops the
// batch and is retried without counting against the rows; the rest stops
// the batch too.
func TestWhoseFaultAnErrorIs(t *testing.T) {
	t.Parallel()
	pqe := func(code string) error { return fmt.Errorf("write: %w", &pq.Error{Code: pqerror.Code(code)}) }
	cases := []struct {
		name           string
		err            error
		row, transient bool
	}{
		{"stack's foreign key", pqe("23503"), true, false},
		{"unique violation", pqe("23505"), true, false},
		{"check violation", pqe("23514"), true, false},
		{"not UTF-8", pqe("22021"), true, false},
		{"value too long", pqe("22001"), true, false},
		{"view's check option", pqe("44000"), true, false},
		{"stack trigger's RAISE", pqe("P0001"), true, false},
		{"stack trigger's ASSERT", pqe("P0004"), true, false},
		{"index row too large", fmt.Errorf("w: %w", &pq.Error{Code: "54000", Constraint: "history_reason_idx"}), true, false},
		{"too many connections", pqe("53300"), false, true},
		{"disk full", pqe("53100"), false, true},
		{"out of memory", pqe("53200"), false, true},
		{"admin shutdown", pqe("57P01"), false, true},
		{"cannot connect now", pqe("57P03"), false, true},
		{"statement cancelled", pqe("57014"), false, true},
		{"connection failure", pqe("08006"), false, true},
		{"serialization failure", pqe("40001"), false, true},
		{"deadlock", pqe("40P01"), false, true},
		{"lock timeout", pqe("55P03"), false, true},
		{"failed over to a standby", pqe("25006"), false, true},
		{"I/O error", pqe("58030"), false, true},
		{"privilege revoked", pqe("42501"), false, false},
		{"table gone", pqe("42P01"), false, false},
		{"stack depth", pqe("54001"), false, false},
		{"program limit, no index named", pqe("54000"), false, false},
		{"internal error", pqe("XX000"), false, false},
		{"connection dropped", fmt.Errorf("w: %w", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}), false, true},
		{"closed connection", fmt.Errorf("w: %w", net.ErrClosed), false, true},
		{"deadline", fmt.Errorf("w: %w", context.DeadlineExceeded), false, true},
		{"cancelled", fmt.Errorf("w: %w", context.Canceled), false, false},
		{"not a database error", errors.New("encode batch: bad"), false, false},
	}
	for _, c := range cases {
		if got := store.RowFault(c.err); got != c.row {
			t.Errorf("%s: RowFault = %v, want %v", c.name, got, c.row)
		}
		if got := store.Transient(c.err); got != c.transient {
			t.Errorf("%s: Transient = %v, want %v", c.name, got, c.transient)
		}
		if c.row && c.transient {
			t.Errorf("%s: a row's fault cannot be the server's too", c.name)
		}
	}
}
