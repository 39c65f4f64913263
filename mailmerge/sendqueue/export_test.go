package sendqueue

import "time"

// SetTiming shortens the chunk, timeout, rescue and slowdown times, so that a test's
// rescue takes seconds; TestMain calls it before any test runs.
func SetTiming(chunk, timeout, rescue, slowdown time.Duration) {
	chunkTime, jobTimeout, rescueAfter, slowdownSnooze = chunk, timeout, rescue, slowdown
}

// The queries that join a send's rows to its journal's keys, for TestQueriesLookKeysUp.
var (
	StatusFatesQuery = statusFatesQuery
	ChunkRowsQuery   = chunkRowsQuery
)
