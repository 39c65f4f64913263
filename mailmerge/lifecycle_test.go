package mailmerge_test

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestNewDoesNoIOAndSendLeavesNothingRunning is the lifecycle rule for the send: New makes
// no call and starts no goroutine, with a file or a list's source; Check and Send start
// their reads and connections and every goroutine they start has ended when they return
// (once the relay and the client are closed). Not parallel: it counts the process's
// goroutines.
func TestNewDoesNoIOAndSendLeavesNothingRunning(t *testing.T) {
	srv := sendlooptest.NewServer(t)
	tr := &http.Transport{}
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	fake, err := srv.StartRelay(t)
	require.NoError(t, err)
	listID, err := c.Lists.Create(testContext(t), sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	for _, a := range []string{"ann@example.net", "bob@example.net"} {
		_, err := c.Subscribers.Subscribe(testContext(t), listID, sendloop.SubscriberSubscribeParams{EmailAddress: a, SubscriptionIP: "192.0.2.1"})
		require.NoError(t, err)
	}
	list, err := mailmerge.OpenList(testContext(t), c, listID)
	require.NoError(t, err)
	tests := []struct {
		name string
		src  mailmerge.Source
		opts mailmerge.Options
	}{
		{name: "rows with a list", src: mailmerge.Rows(nil, []mailmerge.Row{{Address: "ann@example.net"}, {Address: "cy@example.net"}}),
			opts: mailmerge.Options{API: c, ListID: listID, NoUnsubscribe: true}},
		{name: "a list's members", src: list, opts: mailmerge.Options{NoUnsubscribe: true}},
	}
	user, password := srv.RelayCredentials()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, calls := testkit.GoroutinesDownTo(runtime.NumGoroutine()), len(srv.Requests())
			mm, err := mailmerge.New(tt.src, &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"}, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, calls, len(srv.Requests()), "New made no call")
			assert.LessOrEqual(t, runtime.NumGoroutine(), before, "New started no goroutine")

			_, err = mm.Check(testContext(t), mailmerge.CheckOptions{})
			require.NoError(t, err)
			relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password}, smtp.WithTLSConfig(fake.ClientTLSConfig()))
			require.NoError(t, err)
			res, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{Journal: t.TempDir() + "/j"})
			require.NoError(t, err)
			assert.Positive(t, res.Tally.Done)
			require.NoError(t, res.Close())
			require.NoError(t, relay.Close())
			tr.CloseIdleConnections()
			assert.LessOrEqual(t, testkit.GoroutinesDownTo(before), before, "every goroutine Check and Send started has ended")
		})
	}
}
