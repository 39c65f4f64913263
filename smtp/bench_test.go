package smtp_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
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

// BenchmarkSend1000 sends 1,000 small messages to the fake relay with
// STARTTLS and AUTH PLAIN, as on port 587: first with a new connection per
// message (the baseline: what the sender did before), then over one reused
// connection. Compare the msgs/s of the two:
//
//	go test -run '^$' -bench Send1000 -benchtime 3x ./smtp
func BenchmarkSend1000(b *testing.B) {
	const n = 1000
	for _, bc := range []struct {
		name string
		opts []smtp.Option
	}{
		{"new-connection-per-message", []smtp.Option{smtp.WithMaxMessagesPerConnection(1)}},
		{"one-reused-connection", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fake, err := sendlooptest.StartRelay(b, testUser, testPassword, sendlooptest.RelayAuthMechanisms("PLAIN"))
			if err != nil {
				b.Fatal(err)
			}
			opts := append([]smtp.Option{smtp.WithTLSConfig(fake.ClientTLSConfig()), smtp.WithMaxConnections(1)}, bc.opts...)
			client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: testPassword}, opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for res := range client.SendAll(ctx, messages(n)) {
					if res.Err != nil {
						b.Fatal(res.Err)
					}
				}
				b.StopTimer()
				if got := len(fake.Messages()); got != n {
					b.Fatalf("relay got %d messages", got)
				}
				fake.Reset()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
