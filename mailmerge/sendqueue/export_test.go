package sendqueue

import "time"

// SetTiming shortens the chunk, timeout and rescue times, so that a test's rescue takes
// seconds; it returns a function restoring them.
func SetTiming(chunk, timeout, rescue time.Duration) func() {
	c, t, r := chunkTime, jobTimeout, rescueAfter
	chunkTime, jobTimeout, rescueAfter = chunk, timeout, rescue
	return func() { chunkTime, jobTimeout, rescueAfter = c, t, r }
}
