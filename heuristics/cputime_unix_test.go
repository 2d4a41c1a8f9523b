//go:build unix

package heuristics

import "syscall"

// cpuNanos is the process's user+system CPU time. Benchmarks report it per
// op beside wall time because the machines they run on are shared: CPU time
// does not count the time spent waiting for a core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
