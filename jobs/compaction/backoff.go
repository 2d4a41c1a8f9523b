package compaction

import (
	"time"

	"github.com/supersessiond/supersessiond/internal/store"
)

// backoff is the delay before the attempt after `attempt`: store.Backoff,
// whose jitter keeps events failed together by one outage from all coming
// back in the same second. u is a uniform random number in [0, 1).
func backoff(attempt int, initial, max time.Duration, u float64) time.Duration {
	return store.Backoff(attempt, initial, max, u)
}
