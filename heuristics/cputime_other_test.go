//go:build !unix

package heuristics

func cpuNanos() int64 { return 0 }
