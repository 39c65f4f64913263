//go:build !race

package listsync

// raceEnabled reports a build with the race detector, which makes the fake and the
// planner several times slower.
const raceEnabled = false
