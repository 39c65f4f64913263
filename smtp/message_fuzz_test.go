package smtp_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/go-sendloop/sendloop/smtp"
)

// FuzzMessageHeaders builds messages from arbitrary header text: each is
// refused with a typed error, or reads back with go-message to the same
// values, with no field injected.
func FuzzMessageHeaders(f *testing.F) {
	for _, seed := range [][4]string{
		{"Hello", "Ann", "spring", "report.pdf"},
		{"Grüße aus Köln", "Zoë Ærø", "été", "données été.csv"},
		{"hi\r\nBcc: evil@example.com", "x", "y", "z"},
		{"=?utf-8?q?not_really?=", "\"quoted\" name", "a\tb", "a\"b.txt"},
		{strings.Repeat("long words ", 30), strings.Repeat("n", 100), strings.Repeat("ü", 200), "x"},
		{"日本語の件名", "名前", "値", "ファイル.txt"},
		{"", "", "", ""},
		{"\x00", "\x7f", "\xff", "\r"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, subject, name, value, filename string) {
		m := &smtp.Message{
			From:         (&mail.Address{Name: name, Address: "a@example.com"}).String(),
			To:           []string{"b@example.com"},
			Subject:      subject,
			Text:         "x",
			ExtraHeaders: []smtp.Field{{Name: "X-Fuzz", Value: value}},
			Attachments:  []smtp.Attachment{{Filename: filename, ContentType: "application/octet-stream", Data: []byte("d")}},
		}
		raw, err := m.Bytes()
		if err != nil {
			var headerErr *smtp.HeaderError
			var addrErr *smtp.AddressError
			var partErr *smtp.PartError
			if !errors.As(err, &headerErr) && !errors.As(err, &addrErr) && !errors.As(err, &partErr) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		entity, err := message.Read(bytes.NewReader(raw))
		if err != nil && !message.IsUnknownCharset(err) {
			t.Fatalf("go-message cannot read it: %v\n%q", err, raw)
		}
		h := mail.Header{Header: entity.Header}
		// Surrounding white space is not part of a header value.
		if got, err := h.Subject(); err != nil || got != strings.TrimSpace(subject) && got != subject {
			t.Errorf("subject %q reads back as %q (%v)", subject, got, err)
		}
		if got, err := h.Text("X-Fuzz"); err != nil || strings.TrimSpace(got) != strings.TrimSpace(value) {
			t.Errorf("X-Fuzz %q reads back as %q (%v)", value, got, err)
		}
		if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != "a@example.com" {
			t.Errorf("From reads back as %v (%v)", from, err)
		}
		fields := entity.Header.Fields()
		for fields.Next() {
			switch fields.Key() {
			case "From", "To", "Subject", "Date", "Message-Id", "X-Fuzz", "Mime-Version", "Content-Type":
			default:
				t.Errorf("unexpected header field %q: %q", fields.Key(), fields.Value())
			}
		}
		for _, line := range bytes.Split(raw, []byte("\r\n")) {
			if len(line) > 998 {
				t.Errorf("line of %d characters", len(line))
			}
		}
	})
}
