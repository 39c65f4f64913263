package mailmerge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var people = mailmerge.Rows([]string{"email", "FIRST", "CITY"}, []mailmerge.Row{
	{Line: 2, Address: "ann@example.net", Values: map[string]string{"email": "ann@example.net", "FIRST": "Ann", "CITY": "Oslo"}},
})

func TestCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		msg   smtp.Message
		opts  mailmerge.Options
		want  []string // the problems, as sentences
		notes []string
	}{
		{name: "typo in the subject", msg: smtp.Message{Subject: "Hi {{FRIST}}", Text: "x"},
			want: []string{"{{FRIST}} (subject): no column or variable of that name; did you mean FIRST?"}},
		{name: "merge tag naming nothing", msg: smtp.Message{Subject: "s", Text: "Hi,\nYour code: %CODE%\n"},
			want: []string{"%CODE% (text line 2): no column or variable of that name"}},
		{name: "a variable names it", msg: smtp.Message{Subject: "s", Text: "Your code: %CODE% {{CODE}}"},
			opts: mailmerge.Options{NoUnsubscribe: true, Vars: map[string]string{"CODE": "X1"}}},
		{name: "allowed", msg: smtp.Message{Subject: "s %KEEP%", Text: "{{KEEP}}"},
			opts: mailmerge.Options{NoUnsubscribe: true, AllowTags: []string{"KEEP"}}},
		{name: "links and percentages pass", msg: smtp.Message{Subject: "50% off for {{FIRST}}, 100% sure",
			Text: "See https://example.com/?utm_source=news&x=%E2%80%99%ABC%20y today",
			HTML: `<a href="https://example.com/?utm_campaign=%SPRING%&q=%20a">50% off</a> <img src='https://x/%LOGO%.png'>`},
			notes: []string{
				"%E2% (text line 1): not a tag, it stands inside a URL",
				"%80% (text line 1): not a tag, it stands inside a URL",
				"%99% (text line 1): not a tag, it stands inside a URL",
				"%ABC% (text line 1): not a tag, it stands inside a URL",
				"%SPRING% (HTML line 1): not a tag, it stands inside a URL",
				"%LOGO% (HTML line 1): not a tag, it stands inside a URL",
			}},
		{name: "a word between percent signs outside a URL", msg: smtp.Message{Subject: "20%OFF% today", Text: "x"},
			want: []string{"%OFF% (subject): no column or variable of that name"}},
		{name: "percent-encodings outside URLs are notes", msg: smtp.Message{Subject: "%C3%A9 %2Fa%", Text: "x"},
			notes: []string{"%2Fa%"}},
		{name: "sections name columns", msg: smtp.Message{Subject: "s", HTML: "<p>\n{{#CITY}}in {{CITY}}{{/CITY}}\n{{^VIP}}x{{/VIP}}</p>"},
			want: []string{"{{^VIP}} (HTML line 3): no column or variable of that name"}},
		{name: "unparseable", msg: smtp.Message{Subject: "s", HTML: "<p>\n{{#CITY}}in {{CITY}}\n</p>"},
			want: []string{"HTML line 2 does not parse: unclosed section \"CITY\" (column 1)"}},
		{name: "bad delimiter", msg: smtp.Message{Subject: "{{=<%=}}", Text: "x"},
			want: []string{`subject does not parse: bad delimiter change "<%": want two delimiters without '=' separated by space, as in {{=<% %>=}} (column 1)`}},
		{name: "headers and list-unsubscribe", msg: smtp.Message{Subject: "s", Text: "x",
			ExtraHeaders:    []smtp.Field{{Name: "X-Campaign", Value: "c-{{FIRTS}}"}, {Name: "X-S", Value: "{{#CITY}}x{{/CITY}}"}},
			ListUnsubscribe: []string{"https://example.com/u?e={{email}}&%AB%", "mailto:u@example.com?subject={{EMAIL}}"}},
			want: []string{
				"{{FIRTS}} (header X-Campaign): no column or variable of that name; did you mean FIRST?",
				"{{#CITY}} (header X-S): a section, rendered only in the subject and bodies",
				"{{EMAIL}} (List-Unsubscribe): no column or variable of that name; did you mean email?",
			}},
		{name: "partial", msg: smtp.Message{Subject: "s", Text: "{{>footer}}"},
			want: []string{"{{>footer}} (text line 1): a partial, which a send has none of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.msg.From = "news@example.com"
			job, err := mailmerge.New(people, &c.msg, c.opts)
			if len(c.want) == 0 {
				require.NoError(t, err)
				var notes []string
				for _, n := range job.Notes() {
					notes = append(notes, n.String())
				}
				if strings.Contains(c.name, "percent-encodings") {
					require.Len(t, job.Notes(), 2)
					assert.Equal(t, "%C3% (subject): not a tag, a percent-encoded byte", job.Notes()[0].String())
					assert.Equal(t, "%2Fa%", job.Notes()[1].Text)
					assert.Equal(t, "its name starts with a digit", job.Notes()[1].Why)
					return
				}
				assert.Equal(t, c.notes, notes)
				return
			}
			var cerr *mailmerge.CheckError
			require.ErrorAs(t, err, &cerr)
			assert.True(t, errors.Is(err, mailmerge.ErrCheck))
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.String())
			}
			assert.Equal(t, c.want, got)
			assert.Equal(t, []string{"CITY", "FIRST", "email"}, cerr.Names[:3])
			assert.Contains(t, err.Error(), "the columns and variables: CITY, FIRST, email")
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		msg  smtp.Message
		opts mailmerge.Options
		want string
	}{
		{"recipients", smtp.Message{To: []string{"a@example.com"}}, mailmerge.Options{NoUnsubscribe: true}, "recipients"},
		{"message id", smtp.Message{MessageID: "a@b"}, mailmerge.Options{NoUnsubscribe: true}, "Message-ID"},
		{"bad variable", smtp.Message{}, mailmerge.Options{NoUnsubscribe: true, Vars: map[string]string{"a b": ""}}, `variable "a b"`},
		{"default of nothing", smtp.Message{}, mailmerge.Options{NoUnsubscribe: true, Defaults: map[string]string{"NOPE": ""}}, `default for "NOPE"`},
		{"shard", smtp.Message{}, mailmerge.Options{NoUnsubscribe: true, Shard: mailmerge.ShardSpec{Index: 2, Count: 2}}, "shard index 2 of 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := mailmerge.New(people, &c.msg, c.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestEmptyTags(t *testing.T) {
	t.Parallel()
	job, err := mailmerge.New(people, &smtp.Message{Subject: "Hi {{FIRST}}", Text: "{{#CITY}}{{CITY}}{{/CITY}} %FIRST% {{X}}",
		ExtraHeaders: []smtp.Field{{Name: "X-C", Value: "{{CITY}}"}}},
		mailmerge.Options{NoUnsubscribe: true, Vars: map[string]string{"X": ""}, AllowEmpty: []string{"CITY"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"{{FIRST}} (subject)"}, job.EmptyTags())

	job, err = mailmerge.New(people, &smtp.Message{Subject: "Hi {{FIRST}}"}, mailmerge.Options{NoUnsubscribe: true, AllowTags: []string{"FIRST"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"{{FIRST}} (subject)"}, job.EmptyTags(), "allowing a tag that names a column changes nothing")
}
