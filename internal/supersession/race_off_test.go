//go:build !race

package supersession

const raceDetector = false
