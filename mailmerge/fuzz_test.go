package mailmerge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// FuzzCheck feeds any subject, body and header to the check: it never panics, a template it
// accepts previews without error, and a template it refuses names a problem.
func FuzzCheck(f *testing.F) {
	for _, seed := range [][3]string{
		{"Hi {{FIRST}}", "Dear %FIRST%, 50% off", "x-{{CITY}}"},
		{"{{FRIST}}", "%CODE% %20 %E2%80%99", "{{#CITY}}{{/CITY}}"},
		{"{{#A}}", "{{=<% %>=}}<% FIRST %> %FIRST%", "%FIRST% {{{CITY}}} {{& FIRST}}"},
		{"", "https://x.example/?a=%AB%CD%&b={{FIRST}}", "{{>p}}"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	src := mailmerge.Rows([]string{"email", "FIRST", "CITY"}, []mailmerge.Row{
		{Line: 2, Address: "ann@example.net", Values: map[string]string{"email": "ann@example.net", "FIRST": "Ann", "CITY": "Oslo"}},
	})
	f.Fuzz(func(t *testing.T, subject, body, header string) {
		msg := &smtp.Message{From: "news@example.com", Subject: subject, Text: body, HTML: body,
			ExtraHeaders: []smtp.Field{{Name: "X-H", Value: header}}, ListUnsubscribe: []string{"https://example.com/u?" + header}}
		job, err := mailmerge.New(src, msg, mailmerge.Options{NoUnsubscribe: true})
		if err != nil {
			if !strings.Contains(err.Error(), "(") && !strings.Contains(err.Error(), "does not parse") {
				t.Fatalf("a refusal that names no place: %v", err)
			}
			return
		}
		if _, err := job.Preview(context.Background(), 1); err != nil {
			t.Fatalf("a checked template does not preview: %v", err)
		}
	})
}
