package pgjournal_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const relayUser, relayPassword = "relay-user", "relay-password-7f3k"

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

func messages(n int) iter.Seq2[string, *smtp.Message] {
	return func(yield func(string, *smtp.Message) bool) {
		for i := range n {
			m := template
			m.To = []string{fmt.Sprintf("r%04d@example.net", i)}
			if !yield(m.To[0], &m) {
				return
			}
		}
	}
}

// TestTwoRunsAtOnceSendEveryKeyOnce: two runs started at the same moment on one database
// journal (two runners of a matrix, or an accidental second run) deliver every key once,
// none twice; each reports the other's keys as skipped.
func TestTwoRunsAtOnceSendEveryKeyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pool(t)
	fake, client := relay(t)
	b := smtp.JournalBinding{Fingerprint: smtp.TemplateFingerprint(&template)}
	const rows = 300
	var wg sync.WaitGroup
	results := make([]map[smtp.KeyState]int, 2)
	for r := range results {
		results[r] = map[smtp.KeyState]int{}
		j, err := pgjournal.Open(ctx, db, "newsletter", b, pgjournal.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		c := client()
		wg.Go(func() {
			seq, err := c.SendKeyed(ctx, messages(rows), smtp.SendKeyedOptions{Journal: j})
			if !assert.NoError(t, err) {
				return
			}
			for res := range seq {
				results[r][res.State]++
				if res.State == smtp.KeySkipped {
					assert.Contains(t, []smtp.SkipReason{smtp.SkipAlreadySent, smtp.SkipUnknown}, res.Skip)
				}
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
	assert.Equal(t, rows, results[0][smtp.KeySent]+results[1][smtp.KeySent], "%v", results)
	assert.Equal(t, rows, results[0][smtp.KeySent]+results[0][smtp.KeySkipped], "%v", results[0])
}
