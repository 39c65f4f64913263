package smtp_test

// Faults a second reading of keyed sending found, each test failing before its fix.

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/go-sendloop/sendloop/smtp"
)

// TestFinalDotReplyOtherThan250 answers the final dot with a code that is
// neither 250 nor a refusal. A 2xx reply is a positive completion (RFC 5321,
// section 4.2.1): the message was accepted. Any other code says nothing of
// the message's fate: its outcome is unknown. Neither may be reported
// deferred, which promises that nothing was delivered and that a rerun sends
// the key again.
func TestFinalDotReplyOtherThan250(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply   string
		state   smtp.KeyState
		journal smtp.JournalState
	}{
		{"251 2.0.0 queued as Y", smtp.KeySent, smtp.JournalSent},
		{"200 ok", smtp.KeySent, smtp.JournalSent},
		{"354 go on", smtp.KeyUnknown, smtp.JournalUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.reply, func(t *testing.T) {
			t.Parallel()
			srv := startScript(t, plainExt, func(n int, cmd string) string {
				if cmd == "." {
					return tt.reply
				}
				return ""
			})
			r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(2, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			j := openJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding)
			const key = "ann@example.net"
			res := sendKeyed(t, r, keyed(key), smtp.SendKeyedOptions{Journal: j})[key]
			if res.State != tt.state {
				t.Errorf("state %v (%v), want %v", res.State, res.Err, tt.state)
			}
			if tt.state == smtp.KeySent && (res.Err != nil || res.Reply.Code == 0 || !res.Delivered()) {
				t.Errorf("sent with error %v, reply %+v", res.Err, res.Reply)
			}
			if tt.state == smtp.KeyUnknown && !errors.Is(res.Err, smtp.ErrOutcomeUnknown) {
				t.Errorf("unknown with error %v, want ErrOutcomeUnknown", res.Err)
			}
			if rec, ok := j.Lookup(key); !ok || rec.State != tt.journal {
				t.Errorf("journal %v, want %v", rec.State, tt.journal)
			}
			dots := 0
			for i := 0; srv.commands(i) != nil; i++ {
				for _, c := range srv.commands(i) {
					if c == "DATA" {
						dots++
					}
				}
			}
			if dots != 1 {
				t.Errorf("the message went %d times", dots)
			}
		})
	}
}
