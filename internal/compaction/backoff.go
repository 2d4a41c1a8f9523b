package compaction

import (
	"time"
)

// backoffBase is the un-jittered delay after the given attempt (1-based):
// initial·2^(attempt-1), capped at max.
func backoffBase(attempt int, initial, max time.Duration) time.Duration {
	d := initial
	for i := 1; i < attempt && d > 0 && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// backoff is the delay before the attempt after `attempt`: the base delay
// plus up to half of it again (jitter, so that events failed together by one
// outage do not all come back in the same second), capped at max. u is a
// uniform random number in [0, 1).
//
// The result lies in [initial, max], and while below the cap it strictly
// grows with attempt: the next base (2·base) exceeds this one's largest
// jittered value (1.5·base).
func backoff(attempt int, initial, max time.Duration, u float64) time.Duration {
	base := backoffBase(attempt, initial, max)
	return min(base+time.Duration(u*float64(base)/2), max)
}
