package sendloop

import (
	"errors"
	"fmt"
	"iter"
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
	return func(yield func(T, error) bool) {
		var zero T
		var prev []K
		for page := first; ; page++ {
			records, err := fetch(page)
			if err != nil {
				yield(zero, err)
				return
			}
			if len(records) == 0 {
				return
			}
			keys := make([]K, len(records))
			for i, r := range records {
				keys[i] = key(r)
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
			prev = keys
		}
	}
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
