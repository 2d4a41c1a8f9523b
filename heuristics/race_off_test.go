//go:build !race

package heuristics

const raceDetector = false
