package listsync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// newFake starts an empty fake.
func newFake(t testing.TB) *sendlooptest.Server {
	t.Helper()
	return sendlooptest.NewServer(t)
}

func apiClient(t testing.TB, srv *sendlooptest.Server) *sendloop.Client {
	t.Helper()
	// Waits between attempts of milliseconds: the tests that inject faults wait on their
	// retries, and what is tested is which calls are retried, not how long the waits are.
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: time.Millisecond, MaxWait: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testContext returns a context ended when the test ends, or after a minute.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// emailN returns a distinct address for each n.
func emailN(n int) string { return fmt.Sprintf("user%06d@example.com", n) }

// addMemberFields is addMember with the member's custom fields by ID, as the service keeps
// them: the planner takes the mapped ones.
func addMemberFields(p *planner, id int, email, status string, fields map[int]string) error {
	values := make([]string, len(p.mapping.Fields))
	for i, f := range p.mapping.Fields {
		values[i] = fields[f.Field.ID]
	}
	return p.addMember(id, email, status, values)
}
