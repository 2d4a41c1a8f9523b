//go:build race

package supersession

// raceDetector: this test binary runs under -race, where deciding every pair
// of the corpora's cross product takes ten times as long.
const raceDetector = true
