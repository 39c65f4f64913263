package mailmerge_test

import (
	"context"
	"testing"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckEscaping(t *testing.T) {
	t.Parallel()
	firms := mailmerge.Rows([]string{"email", "FIRST"}, []mailmerge.Row{
		{Line: 2, Address: "a@example.net", Values: map[string]string{"email": "a@example.net", "FIRST": "Ann"}},
		{Line: 3, Address: "b@example.net", Values: map[string]string{"email": "b@example.net", "FIRST": "O'Brien & Sons"}},
		{Line: 4, Address: "c@example.net", Values: map[string]string{"email": "c@example.net", "FIRST": "<Cy>"}},
	})
	cases := []struct {
		name string
		msg  smtp.Message
		opts mailmerge.Options
		want []string // the problems, as sentences; none passes
	}{
		{name: "subject", msg: smtp.Message{Subject: "Hi {{FIRST}}", HTML: "<p>{{FIRST}}</p>"},
			want: []string{`{{FIRST}} (subject) would be HTML-escaped in 2 rows (first on line 3: "O'Brien & Sons"), for the subject is not HTML: write {{{FIRST}}} or %FIRST% to insert the value as it is`}},
		{name: "text part", msg: smtp.Message{Subject: "s", Text: "Dear\n{{FIRST}}"},
			want: []string{`{{FIRST}} (text line 2) would be HTML-escaped in 2 rows (first on line 3: "O'Brien & Sons"), for the text part is not HTML: write {{{FIRST}}} or %FIRST% to insert the value as it is`}},
		{name: "triple mustache passes", msg: smtp.Message{Subject: "Hi {{{FIRST}}}", Text: "{{& FIRST}} %FIRST%"}},
		{name: "HTML wants the escaping", msg: smtp.Message{Subject: "s", HTML: "<p>{{FIRST}}</p>"}},
		{name: "kept escaping", msg: smtp.Message{Subject: "Hi {{FIRST}}", Text: "x"},
			opts: mailmerge.Options{NoUnsubscribe: true, KeepEscaping: []string{"FIRST"}}},
		{name: "values that escape to themselves", msg: smtp.Message{Subject: "Hi {{email}}", Text: "x"}},
		{name: "a variable", msg: smtp.Message{Subject: "{{CO}}", Text: "x"},
			opts: mailmerge.Options{NoUnsubscribe: true, Vars: map[string]string{"CO": "A&B"}},
			want: []string{`{{CO}} (subject) would be HTML-escaped in 3 rows (first on line 2: "A&B"), for the subject is not HTML: write {{{CO}}} or %CO% to insert the value as it is`}},
		{name: "URL-encoded in List-Unsubscribe", msg: smtp.Message{Subject: "s", Text: "x",
			ListUnsubscribe: []string{"https://example.com/u?n={{FIRST}}"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			job, err := mailmerge.New(firms, &tc.msg, tc.opts)
			require.NoError(t, err)
			err = job.CheckEscaping(context.Background())
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, mailmerge.ErrEscape)
			var ee *mailmerge.EscapeError
			require.ErrorAs(t, err, &ee)
			var got []string
			for _, p := range ee.Problems {
				got = append(got, p.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestSendRefusesEscapingBeforeAnyMessage: Send checks before the relay is used, so a nil
// relay is never touched.
func TestSendRefusesEscapingBeforeAnyMessage(t *testing.T) {
	t.Parallel()
	src := mailmerge.Rows([]string{"email", "FIRST"}, []mailmerge.Row{
		{Line: 2, Address: "b@example.net", Values: map[string]string{"email": "b@example.net", "FIRST": "O'Brien & Sons"}},
	})
	job, err := mailmerge.New(src, &smtp.Message{From: "f@example.com", Subject: "Hi {{FIRST}}", Text: "x"}, mailmerge.Options{NoUnsubscribe: true})
	require.NoError(t, err)
	res, err := job.Send(context.Background(), nil, mailmerge.SendOptions{})
	assert.Nil(t, res)
	assert.ErrorIs(t, err, mailmerge.ErrEscape)
}

func TestCheckUnsubscribe(t *testing.T) {
	t.Parallel()
	two := mailmerge.Rows([]string{"email"}, []mailmerge.Row{
		{Line: 2, Address: "a@example.net", Values: map[string]string{"email": "a@example.net"}},
		{Line: 3, Address: "b@example.net", Values: map[string]string{"email": "b@example.net"}},
	})
	one := mailmerge.Rows([]string{"email"}, []mailmerge.Row{
		{Line: 2, Address: "a@example.net", Values: map[string]string{"email": "a@example.net"}},
	})
	cases := []struct {
		name    string
		src     mailmerge.Source
		msg     smtp.Message
		opts    mailmerge.Options
		missing []string
	}{
		{name: "neither", src: two, msg: smtp.Message{Subject: "s", Text: "x"},
			missing: []string{mailmerge.MissingUnsubscribeURL, mailmerge.MissingOneClick}},
		{name: "no tag", src: two, msg: smtp.Message{Subject: "s", Text: "x", ListUnsubscribe: []string{"https://example.com/u"}, ListUnsubscribeOneClick: true},
			missing: []string{mailmerge.MissingUnsubscribeURL}},
		{name: "mailto only", src: two, msg: smtp.Message{Subject: "s", Text: "x", ListUnsubscribe: []string{"mailto:u@example.com?subject={{email}}"}, ListUnsubscribeOneClick: true},
			missing: []string{mailmerge.MissingUnsubscribeURL}},
		{name: "both", src: two, msg: smtp.Message{Subject: "s", Text: "x", ListUnsubscribe: []string{"https://example.com/u?e={{email}}"}, ListUnsubscribeOneClick: true}},
		{name: "one row", src: one, msg: smtp.Message{Subject: "s", Text: "x"}},
		{name: "transactional", src: two, msg: smtp.Message{Subject: "s", Text: "x"}, opts: mailmerge.Options{NoUnsubscribe: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			job, err := mailmerge.New(tc.src, &tc.msg, tc.opts)
			require.NoError(t, err)
			err = job.CheckUnsubscribe(context.Background())
			if tc.missing == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, mailmerge.ErrUnsubscribe)
			var ue *mailmerge.UnsubscribeError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, tc.missing, ue.Missing)
		})
	}
}

// TestPreviewRejectsABadUnsubscribeURL: a row whose rendered https URL has no host is
// rejected, as Send would reject it, and the other row passes.
func TestPreviewRejectsABadUnsubscribeURL(t *testing.T) {
	t.Parallel()
	src := mailmerge.Rows([]string{"email", "HOST"}, []mailmerge.Row{
		{Line: 2, Address: "a@example.net", Values: map[string]string{"email": "a@example.net", "HOST": "example.com"}},
		{Line: 3, Address: "b@example.net", Values: map[string]string{"email": "b@example.net", "HOST": ""}},
	})
	job, err := mailmerge.New(src, &smtp.Message{From: "f@example.com", Subject: "s", Text: "x",
		ListUnsubscribe: []string{"https://{{{HOST}}}/u?e={{email}}"}, ListUnsubscribeOneClick: true},
		mailmerge.Options{API: testAPI(t), AllowEmpty: []string{"HOST"}})
	require.NoError(t, err)
	check, err := job.Check(context.Background(), mailmerge.CheckOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, check.Rejected, "%+v", check)
}
