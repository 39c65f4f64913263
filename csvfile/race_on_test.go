//go:build race

package csvfile

// raceEnabled reports a build with the race detector.
const raceEnabled = true
