package mailmerge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// BenchmarkSendKeyedJournal sends 10,000 keyed messages to the fake relay,
// without a journal and with a FileJournal, in one run, so that the cost
// of the journal (a write before each final dot, one after each reply, an
// fsync per group) reads from the two lines:
//
//	go test -run '^$' -bench SendKeyedJournal -benchtime 1x ./mailmerge
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
				var opts keyedOptions
				if withJournal {
					j, err := OpenJournal(filepath.Join(dir, fmt.Sprint(i)), testBinding)
					if err != nil {
						b.Fatal(err)
					}
					defer j.Close()
					opts.journal = j
				}
				seq, err := sendKeyed(ctx, client, keyed(addrs...), opts)
				if err != nil {
					b.Fatal(err)
				}
				for res := range seq {
					if res.Fate != job.Done {
						b.Fatalf("%s: %v (%v)", res.Key, res.Fate, res.Err)
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
