package sendlooptest_test

import (
	"context"
	"fmt"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// ExampleNewServer starts the fake, points a client at it, makes it fail once, and reads
// what it recorded. In a test, pass t: the server is closed when the test ends.
func ExampleNewServer() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: 1, MaxWait: 1}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 503}) // answered once, then served
	info, err := client.Account.Get(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Username)
	fmt.Println("requests:", len(srv.Requests()), "executions:", srv.Executions("account.info.get"))
	fmt.Println("path:", srv.LastRequest().Path)
	// Output:
	// demo
	// requests: 2 executions: 1
	// path: /api/v3/account.info.get/json
}
