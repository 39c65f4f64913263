package listsync

import (
	"context"
	"fmt"
	"iter"

	"github.com/go-sendloop/sendloop"
)

// browseMembers yields the members of a list, page by page in order, with up to n pages
// asked for at once (subscriber.browse pages by index, so the next pages are known before
// this one arrives): Options.ReadAhead. It yields an error once and stops; it stops after a
// short page.
func browseMembers(ctx context.Context, c *sendloop.Client, listID, n int) iter.Seq2[sendloop.Subscriber, error] {
	n = max(1, n)
	type page struct {
		subs []sendloop.Subscriber
		err  error
	}
	type request struct {
		index  int
		answer chan<- page
	}
	return func(yield func(sendloop.Subscriber, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// n workers for the whole walk, not a goroutine a page: a million members are
		// 10,000 pages, and each new goroutine grew its stack again to decode one.
		requests := make(chan request, n)
		defer close(requests)
		for range n {
			go func() {
				for r := range requests {
					subs, err := c.Subscribers.Browse(ctx, listID, sendloop.SubscriberBrowseParams{StartIndex: r.index})
					r.answer <- page{subs, err}
				}
			}()
		}
		fetch := func(i int) chan page {
			ch := make(chan page, 1)
			requests <- request{i, ch} // never blocks: at most n pages are asked for at once
			return ch
		}
		var ahead []chan page
		next, prevFirst, prevLast := 0, 0, 0
		for index := 0; ; index++ {
			for len(ahead) < n {
				ahead = append(ahead, fetch(next))
				next++
			}
			p := <-ahead[0]
			ahead = ahead[1:]
			if p.err != nil {
				yield(sendloop.Subscriber{}, p.err)
				return
			}
			// A service that ignored StartIndex would send the first page for ever.
			if len(p.subs) > 0 {
				first, last := p.subs[0].SubscriberID, p.subs[len(p.subs)-1].SubscriberID
				if index > 0 && first == prevFirst && last == prevLast {
					yield(sendloop.Subscriber{}, fmt.Errorf("subscriber.browse answered page %d as page %d: the list cannot be read", index, index-1))
					return
				}
				prevFirst, prevLast = first, last
			}
			for _, s := range p.subs {
				if !yield(s, nil) {
					return
				}
			}
			if len(p.subs) < sendloop.BrowsePageSize {
				return
			}
		}
	}
}
