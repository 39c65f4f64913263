package transport

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// bodyBuffers hold the bytes of a response whose length is not declared (a chunked one)
// while it is read: read straight into a slice, a 30 KB page would be copied a dozen times
// as the slice grows, every page of a million-member list. The body is then copied out at
// its size, so nothing of the buffer outlives the read.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer kept for the next body: a rare huge answer does not
// stay in memory.
const maxPooledBody = 1 << 20

// readBody reads resp's body whole, refusing one over limit bytes.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, bodyTooLargeError{limit}
	}
	// A declared length is trusted for the allocation only up to bodyPrealloc: a server may
	// promise 64 MiB and send ten bytes, and the memory should follow the bytes.
	if n := resp.ContentLength; n >= 0 && n <= bodyPrealloc {
		buf := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, fmt.Errorf("reading response body: %w", err)
		}
		return buf, nil
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
		return nil, fmt.Errorf("reading response body: %w", err)
	}
	if int64(buf.Len()) > limit {
		return nil, bodyTooLargeError{limit}
	}
	data := make([]byte, buf.Len())
	copy(data, buf.Bytes())
	return data, nil
}
