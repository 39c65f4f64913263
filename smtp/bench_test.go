package smtp_test

import (
	"testing"

	"github.com/go-sendloop/sendloop/smtp"
)

func BenchmarkHeadersFields(b *testing.B) {
	h := personalizedMessage().Headers
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := h.Fields(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMessageBytes(b *testing.B) {
	msg := personalizedMessage()
	msg.Attachments = []smtp.Attachment{{Filename: "a.bin", Data: make([]byte, 64<<10)}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := msg.Bytes(); err != nil {
			b.Fatal(err)
		}
	}
}
