package smtp_test

import (
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/smtp"
)

// hookLog records what the hooks of a SendAllHooked saw, in order.
type hookLog struct {
	mu     sync.Mutex
	events []string
}

func (l *hookLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func hookedOne(msg *smtp.Message, h *smtp.Hook) iter.Seq2[*smtp.Message, *smtp.Hook] {
	return func(yield func(*smtp.Message, *smtp.Hook) bool) { yield(msg, h) }
}

// TestFinalDotReplyOtherThan250 answers the final dot with a code that is neither 250 nor
// a refusal. A 2xx reply is a positive completion (RFC 5321, section 4.2.1): the message
// was accepted. Any other code says nothing of the message's fate: its outcome is unknown.
// Neither is a 4xx the Deferred hook hears of, which promises that nothing was delivered.
func TestFinalDotReplyOtherThan250(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply   string
		unknown bool
	}{
		{"251 2.0.0 queued as Y", false},
		{"200 ok", false},
		{"354 go on", true},
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
			r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "hook-user", Password: "hook-password-91"}, smtp.WithRetry(2, 0))
			require.NoError(t, err)
			defer r.Close()
			log := &hookLog{}
			h := &smtp.Hook{
				BeforeDot: func(id string) error { log.add("dot"); return nil },
				Deferred:  func(*smtp.SendResult) error { log.add("deferred"); return nil },
				Done:      func(smtp.SendResult) error { log.add("done"); return nil },
			}
			var results []smtp.SendResult
			for res := range r.SendAllHooked(testContext(t), hookedOne(&smtp.Message{From: "a@example.com", To: []string{"ann@example.net"}, Subject: "s", Text: "t"}, h)) {
				results = append(results, res)
			}
			require.Len(t, results, 1)
			res := results[0]
			if tt.unknown {
				assert.ErrorIs(t, res.Err, smtp.ErrOutcomeUnknown)
			} else {
				assert.NoError(t, res.Err)
				assert.True(t, res.Delivered())
			}
			assert.Equal(t, []string{"dot", "done"}, log.events)
			dots := 0
			for i := 0; srv.commands(i) != nil; i++ {
				for _, c := range srv.commands(i) {
					if c == "DATA" {
						dots++
					}
				}
			}
			assert.Equal(t, 1, dots, "the message went once")
		})
	}
}

// TestSendAllHooked: a BeforeDot error abandons the message before its final dot, a
// Deferred hook hears of a 4xx to the final dot before the retry, a Done error stops the
// run, and a nil message keeps its place.
func TestSendAllHooked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		dotReply  func(n int) string
		beforeDot error
		done      error
		want      []string // the events of the first message
		wantErrs  []error  // of each result
	}{
		{"sent", func(int) string { return "" }, nil, nil, []string{"dot", "done"}, []error{nil, errNil, nil}},
		{"abandoned before the dot", func(int) string { return "" }, errors.New("disk full"), nil,
			[]string{"dot", "done"}, []error{errDiskFull, errNil, errDiskFull}},
		{"deferred then sent", func(n int) string {
			if n == 0 {
				return "451 4.3.0 later"
			}
			return ""
		}, nil, nil, []string{"dot", "deferred", "dot", "done"}, []error{nil, errNil, nil}},
		{"done stops the run", func(int) string { return "" }, nil, errors.New("journal gone"),
			[]string{"dot", "done"}, []error{nil, errNil, smtp.ErrRunStopped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			dots := 0
			srv := startScript(t, plainExt, func(n int, cmd string) string {
				if cmd != "." {
					return ""
				}
				mu.Lock()
				defer mu.Unlock()
				dots++
				return tt.dotReply(dots - 1)
			})
			r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "hook-user", Password: "hook-password-91"}, smtp.WithRetry(2, 0), smtp.WithMaxConnections(1))
			require.NoError(t, err)
			defer r.Close()
			first := &hookLog{}
			firstDone := make(chan struct{}) // the second message goes once the first is done
			hook := func(log *hookLog) *smtp.Hook {
				return &smtp.Hook{
					BeforeDot: func(id string) error {
						log.add("dot")
						if tt.beforeDot != nil {
							return errDiskFull
						}
						return nil
					},
					Deferred: func(res *smtp.SendResult) error { log.add("deferred"); return nil },
					Done: func(smtp.SendResult) error {
						log.add("done")
						if log == first {
							close(firstDone)
							return tt.done
						}
						return nil
					},
				}
			}
			msg := func(to string) *smtp.Message {
				return &smtp.Message{From: "a@example.com", To: []string{to}, Subject: "s", Text: "t"}
			}
			seq := func(yield func(*smtp.Message, *smtp.Hook) bool) {
				if !yield(msg("ann@example.net"), hook(first)) {
					return
				}
				<-firstDone
				_ = yield(nil, nil) && yield(msg("bob@example.net"), hook(&hookLog{}))
			}
			var errs []error
			for res := range r.SendAllHooked(testContext(t), seq) {
				errs = append(errs, res.Err)
			}
			assert.Equal(t, tt.want, first.events)
			require.Len(t, errs, len(tt.wantErrs))
			for i, want := range tt.wantErrs {
				switch want {
				case nil:
					assert.NoError(t, errs[i], "result %d", i)
				case errNil:
					assert.Error(t, errs[i], "result %d: a nil message", i)
				default:
					assert.ErrorIs(t, errs[i], want, "result %d", i)
				}
			}
		})
	}
}

var (
	errNil      = errors.New("a nil message's error")
	errDiskFull = errors.New("disk full")
)
