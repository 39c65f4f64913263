package otel

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCacheBuildsOnceAndStaysBounded: a key's value is built once however many goroutines
// ask for it at once, and keys past maxCached are built each time without growing the map.
func TestCacheBuildsOnceAndStaysBounded(t *testing.T) {
	t.Parallel()
	var c cache[string, *int]
	var builds sync.Map
	build := func(k string) func() *int {
		return func() *int {
			n, _ := builds.LoadOrStore(k, new(int))
			*n.(*int)++ // under the cache's lock
			v := len(k)
			return &v
		}
	}
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Go(func() { got[i] = c.get("account.info.get", build("account.info.get")) })
	}
	wg.Wait()
	for _, v := range got {
		assert.Same(t, got[0], v, "every caller gets the one value")
	}
	n, _ := builds.Load("account.info.get")
	assert.Equal(t, 1, *n.(*int))

	for i := range maxCached + 10 {
		k := "host-" + strconv.Itoa(i)
		assert.Equal(t, len(k), *c.get(k, build(k)))
	}
	assert.Len(t, *c.m.Load(), maxCached)
	again := c.get("host-"+strconv.Itoa(maxCached+5), build("past"))
	assert.NotNil(t, again, "a key past the bound is still built")
	count := 0
	c.each(func(string, *int) { count++ })
	assert.Equal(t, maxCached, count)
}

// TestUnboundedCacheKeepsEveryKey: a cache of counts keeps every key past maxCached, so
// that no count is lost.
func TestUnboundedCacheKeepsEveryKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		unbounded bool
		want      int
	}{
		{name: "bounded", want: maxCached},
		{name: "unbounded", unbounded: true, want: maxCached + 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cache[string, *int]{unbounded: tt.unbounded}
			for i := range maxCached + 10 {
				first := c.get(strconv.Itoa(i), func() *int { return new(int) })
				assert.Equal(t, tt.unbounded || i < maxCached, first == c.get(strconv.Itoa(i), func() *int { return new(int) }),
					"key %d: the same value on a second get", i)
			}
			assert.Len(t, *c.m.Load(), tt.want)
		})
	}
}
