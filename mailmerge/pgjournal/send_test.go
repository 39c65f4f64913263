package pgjournal_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const relayUser, relayPassword = "relay-user", "relay-password-7f3k"

// testAPI is a client of a fake with nothing suppressed: a bulk send reads the suppression
// list through the API.
func testAPI(t *testing.T) *sendloop.Client {
	t.Helper()
	srv := sendlooptest.NewServer(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	return c
}

func relay(t *testing.T) (*sendlooptest.Relay, func() *smtp.Relay) {
	t.Helper()
	fake, err := sendlooptest.StartRelay(t, relayUser, relayPassword)
	require.NoError(t, err)
	return fake, func() *smtp.Relay {
		c, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: relayUser, Password: relayPassword},
			smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithDialTimeout(5*time.Second), smtp.WithMaxConnections(4))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
}

var template = smtp.Message{From: "news@example.com", Subject: "News", Text: "Hello"}

// newsletter is the job of rows recipients, of one message each.
func newsletter(t *testing.T, rows int) *mailmerge.Job {
	t.Helper()
	rs := make([]mailmerge.Row, rows)
	for i := range rs {
		rs[i] = mailmerge.Row{Address: fmt.Sprintf("r%04d@example.net", i)}
	}
	j, err := mailmerge.New(mailmerge.Rows(nil, rs), &template, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	return j
}

// TestTwoRunsAtOnceSendEveryKeyOnce: two runs started at the same moment on one database
// journal (two runners of a matrix, or an accidental second run) deliver every key once,
// none twice; each reports the other's keys as skipped.
func TestTwoRunsAtOnceSendEveryKeyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pool(t)
	fake, client := relay(t)
	const rows = 300
	var wg sync.WaitGroup
	results := make([]map[job.Fate]int, 2)
	for r := range results {
		results[r] = map[job.Fate]int{}
		send := newsletter(t, rows)
		j, err := pgjournal.Open(ctx, db, "newsletter", send.Binding(), pgjournal.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		c := client()
		var mu sync.Mutex
		wg.Go(func() {
			res, err := send.Send(ctx, c, mailmerge.SendOptions{Journal: "newsletter", JournalStore: j, OnRow: func(row mailmerge.RowResult) {
				mu.Lock()
				defer mu.Unlock()
				results[r][row.Fate]++
				if row.Fate == job.Skipped {
					assert.Contains(t, []mailmerge.SkipReason{mailmerge.SkipAlreadySent, mailmerge.SkipUnknown}, row.Skip)
				}
			}, MaxUnknown: job.Unlimited()})
			if assert.NoError(t, err) {
				_ = res.Close()
			}
		})
	}
	wg.Wait()
	delivered := map[string]int{}
	for _, m := range fake.Messages() {
		for _, to := range m.EnvelopeTo {
			delivered[to]++
		}
	}
	assert.Len(t, delivered, rows, "every key delivered")
	for to, n := range delivered {
		assert.Equal(t, 1, n, "%s delivered %d times", to, n)
	}
	assert.Equal(t, rows, results[0][job.Done]+results[1][job.Done], "%v", results)
	assert.Equal(t, rows, results[0][job.Done]+results[0][job.Skipped], "%v", results[0])
}
