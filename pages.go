package sendloop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"sync/atomic"
)

// errPageRepeated stops an iterator whose next page is the same as the previous one: the
// service ignored the page number, and walking on would never end.
var errPageRepeated = errors.New("the page repeats the previous one")

// pages is the one paging engine of the package's iterators (BrowseIter and every
// CampaignData …Iter). It walks numbered pages from first, each of at most size records
// (the size the service uses), yielding each record, or an error once before it stops. It
// stops after a short or empty page, or, with an error wrapping errPageRepeated, at a page
// whose records all have the keys of the previous page's: records need not be unique (two
// views in the same second are equal), so only a whole page that repeats proves that the
// walk does not advance.
func pages[T any, K comparable](command string, first, size int, key func(T) K, fetch func(page int) ([]T, error)) iter.Seq2[T, error] {
	return pagesAhead(context.Background(), command, first, size, 1, key, func(_ context.Context, page int) ([]T, error) {
		return fetch(page)
	}, nil)
}

// pagesAhead is pages with up to n pages asked for at once (see readAhead), yielded in
// order by the same rules: a walk that yields the same records, errors and stops as one
// page at a time, only sooner. fetch gets a context that ends when the walk does. release,
// when not nil, gets each page back once its records have all been yielded, for fetch to
// reuse.
func pagesAhead[T any, K comparable](ctx context.Context, command string, first, size, n int, key func(T) K,
	fetch func(ctx context.Context, page int) ([]T, error), release func([]T)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		get := func(page int) ([]T, error) { return fetch(ctx, page) }
		if n > 1 {
			ra := startReadAhead(ctx, first, size, n, fetch)
			defer ra.stop()
			get = ra.page
		}
		walkPages(command, first, size, key, get, release, yield)
	}
}

// walkPages yields the records of pages first, first+1, … as get returns them (see pages),
// and hands each page whose records were all yielded to release, when not nil.
func walkPages[T any, K comparable](command string, first, size int, key func(T) K, get func(page int) ([]T, error),
	release func([]T), yield func(T, error) bool) {
	var zero T
	var prev, keys []K // the keys of the previous page and of this one, their arrays swapped
	for page := first; ; page++ {
		records, err := get(page)
		if err != nil {
			yield(zero, err)
			return
		}
		if len(records) == 0 {
			return
		}
		keys = keys[:0]
		for _, r := range records {
			keys = append(keys, key(r))
		}
		if page != first && sameKeys(keys, prev) {
			yield(zero, fmt.Errorf("sendloop: %s: page %d: %w", command, page, errPageRepeated))
			return
		}
		for _, r := range records {
			if !yield(r, nil) {
				return
			}
		}
		if len(records) < size {
			return
		}
		if release != nil {
			release(records)
		}
		prev, keys = keys, prev
	}
}

// readAhead asks for up to n pages at once, on n goroutines that live as long as the walk
// (not one a page: each new goroutine would grow its stack again to decode a page), and
// hands them back in order. At most n pages are held at a time, the one being read
// included. The first page is asked for alone: a new or small list ends there, and costs
// no call past its end; after it the walk widens to n. Once a page is known to end the walk
// (short, empty or failed) no page after it is asked for, so a walk asks for at most n-1
// pages past its end. stop cancels the pages
// still in flight and drops them, their errors included.
type readAhead[T any] struct {
	cancel   context.CancelFunc
	size, n  int
	requests chan pageRequest[T]
	first    int                  // the walk's first page, asked for alone
	ahead    []chan pageAnswer[T] // the pages asked for, in order
	next     int                  // the next page to ask for
	end      atomic.Int64         // the first page known to end the walk; MaxInt64 while none is
	workers  sync.WaitGroup
}

type pageRequest[T any] struct {
	page   int
	answer chan<- pageAnswer[T]
}

type pageAnswer[T any] struct {
	records []T
	err     error
}

func startReadAhead[T any](ctx context.Context, first, size, n int, fetch func(context.Context, int) ([]T, error)) *readAhead[T] {
	ctx, cancel := context.WithCancel(ctx)
	ra := &readAhead[T]{cancel: cancel, size: size, n: n, first: first, next: first, requests: make(chan pageRequest[T], n)}
	ra.end.Store(math.MaxInt64)
	ra.workers.Add(n)
	for range n {
		go func() {
			defer ra.workers.Done()
			for r := range ra.requests {
				records, err := fetch(ctx, r.page)
				if err != nil || len(records) < size {
					ra.ends(r.page)
				}
				r.answer <- pageAnswer[T]{records, err} // buffered: never blocks
			}
		}()
	}
	return ra
}

// ends records that page ends the walk, if no earlier page is known to.
func (ra *readAhead[T]) ends(page int) {
	for {
		cur := ra.end.Load()
		if int64(page) >= cur || ra.end.CompareAndSwap(cur, int64(page)) {
			return
		}
	}
}

// page returns the next page in order (page is its number), having asked for the pages
// after it that may be needed.
func (ra *readAhead[T]) page(page int) ([]T, error) {
	window := ra.n
	if page == ra.first {
		window = 1
	}
	for len(ra.ahead) < window && int64(ra.next) <= ra.end.Load() {
		answer := make(chan pageAnswer[T], 1)
		ra.requests <- pageRequest[T]{ra.next, answer} // never blocks: at most n are asked for
		ra.ahead = append(ra.ahead, answer)
		ra.next++
	}
	if len(ra.ahead) == 0 {
		// Not reached: the walk stops at the page that ends it.
		return nil, fmt.Errorf("sendloop: page %d asked for past the end of the walk", page)
	}
	a := <-ra.ahead[0]
	ra.ahead[0] = nil
	ra.ahead = ra.ahead[1:]
	return a.records, a.err
}

// stop cancels the pages in flight and waits for the workers to end.
func (ra *readAhead[T]) stop() {
	ra.cancel()
	close(ra.requests)
	ra.workers.Wait()
}

func sameKeys[K comparable](a, b []K) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
