package compaction

import (
	"testing"
	"time"
)

func TestBackoffStaysWithinBoundsAndGrows(t *testing.T) {
	t.Parallel()
	cases := []struct{ initial, max time.Duration }{
		{time.Minute, time.Hour},
		{time.Second, 10 * time.Second},
		{time.Minute, time.Minute},
		{30 * time.Second, 45 * time.Second},
	}
	for _, c := range cases {
		for _, u := range []float64{0, 0.5, 0.999999} {
			prevHigh := time.Duration(0)
			for attempt := 1; attempt <= 200; attempt++ {
				d := backoff(attempt, c.initial, c.max, u)
				if d < c.initial || d > c.max {
					t.Fatalf("%+v u=%v attempt %d: %s outside [%s, %s]", c, u, attempt, d, c.initial, c.max)
				}
				// Whatever the jitter, a later attempt never waits less than
				// an earlier one could have, until the cap.
				low := backoff(attempt, c.initial, c.max, 0)
				if low < prevHigh && low < c.max {
					t.Fatalf("%+v attempt %d: lowest %s below previous highest %s", c, attempt, low, prevHigh)
				}
				prevHigh = backoff(attempt, c.initial, c.max, 0.999999)
			}
		}
	}
	if got := backoff(1, time.Minute, time.Hour, 0); got != time.Minute {
		t.Fatalf("first backoff without jitter = %s, want initial", got)
	}
	if got := backoff(1<<30, time.Minute, time.Hour, 0.3); got != time.Hour {
		t.Fatalf("huge attempt = %s, want max", got)
	}
}
