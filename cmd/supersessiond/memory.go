package main

import "runtime/debug"

// The collector's policy. Go's default collects whenever the heap has
// doubled since the last collection: a full pass holds ~45 MB of batches in
// flight and allocates a gigabyte, so it collected every ~45 MB, thirty-five
// times a pass, and the heap still peaked near twice what was live. Instead
// the heap may grow fivefold, up to a soft limit: a pass collects about a
// third less often and its peak RSS is lower (the limit bounds it), and an
// idle daemon holding little stays small. Where the live heap itself nears
// the limit (a giant aspect read whole), the runtime collects more often,
// spending at most half the CPU on it, and lets the heap grow past the limit
// rather than fail.
const (
	gcPercent   = 400
	memoryLimit = 112 << 20 // bytes: the soft limit, GOMEMLIMIT's default here
)

// memoryPolicy sets the collector's policy unless the environment sets
// either of the Go runtime's own knobs (GOGC, GOMEMLIMIT): an operator's
// values are then the policy, as in any Go program.
func memoryPolicy(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(memoryLimit)
}
