package smtp

import "iter"

// indexed is the result of the job at position i of a run.
type indexed[R any] struct {
	i int
	r R
}

// runOrdered runs work over the jobs of src on up to workers goroutines and
// yields the results in the order of src. now may answer a job at once,
// without a goroutine (a message skipped or not attempted): it reports
// whether it did. At most window results are held for ordering, so memory
// stays flat however long src is. Stopping the iteration (yield returns
// false) stops taking jobs from src; the jobs already started finish first.
func runOrdered[J, R any](workers, window int, src iter.Seq[J], now func(i int, j J) (R, bool), work func(i int, j J) R, yield func(R) bool) {
	next, stop := iter.Pull(src)
	defer stop()
	results := make(chan indexed[R], workers)
	pending := make(map[int]R)
	inflight, index, want := 0, 0, 0
	exhausted, stopped := false, false
	defer func() {
		for ; inflight > 0; inflight-- {
			<-results
		}
	}()
	for {
		// A job is taken only when a worker is free for it, so that every
		// job taken is done even if the iteration stops.
		for !exhausted && !stopped && inflight < workers && len(pending)+inflight < window {
			j, ok := next()
			if !ok {
				exhausted = true
				break
			}
			i := index
			index++
			if r, ok := now(i, j); ok {
				pending[i] = r
				continue
			}
			inflight++
			go func() { results <- indexed[R]{i, work(i, j)} }()
		}
		for {
			res, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			want++
			if !stopped && !yield(res) {
				stopped = true
			}
		}
		if stopped && inflight == 0 {
			return
		}
		if exhausted && inflight == 0 && len(pending) == 0 {
			return
		}
		if inflight > 0 {
			res := <-results
			inflight--
			pending[res.i] = res.r
		}
	}
}
