package mailmerge_test

import (
	"bytes"
	"context"
	"io"
	"iter"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func listFile(t *testing.T, n int) (string, mailmerge.Source) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("email,FIRST\nnot-an-address,X\n")
	for i := range n {
		b.WriteString("user" + string(rune('a'+i)) + "@example.net,U" + string(rune('a'+i)) + "\n")
	}
	path := filepath.Join(dir, "list.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	src, err := mailmerge.File(path, mailmerge.FileOptions{})
	require.NoError(t, err)
	return dir, src
}

var newsTemplate = smtp.Message{From: "news@example.com", Subject: "Hi {{FIRST}}", Text: "Dear %FIRST%,\nnews.",
	HTML: "<p>Dear {{FIRST}}</p>", ListUnsubscribe: []string{"https://example.com/u?e={{email}}"}}

func TestWritePreview(t *testing.T) {
	t.Parallel()
	dir, src := listFile(t, 8)
	tmpl := newsTemplate
	tmpl.Headers.TrackOpens = true
	job, err := mailmerge.New(src, &tmpl, mailmerge.Options{NoUnsubscribe: true})
	require.NoError(t, err)
	out := filepath.Join(dir, "preview")
	paths, err := job.WritePreview(testContext(t), out, 5)
	require.NoError(t, err)
	require.Len(t, paths, 5)
	assert.Equal(t, filepath.Join(out, "3.eml"), paths[0], "named by line: line 2 holds no address")
	for i, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		m, err := mail.ReadMessage(bytes.NewReader(b))
		require.NoError(t, err)
		first := "U" + string(rune('a'+i))
		assert.Equal(t, "Hi "+first, m.Header.Get("Subject"))
		assert.Equal(t, "<https://example.com/u?e=user"+string(rune('a'+i))+"%40example.net>", m.Header.Get("List-Unsubscribe"))
		assert.NotEmpty(t, m.Header.Get(smtp.HeaderTrackOpens), "the X-SL-* headers as sent")
		body, err := io.ReadAll(m.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), "Dear "+first+",")
	}
	_, err = os.Stat(filepath.Join(dir, "journal"))
	assert.True(t, os.IsNotExist(err))

	msgs, err := job.Preview(testContext(t), 100)
	require.NoError(t, err)
	assert.Len(t, msgs, 8)
	mem, err := mailmerge.New(mailmerge.Rows([]string{"FIRST", "email"}, []mailmerge.Row{{Address: "a@example.net",
		Values: map[string]string{"FIRST": "A", "email": "a@example.net"}}}), &tmpl, mailmerge.Options{NoUnsubscribe: true})
	require.NoError(t, err)
	msgs, err = mem.Preview(testContext(t), 1)
	require.NoError(t, err)
	assert.Equal(t, "1.eml", msgs[0].Name(), "a source without lines: the index")
}

func TestTestSend(t *testing.T) {
	t.Parallel()
	_, src := listFile(t, 6)
	tmpl := newsTemplate
	tmpl.Headers.TrackOpens, tmpl.Headers.TrackClicks = true, true
	tmpl.ListUnsubscribeOneClick = true
	job, err := mailmerge.New(src, &tmpl, mailmerge.Options{NoUnsubscribe: true})
	require.NoError(t, err)
	for _, asIs := range []bool{false, true} {
		fake, relay := startRelay(t)
		sent, err := job.TestSend(testContext(t), relay, mailmerge.TestOptions{To: "qa@example.org", Rows: 4, AsIs: asIs})
		require.NoError(t, err)
		require.Len(t, sent, 4)
		assert.Equal(t, "usera@example.net", sent[0].Address)
		msgs := fake.Messages()
		require.Len(t, msgs, 4)
		for _, m := range msgs {
			assert.Equal(t, []string{"qa@example.org"}, m.EnvelopeTo)
			assert.Equal(t, "<mailto:qa@example.org>", m.Header.Get("List-Unsubscribe"), "no row's unsubscribe link")
			assert.Empty(t, m.Header.Get("List-Unsubscribe-Post"))
			if asIs {
				assert.True(t, strings.HasPrefix(m.RenderedSubject, "Hi U"), m.RenderedSubject)
				assert.True(t, m.SLHeaders.TrackOpens)
			} else {
				assert.True(t, strings.HasPrefix(m.RenderedSubject, "[test] Hi U"), m.RenderedSubject)
				assert.False(t, m.SLHeaders.TrackOpens || m.SLHeaders.TrackClicks)
			}
		}
	}
	_, relay := startRelay(t)
	_, err = job.TestSend(testContext(t), relay, mailmerge.TestOptions{To: "qa@example.org", Rows: 21})
	require.Error(t, err)
}

func TestContinueFrom(t *testing.T) {
	t.Parallel()
	dir, src := listFile(t, 6)
	typo := newsTemplate
	typo.Subject = "Hi {{FIRST}}!!"
	old, next := filepath.Join(dir, "old.journal"), filepath.Join(dir, "new.journal")
	fake, relay := startRelay(t)

	// The typo went to the first three rows before the sender stopped it.
	firstRows := mailmerge.RowFunc(src.Columns(), func(ctx context.Context) iter.Seq2[mailmerge.Row, error] {
		return func(yield func(mailmerge.Row, error) bool) {
			n := 0
			for r, err := range src.Rows(ctx) {
				if n == 4 || !yield(r, err) {
					return
				}
				n++
			}
		}
	})
	partial, err := mailmerge.New(firstRows, &typo, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	res, err := partial.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: old})
	require.NoError(t, err)
	res.Close()
	require.Len(t, fake.Messages(), 3)
	before, err := os.ReadFile(old)
	require.NoError(t, err)

	corrected, err := mailmerge.New(src, &newsTemplate, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	_, err = corrected.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: old})
	var jerr *mailmerge.JournalError
	require.ErrorAs(t, err, &jerr)
	require.True(t, jerr.MessageChanged)

	for run := range 2 { // the second run is a resume of the continuation
		res, err = corrected.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: next, ContinueFrom: old})
		require.NoError(t, err)
		assert.Equal(t, 7, res.Rows)
		assert.Equal(t, 3, res.SkippedContinued, "run %d", run)
		assert.Equal(t, 1, res.Tally.Rejected)
		if run == 0 {
			assert.Equal(t, 3, res.Tally.Done)
		} else {
			assert.Equal(t, 3, res.SkippedSent)
		}
		res.Close()
	}
	msgs := fake.Messages()
	require.Len(t, msgs, 6, "every row exactly once")
	seen := map[string]bool{}
	for _, m := range msgs {
		assert.False(t, seen[m.EnvelopeTo[0]], m.EnvelopeTo[0])
		seen[m.EnvelopeTo[0]] = true
	}
	after, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the journal continued from is only read")

	sharded, err := mailmerge.New(src, &newsTemplate, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true, Shard: mailmerge.ShardSpec{Index: 0, Count: 2}})
	require.NoError(t, err)
	_, err = sharded.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "s.journal"), ContinueFrom: old})
	require.ErrorAs(t, err, &jerr)
	assert.Contains(t, err.Error(), "is bound to no shard, not shard index 0 of 2")
	_, err = corrected.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, ContinueFrom: old})
	require.Error(t, err)
}
