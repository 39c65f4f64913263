package smtp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// BenchmarkSendKeyedJournal sends 10,000 keyed messages to the fake relay,
// without a journal and with a FileJournal, in one run, so that the cost
// of the journal (a write before each final dot, one after each reply, an
// fsync per group) reads from the two lines:
//
//	go test -run '^$' -bench SendKeyedJournal -benchtime 1x ./smtp
//
// SENDLOOP_BENCH_KEYS sets the number of messages (scripts/bench-send runs it
// this way). It prints the journal's cost, the ratio of the two times.
func BenchmarkSendKeyedJournal(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("SENDLOOP_BENCH_KEYS")); err == nil && v > 0 {
		n = v
	}
	perMsg := map[bool]time.Duration{}
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("user%d@example.net", i)
	}
	for _, withJournal := range []bool{false, true} {
		name := "journal-off"
		if withJournal {
			name = "journal-on"
		}
		b.Run(name, func(b *testing.B) {
			fake, err := sendlooptest.StartRelay(b, testUser, testPassword, sendlooptest.RelayAuthMechanisms("PLAIN"))
			if err != nil {
				b.Fatal(err)
			}
			client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: testPassword}, smtp.WithTLSConfig(fake.ClientTLSConfig()))
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			dir := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var opts smtp.SendKeyedOptions
				if withJournal {
					j, err := smtp.OpenJournal(filepath.Join(dir, fmt.Sprint(i)), testBinding)
					if err != nil {
						b.Fatal(err)
					}
					defer j.Close()
					opts.Journal = j
				}
				seq, err := client.SendKeyed(ctx, keyed(addrs...), opts)
				if err != nil {
					b.Fatal(err)
				}
				for res := range seq {
					if res.State != smtp.KeySent {
						b.Fatalf("%s: %v (%v)", res.Key, res.State, res.Err)
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
			perMsg[withJournal] = b.Elapsed() / time.Duration(n*b.N)
		})
	}
	if off, on := perMsg[false], perMsg[true]; off > 0 && on > 0 {
		fmt.Printf("journal cost: %.1f %% of the wall time without it (%v vs %v a message; target <= 15 %%)\n",
			(float64(on)/float64(off)-1)*100, on, off)
	}
}
