package transport

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// undeclared is a response of body without a Content-Length, as a chunked one arrives.
func undeclared(body []byte) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: io.NopCloser(bytes.NewReader(body))}
}

// TestReadBodyOfUndeclaredLength reads bodies of every size class through the pooled
// buffer, one after the other and at once: each comes back whole and stays as it was while
// the next ones are read into the same buffers.
func TestReadBodyOfUndeclaredLength(t *testing.T) {
	t.Parallel()
	sizes := []int{0, 1, 511, 512, 30_000, maxPooledBody, maxPooledBody + 1, 3 << 20}
	for _, size := range sizes {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			t.Parallel()
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var kept [][]byte
					var want [][]byte
					for i := range 5 {
						body := bytes.Repeat([]byte{byte('a' + g*5 + i)}, size)
						got, err := readBody(undeclared(body), MaxBodySize)
						if err != nil {
							t.Errorf("readBody of %d bytes: %v", size, err)
							return
						}
						if got == nil {
							t.Errorf("readBody of %d bytes = nil, want a slice", size)
						}
						kept, want = append(kept, got), append(want, body)
					}
					for i := range kept {
						if !bytes.Equal(kept[i], want[i]) {
							t.Errorf("body %d of %d bytes changed after the next reads", i, size)
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkReadBody reads a 30 KB body of undeclared length (a page of subscriber.browse
// from a server that sends it chunked) through readBody, against io.ReadAll (the baseline).
func BenchmarkReadBody(b *testing.B) {
	body := bytes.Repeat([]byte(`{"SubscriberID":"1","EmailAddress":"user@example.com"},`), 30_000/55)
	b.Run("pooled", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for range b.N {
			if got, err := readBody(undeclared(body), MaxBodySize); err != nil || len(got) != len(body) {
				b.Fatal(err)
			}
		}
	})
	b.Run("readall", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for range b.N {
			if got, err := io.ReadAll(io.LimitReader(undeclared(body).Body, MaxBodySize+1)); err != nil || len(got) != len(body) {
				b.Fatal(err)
			}
		}
	})
}
