package sendloop_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// tracingTransport is a tracing RoundTripper: it sees every attempt, retries included.
type tracingTransport struct {
	attempts atomic.Int64
	next     http.RoundTripper
}

func (t *tracingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.attempts.Add(1) // a real one would start a span here, or log r.Method and r.URL.Path
	return t.next.RoundTrip(r)
}

// ExampleWithHTTPClient_tracing traces the client's requests with a wrapping RoundTripper
// (the place for OpenTelemetry's otelhttp.NewTransport) and with net/http/httptrace through
// the context.
func ExampleWithHTTPClient_tracing() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	tracer := &tracingTransport{next: http.DefaultTransport}
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: tracer}))
	if err != nil {
		fmt.Println(err)
		return
	}
	var connections atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connections.Add(1) },
	})
	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 503}) // one retry
	if _, err := client.Account.Get(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("attempts:", tracer.attempts.Load(), "connections taken:", connections.Load())
	// Output: attempts: 2 connections taken: 2
}
