//go:build race

package heuristics

// raceDetector: this test binary runs under -race, where deciding every pair
// of the corpora's cross product takes ten times as long.
const raceDetector = true
