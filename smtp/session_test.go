package smtp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// retrying is the retry policy of the fault tests: quick.
var retrying = smtp.WithRetry(2, time.Millisecond)

func simpleMessage(i int) *smtp.Message {
	return &smtp.Message{
		From: "shop@example.com", To: []string{fmt.Sprintf("user%d@example.net", i)},
		Subject: fmt.Sprintf("Message %d", i), Text: "Hi {{N}}",
		Headers: smtp.Headers{MergeVars: map[string]any{"N": i}},
	}
}

func messages(n int) iter.Seq[*smtp.Message] {
	return func(yield func(*smtp.Message) bool) {
		for i := 0; i < n; i++ {
			if !yield(simpleMessage(i)) {
				return
			}
		}
	}
}

func TestSendReturnsMessageIDAndReply(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	res, err := client.Send(testContext(t), simpleMessage(1))
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Messages()[0]
	if res.MessageID != "<"+m.MessageID+">" || !strings.HasSuffix(res.MessageID, "@example.com>") {
		t.Errorf("MessageID = %q, the relay got %q", res.MessageID, m.MessageID)
	}
	if res.Reply.Code != 250 || res.Reply.EnhancedCode != "2.0.0" || res.Reply.String() != "250 2.0.0 OK: queued" {
		t.Errorf("Reply = %+v (%s)", res.Reply, res.Reply)
	}
	if !res.Delivered() || res.Attempts != 1 || len(res.Accepted) != 1 || len(res.Refused) != 0 || res.Err != nil {
		t.Errorf("result = %+v", res)
	}
}

func TestSendAllReusesOneConnection(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	const n = 30
	want := 0
	ids := map[string]bool{}
	for res := range client.SendAll(testContext(t), messages(n)) {
		if res.Index != want {
			t.Fatalf("result %d came for message %d", want, res.Index)
		}
		want++
		if res.Err != nil || res.Reply.Code != 250 || ids[res.MessageID] {
			t.Errorf("message %d: %+v", res.Index, res)
		}
		ids[res.MessageID] = true
	}
	if want != n {
		t.Fatalf("%d results, want %d", want, n)
	}
	if got := fake.Connections(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
	if got := fake.AuthAttempts(); got != 1 {
		t.Errorf("%d AUTH exchanges, want 1", got)
	}
	msgs := fake.Messages()
	if len(msgs) != n {
		t.Fatalf("relay got %d messages, want %d", len(msgs), n)
	}
	// RSET between messages: each transaction has its own envelope.
	for _, m := range msgs {
		if len(m.EnvelopeTo) != 1 || !ids["<"+m.MessageID+">"] {
			t.Errorf("captured envelope %v, Message-ID %s", m.EnvelopeTo, m.MessageID)
		}
	}
}

func TestSendAllParallelKeepsOrder(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(3))
	const n = 40
	bad := func(yield func(*smtp.Message) bool) {
		for i := 0; i < n; i++ {
			m := simpleMessage(i)
			if i%10 == 3 {
				m.To = []string{"not an address"}
			}
			if !yield(m) {
				return
			}
		}
	}
	i := 0
	for res := range client.SendAll(testContext(t), bad) {
		if res.Index != i {
			t.Fatalf("result for %d at position %d", res.Index, i)
		}
		var addrErr *smtp.AddressError
		if i%10 == 3 {
			if !errors.As(res.Err, &addrErr) || res.Attempts != 0 {
				t.Errorf("message %d: %v, want *AddressError and no attempt", i, res.Err)
			}
		} else if res.Err != nil {
			t.Errorf("message %d: %v", i, res.Err)
		}
		i++
	}
	if i != n || len(fake.Messages()) != n-4 {
		t.Errorf("%d results, %d messages", i, len(fake.Messages()))
	}
	if c := fake.Connections(); c > 3 {
		t.Errorf("%d connections, want at most 3", c)
	}
}

func TestConcurrentSendsShareBoundedConnections(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(2))
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := client.Send(ctx, simpleMessage(i)); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if c := fake.Connections(); c > 2 {
		t.Errorf("%d connections, want at most 2", c)
	}
	if n := len(fake.Messages()); n != 12 {
		t.Errorf("%d messages", n)
	}
}

func TestSendAllCancelReportsNotAttempted(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	const n = 20
	var results []smtp.SendResult
	for res := range client.SendAll(ctx, messages(n)) {
		results = append(results, res)
		if res.Index == 2 {
			cancel()
		}
	}
	if len(results) != n {
		t.Fatalf("%d results, want one per message (%d)", len(results), n)
	}
	delivered, notAttempted := 0, 0
	for i, res := range results {
		switch {
		case res.Index != i:
			t.Fatalf("result %d is for message %d", i, res.Index)
		case res.Err == nil:
			delivered++
		case errors.Is(res.Err, smtp.ErrNotAttempted):
			notAttempted++
			if !errors.Is(res.Err, context.Canceled) || res.Attempts != 0 {
				t.Errorf("message %d: %v after %d attempts", i, res.Err, res.Attempts)
			}
		case errors.Is(res.Err, smtp.ErrOutcomeUnknown), errors.Is(res.Err, context.Canceled):
			// The one in flight when the context ended.
		default:
			t.Errorf("message %d: %v", i, res.Err)
		}
	}
	// Launched before the cancellation: the 3 yielded and at most the
	// ordering window (4 per connection, 2 per connection in flight).
	if delivered < 3 || notAttempted < n-3-8 {
		t.Errorf("%d delivered, %d not attempted of %d", delivered, notAttempted, n)
	}
	if got := len(fake.Messages()); got < delivered || got > delivered+1 {
		t.Errorf("relay got %d messages, %d reported delivered", got, delivered)
	}
}

func TestSendAllStopsEarly(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(2))
	taken := 0
	infinite := func(yield func(*smtp.Message) bool) {
		for i := 0; ; i++ {
			taken++
			if !yield(simpleMessage(i)) {
				return
			}
		}
	}
	for res := range client.SendAll(testContext(t), infinite) {
		if res.Index == 4 {
			break
		}
	}
	// At most the 5 yielded and a window of 4 per connection (2 of them)
	// sent or in flight; every message taken was sent.
	if taken > 5+4*2*2 || len(fake.Messages()) != taken {
		t.Errorf("took %d messages, relay got %d", taken, len(fake.Messages()))
	}
}

func TestRelay421MidSessionReconnects(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, retrying)
	ctx := testContext(t)
	if _, err := client.Send(ctx, simpleMessage(0)); err != nil {
		t.Fatal(err)
	}
	// A 421 to the first command on a reused connection is a server that
	// ended it while idle: replaced at once, without counting an attempt.
	fake.FailNext("MAIL", 421, "4.3.2 shutting down")
	res, err := client.Send(ctx, simpleMessage(1))
	if err != nil || res.Attempts != 1 {
		t.Fatalf("Send after 421: %v after %d attempts", err, res.Attempts)
	}
	if c := fake.Connections(); c != 2 {
		t.Errorf("%d connections, want 2 (the relay closed the first)", c)
	}
	// Mid-transaction, or on a new connection, a 421 costs an attempt.
	fake.FailNext("RCPT", 421, "4.3.2 shutting down")
	res, err = client.Send(ctx, simpleMessage(2))
	if err != nil || res.Attempts != 2 {
		t.Fatalf("Send after 421 at RCPT: %v after %d attempts", err, res.Attempts)
	}
	if c := fake.Connections(); c != 3 {
		t.Errorf("%d connections, want 3", c)
	}
	if n := len(fake.Messages()); n != 3 {
		t.Errorf("%d messages, want 3", n)
	}

	// Without retries the 421 is the answer: temporary.
	once := newClient(t, fake, testPassword, nil)
	fake.FailNext("DATA", 421, "try later")
	_, err = once.Send(ctx, simpleMessage(2))
	var smtpErr *smtp.ReplyError
	if !errors.As(err, &smtpErr) || smtpErr.Code != 421 || !errors.Is(err, smtp.ErrTemporary) || errors.Is(err, smtp.ErrPermanent) {
		t.Errorf("err = %v, want a temporary 421", err)
	}
}

func TestRelayRcpt4xxIsRetried(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, retrying)
	ctx := testContext(t)
	msg := &smtp.Message{From: "a@example.com", To: []string{"b@example.com", "grey@example.com"}, Text: "x"}
	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "grey@example.com", Code: 451, Message: "4.7.1 greylisted"})
	res, err := client.Send(ctx, msg)
	if err != nil || res.Attempts != 2 || len(res.Accepted) != 2 {
		t.Fatalf("Send: %v, %+v", err, res)
	}
	if msgs := fake.Messages(); len(msgs) != 1 || len(msgs[0].EnvelopeTo) != 2 {
		t.Fatalf("relay got %+v, want one message to both", msgs)
	}

	// Still refused after the retries: delivered to the other recipient,
	// and the result says who was refused and why.
	fake.Reset()
	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "grey@example.com", Code: 451, Message: "4.7.1 greylisted", Times: 10})
	res, err = client.Send(ctx, msg)
	var rcptErr *smtp.RecipientsError
	if !errors.As(err, &rcptErr) || !rcptErr.Delivered || !errors.Is(err, smtp.ErrSomeRecipientsRefused) || !errors.Is(err, smtp.ErrTemporary) {
		t.Fatalf("err = %v, want a delivered *RecipientsError", err)
	}
	if res.Attempts != 3 || !res.Delivered() || len(res.Accepted) != 1 || res.Accepted[0] != "b@example.com" ||
		len(res.Refused) != 1 || res.Refused[0].Recipient != "grey@example.com" || res.Refused[0].Code != 451 || res.Refused[0].EnhancedCode != "4.7.1" {
		t.Errorf("result = %+v, refused %+v", res, res.Refused)
	}
	if msgs := fake.Messages(); len(msgs) != 1 || strings.Join(msgs[0].EnvelopeTo, ",") != "b@example.com" {
		t.Errorf("relay got %d messages (%+v), want one to b@ only", len(msgs), msgs)
	}
}

func TestRelayPartialAcceptance(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "carl@example.org", Code: 550, Message: "5.1.1 no such user"})
	res, err := client.Send(testContext(t), personalizedMessage())
	if !errors.Is(err, smtp.ErrSomeRecipientsRefused) || !errors.Is(err, smtp.ErrPermanent) || !strings.Contains(err.Error(), "carl@example.org") {
		t.Fatalf("err = %v", err)
	}
	wantAccepted := "zoe@example.net,bob@example.net,audit@example.com"
	if strings.Join(res.Accepted, ",") != wantAccepted || len(res.Refused) != 1 || res.Refused[0].Message != "no such user" || res.Reply.Code != 250 {
		t.Errorf("result = %+v", res)
	}
	if msgs := fake.Messages(); len(msgs) != 1 || strings.Join(msgs[0].EnvelopeTo, ",") != wantAccepted {
		t.Errorf("relay got %+v", msgs)
	}
}

func TestRelayDroppedAfterFinalDotIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, retrying)
	ctx := testContext(t)
	fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true})
	res, err := client.Send(ctx, simpleMessage(1))
	if !errors.Is(err, smtp.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if res.Attempts != 1 || res.Delivered() || res.MessageID == "" {
		t.Errorf("result = %+v: sent again, or no Message-ID to look it up by", res)
	}
	// The relay may have queued it: it did here, and got it once.
	if n := len(fake.Messages()); n != 1 {
		t.Errorf("relay got %d copies, want 1", n)
	}
	// The Relay goes on with a new connection.
	if _, err := client.Send(ctx, simpleMessage(2)); err != nil {
		t.Errorf("next Send: %v", err)
	}
}

func TestRelayDroppedBeforeFinalDotIsRetried(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"MAIL", "RCPT"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t)
			client := newClient(t, fake, testPassword, nil, retrying)
			fake.InjectFault(sendlooptest.RelayFault{Command: command, Drop: true})
			res, err := client.Send(testContext(t), simpleMessage(1))
			if err != nil || res.Attempts != 2 {
				t.Fatalf("Send: %v after %d attempts", err, res.Attempts)
			}
			if n := len(fake.Messages()); n != 1 {
				t.Errorf("relay got %d messages, want 1", n)
			}
		})
	}
}

func TestRelayReplacesAConnectionDroppedWhileIdle(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	ctx := testContext(t)
	if _, err := client.Send(ctx, simpleMessage(0)); err != nil {
		t.Fatal(err)
	}
	fake.DropConnections()
	// No retries: the stale connection is noticed by RSET and replaced
	// before the message is sent, without counting an attempt.
	res, err := client.Send(ctx, simpleMessage(1))
	if err != nil || res.Attempts != 1 {
		t.Fatalf("Send: %v after %d attempts", err, res.Attempts)
	}
	if c := fake.Connections(); c != 2 {
		t.Errorf("%d connections, want 2", c)
	}
}

func TestRelayWithoutSTARTTLS(t *testing.T) {
	t.Parallel()
	fake := startRelay(t, sendlooptest.RelayWithoutSTARTTLS(), sendlooptest.RelayInsecureAuth())
	refused := newClient(t, fake, testPassword, nil)
	smtp.TreatLoopbackAsRemote(refused)
	if _, err := refused.Send(testContext(t), simpleMessage(1)); !errors.Is(err, smtp.ErrInsecureAuth) {
		t.Fatalf("err = %v, want ErrInsecureAuth", err)
	}
	if fake.AuthAttempts() != 0 || len(fake.Messages()) != 0 {
		t.Fatal("credentials or message sent without TLS")
	}
	optedIn := newClient(t, fake, testPassword, nil, smtp.WithAllowPlaintext())
	smtp.TreatLoopbackAsRemote(optedIn)
	if _, err := optedIn.Send(testContext(t), simpleMessage(2)); err != nil {
		t.Fatalf("WithAllowPlaintext: %v", err)
	}
	if msgs := fake.Messages(); len(msgs) != 1 || msgs[0].TLS {
		t.Errorf("messages %+v, want one without TLS", msgs)
	}
}

func TestSendAllAuthRefusedOnce(t *testing.T) {
	t.Parallel()
	fake, err := sendlooptest.StartRelay(t, testUser, "the-right-one")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	client := newClient(t, fake, testPassword, &logs, retrying, smtp.WithMaxConnections(1))
	n := 0
	for res := range client.SendAll(testContext(t), messages(5)) {
		n++
		var smtpErr *smtp.ReplyError
		if !errors.As(res.Err, &smtpErr) || smtpErr.Command != "AUTH" || smtpErr.Code != 535 || !errors.Is(res.Err, smtp.ErrPermanent) {
			t.Errorf("message %d: %v, want AUTH 535", res.Index, res.Err)
		}
	}
	if n != 5 || fake.AuthAttempts() != 1 {
		t.Errorf("%d results, %d AUTH exchanges; want 5 and 1 (credentials that failed are not tried again)", n, fake.AuthAttempts())
	}
	if strings.Contains(logs.String(), testPassword) {
		t.Error("the password leaked into the logs")
	}
}

func TestRelayMessageSize(t *testing.T) {
	t.Parallel()
	big := simpleMessage(1)
	big.Attachments = []smtp.Attachment{{Filename: "big.bin", Data: bytes.Repeat([]byte{7}, 6000)}}

	fake := startRelay(t, sendlooptest.RelayMaxMessageBytes(4000))
	res, err := newClient(t, fake, testPassword, nil, retrying).Send(testContext(t), big)
	var sizeErr *smtp.SizeError
	if !errors.As(err, &sizeErr) || !sizeErr.Server || sizeErr.Limit != 4000 || !errors.Is(err, smtp.ErrMessageTooLarge) {
		t.Fatalf("err = %v, want the server's SIZE", err)
	}
	if res.Attempts != 0 {
		t.Errorf("Attempts = %d for a message refused before MAIL, want 0", res.Attempts)
	}

	local := startRelay(t)
	client := newClient(t, local, testPassword, nil, smtp.WithMaxMessageSize(4000))
	_, err = client.Send(testContext(t), big)
	if !errors.As(err, &sizeErr) || sizeErr.Server || sizeErr.Size <= 4000 {
		t.Fatalf("err = %v, want the configured limit", err)
	}
	if local.Connections() != 0 {
		t.Error("the client connected for a message over its limit")
	}
}

func TestRelaySMTPUTF8(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	_, err := client.Send(testContext(t), &smtp.Message{From: "a@example.com", To: []string{"Zoë <zoë@exämple.com>"}, Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if m := fake.Messages(); len(m) != 1 || m[0].EnvelopeTo[0] != "zoë@exämple.com" || !m[0].MailSMTPUTF8 {
		t.Errorf("captured %+v", m)
	}
}

func TestRelayMailParameters(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	msg := simpleMessage(1)
	data, err := msg.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Send(testContext(t), msg); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages()[0]
	// go-smtp declares 8BITMIME when offered; SIZE is the message's; no
	// SMTPUTF8 for ASCII addresses. (Bytes makes a new Message-ID and Date,
	// of the same length.)
	if m.MailBody != "8BITMIME" || m.MailSMTPUTF8 || m.MailSize != int64(len(data)) || int64(len(m.Raw)) != m.MailSize {
		t.Errorf("MAIL BODY=%q SMTPUTF8=%v SIZE=%d; message of %d bytes, received %d", m.MailBody, m.MailSMTPUTF8, m.MailSize, len(data), len(m.Raw))
	}
}

func TestRelayImplicitTLS(t *testing.T) {
	t.Parallel()
	fake := startRelay(t, sendlooptest.RelayImplicitTLS())
	client := newClient(t, fake, testPassword, nil, smtp.WithImplicitTLS())
	if _, err := client.Send(testContext(t), simpleMessage(1)); err != nil {
		t.Fatal(err)
	}
	if m := fake.Messages(); len(m) != 1 || !m[0].TLS {
		t.Errorf("captured %+v, want one over TLS", m)
	}
}

func TestRelayClose(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	if _, err := client.Send(testContext(t), simpleMessage(1)); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Send(testContext(t), simpleMessage(2)); !errors.Is(err, smtp.ErrRelayClosed) {
		t.Errorf("Send after Close = %v", err)
	}
}

func TestRelayConnectionStaysUsableAfterARefusal(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	ctx := testContext(t)
	for _, f := range []sendlooptest.RelayFault{
		{Command: "MAIL", Code: 451, Message: "later"},
		{Command: "MAIL", Code: 550, Message: "no"},
		{Command: "RCPT", Code: 550, Message: "no"},
		{Command: "DATA", Code: 554, Message: "spam"},
		{Command: "DATA", Code: 452, Message: "full"},
	} {
		fake.InjectFault(f)
		if _, err := client.Send(ctx, simpleMessage(0)); err == nil {
			t.Fatalf("fault %+v: no error", f)
		}
		// The transaction was ended (RSET) and the next message goes on the
		// same connection with its own envelope.
		if _, err := client.Send(ctx, simpleMessage(1)); err != nil {
			t.Fatalf("after %+v: %v", f, err)
		}
	}
	if c := fake.Connections(); c != 1 {
		t.Errorf("%d connections, want 1", c)
	}
	for _, m := range fake.Messages() {
		if strings.Join(m.EnvelopeTo, ",") != "user1@example.net" {
			t.Errorf("envelope %v", m.EnvelopeTo)
		}
	}
}

func TestRelayContextAtEveryStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		command     string
		cancel      bool
		wantUnknown bool
	}{
		{"deadline waiting for MAIL", "MAIL", false, false},
		{"cancel waiting for RCPT", "RCPT", true, false},
		{"deadline waiting for the final reply", "DATA", false, true},
		{"cancel waiting for the final reply", "DATA", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t)
			client := newClient(t, fake, testPassword, nil, retrying)
			wantErr := context.DeadlineExceeded
			if tt.cancel {
				wantErr = context.Canceled
			}
			// The context ends as the relay holds the command's reply, so that the client
			// waits on that very command whatever the machine's load: a 300 ms deadline
			// could pass before the final dot went out, and the outcome be known.
			ctx := testkit.NewEndingContext(wantErr)
			fake.InjectFault(sendlooptest.RelayFault{Command: tt.command, Delay: time.Minute, Reached: ctx.End})
			start := time.Now()
			res, err := client.Send(ctx, simpleMessage(1))
			if !errors.Is(err, wantErr) || errors.Is(err, smtp.ErrOutcomeUnknown) != tt.wantUnknown {
				t.Fatalf("err = %v, want %v (outcome unknown: %v)", err, wantErr, tt.wantUnknown)
			}
			if res.Attempts != 1 {
				t.Errorf("%d attempts after the context ended", res.Attempts)
			}
			// Time is what is tested: the reply is a minute away, so only the context can
			// end Send. 10 s is 500 times the median under -race (20 ms, 20 runs).
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Send returned after %v", elapsed)
			}
		})
	}
}

// TestRelayConnectionsPerSession counts the TCP connections a bulk send opens: one per
// WithMaxMessagesPerConnection messages, and without STARTTLS a single probe first (go-smtp
// drops a connection whose STARTTLS failed; the relay remembers, so later sessions dial once).
func TestRelayConnectionsPerSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		relay     []sendlooptest.RelayOption
		perConn   int
		messages  int
		wantConns int
	}{
		{name: "two messages per connection", perConn: 2, messages: 6, wantConns: 3},
		{name: "no STARTTLS: one probe, then one dial per session",
			relay:   []sendlooptest.RelayOption{sendlooptest.RelayWithoutSTARTTLS(), sendlooptest.RelayInsecureAuth()},
			perConn: 1, messages: 3, wantConns: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t, tt.relay...)
			client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1), smtp.WithMaxMessagesPerConnection(tt.perConn))
			for res := range client.SendAll(testContext(t), messages(tt.messages)) {
				if res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			if c := fake.Connections(); c != tt.wantConns {
				t.Errorf("%d connections for %d messages, want %d", c, tt.messages, tt.wantConns)
			}
		})
	}
}
