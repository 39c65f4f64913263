package otel_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-sendloop/sendloop"
	sendloopotel "github.com/go-sendloop/sendloop/otel"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// Example traces a call that sendlooptest answers 503 once: one span for the call, with
// sendloop.attempts=2, and a child span per attempt.
func Example() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	obs, err := sendloopotel.New(tp, mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}), sendloop.WithObserver(obs))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: http.StatusServiceUnavailable})
	if _, err := client.Account.Get(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.Ended() {
		var attrs []string
		for _, kv := range s.Attributes() {
			if kv.Key != "server.address" { // the test server's port changes
				attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
			}
		}
		slices.Sort(attrs)
		fmt.Println(s.Name())
		fmt.Println("  " + strings.Join(attrs, "\n  "))
	}
	// Output:
	// sendloop account.info.get attempt
	//   error.type=503
	//   http.request.resend_count=0
	//   http.response.status_code=503
	// sendloop account.info.get attempt
	//   http.request.resend_count=1
	//   http.response.status_code=200
	// sendloop account.info.get
	//   http.request.method=POST
	//   http.response.status_code=200
	//   sendloop.attempts=2
	//   sendloop.command=account.info.get
	//   sendloop.outcome_unknown=false
	//   sendloop.retry_class=read
}
