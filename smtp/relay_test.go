package smtp_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const (
	testUser = "sender-42"
	// testPassword is a marker: no error, log line or printed value may hold
	// it.
	testPassword = "MARKER-s3cr3t-PASSWORD-7f1c"
)

func startRelay(t *testing.T, opts ...sendlooptest.RelayOption) *sendlooptest.Relay {
	t.Helper()
	relay, err := sendlooptest.StartRelay(t, testUser, testPassword, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return relay
}

// newClient returns a client of fake, trusting its certificate, logging into
// logs if not nil.
func newClient(t *testing.T, fake *sendlooptest.Relay, password string, logs *bytes.Buffer, opts ...smtp.Option) *smtp.Relay {
	t.Helper()
	// No retries unless a test asks: most tests check one reply.
	opts = append([]smtp.Option{smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithDialTimeout(2 * time.Second), smtp.WithRetry(0, 0)}, opts...)
	if logs != nil {
		opts = append(opts, smtp.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: password}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func personalizedMessage() *smtp.Message {
	return &smtp.Message{
		From:    "Shop <shop@example.com>",
		To:      []string{"Zoë <zoe@example.net>", "bob@example.net"},
		Cc:      []string{"carl@example.org"},
		Bcc:     []string{"audit@example.com"},
		Subject: "Hello %FIRSTNAME%",
		Text:    "Hi {{FIRSTNAME}}, your order {{ORDER}} has shipped.",
		HTML:    "<p>Hi {{FIRSTNAME}}{{#VIP}}, our valued customer{{/VIP}}!</p>",
		Headers: smtp.Headers{
			CustomArgs:  map[string]any{"user_id": "42", "campaign": "été"},
			MergeVars:   map[string]any{"%FIRSTNAME%": "Zoë", "FIRSTNAME": "Zoë", "ORDER": "A-17", "VIP": true},
			Tags:        []string{"shipping", "transactional"},
			TrackOpens:  true,
			TrackClicks: true,
		},
	}
}

func TestRelaySendOverSTARTTLS(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t, sendlooptest.RelayAuthMechanisms(mech))
			client := newClient(t, fake, testPassword, nil)
			msg := personalizedMessage()
			if _, err := client.Send(testContext(t), msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := fake.Messages()
			if len(got) != 1 {
				t.Fatalf("relay got %d messages, want 1", len(got))
			}
			m := got[0]
			if !m.TLS || m.AuthMechanism != mech || m.Username != testUser {
				t.Errorf("TLS=%v mechanism=%q user=%q, want TLS with %s as %s", m.TLS, m.AuthMechanism, m.Username, mech, testUser)
			}
			if m.EnvelopeFrom != "shop@example.com" {
				t.Errorf("MAIL FROM = %q", m.EnvelopeFrom)
			}
			wantRcpts := []string{"zoe@example.net", "bob@example.net", "carl@example.org", "audit@example.com"}
			if !reflect.DeepEqual(m.EnvelopeTo, wantRcpts) {
				t.Errorf("RCPT TO = %v, want %v", m.EnvelopeTo, wantRcpts)
			}
			if m.Header.Get("Bcc") != "" || bytes.Contains(m.Raw, []byte("audit@")) {
				t.Error("the Bcc address is in the message")
			}
			if !reflect.DeepEqual(m.SLHeaders, msg.Headers) {
				t.Errorf("X-SL headers:\n got %#v\nwant %#v", m.SLHeaders, msg.Headers)
			}
			for name, pair := range map[string][2]string{
				"subject": {m.RenderedSubject, "Hello Zoë"},
				"text":    {m.RenderedText, "Hi Zoë, your order A-17 has shipped."},
				"HTML":    {m.RenderedHTML, "<p>Hi Zoë, our valued customer!</p>"},
			} {
				if pair[0] != pair[1] {
					t.Errorf("rendered %s = %q, want %q", name, pair[0], pair[1])
				}
			}
			if m.Subject != msg.Subject || m.Text != msg.Text || m.HTML != msg.HTML {
				t.Errorf("decoded subject/text/HTML = %q / %q / %q", m.Subject, m.Text, m.HTML)
			}
		})
	}
}

func TestRelaySendAttachmentsAndRaw(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	ctx := testContext(t)
	data := bytes.Repeat([]byte("binary\x00\xff"), 50)
	_, err := client.Send(ctx, &smtp.Message{
		From: "a@example.com", To: []string{"b@example.com"}, Text: "see attached",
		Attachments: []smtp.Attachment{{Filename: "rapport été.bin", Data: data}},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := "From: a@example.com\r\nTo: b@example.com\r\nSubject: raw %NAME%\r\n\r\nHello %NAME%\r\n"
	_, err = client.Send(ctx, &smtp.Message{
		From: "a@example.com", To: []string{"b@example.com"}, Raw: []byte(raw),
		Headers: smtp.Headers{MergeVars: map[string]any{"%NAME%": "Ann"}, TrackGA: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := fake.Messages()
	if len(got) != 2 {
		t.Fatalf("got %d messages", len(got))
	}
	if a := got[0].Attachments; len(a) != 1 || a[0].Filename != "rapport été.bin" || !bytes.Equal(a[0].Data, data) || got[0].Text != "see attached" {
		t.Errorf("attachment message captured as %+v", got[0])
	}
	if got[1].RenderedSubject != "raw Ann" || got[1].RenderedText != "Hello Ann\r\n" || !got[1].SLHeaders.TrackGA {
		t.Errorf("raw message captured as subject %q text %q headers %+v", got[1].RenderedSubject, got[1].RenderedText, got[1].SLHeaders)
	}
}

func TestRelayLoopbackAllowsAuthWithoutTLS(t *testing.T) {
	t.Parallel()
	fake := startRelay(t, sendlooptest.RelayWithoutSTARTTLS(), sendlooptest.RelayInsecureAuth())
	client := newClient(t, fake, testPassword, nil)
	if _, err := client.Send(testContext(t), personalizedMessage()); err != nil {
		t.Fatalf("Send to a loopback relay without TLS: %v", err)
	}
	if got := fake.Messages(); len(got) != 1 || got[0].TLS {
		t.Fatalf("messages = %+v, want one without TLS", got)
	}
}

func TestRelayRefusesAuthWithoutTLS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []sendlooptest.RelayOption
		remote  bool
		wantErr error
	}{
		{"remote host, server offers AUTH in clear", []sendlooptest.RelayOption{sendlooptest.RelayWithoutSTARTTLS(), sendlooptest.RelayInsecureAuth()}, true, smtp.ErrInsecureAuth},
		{"remote host, server offers no AUTH", []sendlooptest.RelayOption{sendlooptest.RelayWithoutSTARTTLS()}, true, smtp.ErrInsecureAuth},
		{"loopback, server offers no AUTH", []sendlooptest.RelayOption{sendlooptest.RelayWithoutSTARTTLS()}, false, smtp.ErrNoAuthMechanism},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t, tt.opts...)
			client := newClient(t, fake, testPassword, nil)
			if tt.remote {
				smtp.TreatLoopbackAsRemote(client)
			}
			_, err := client.Send(testContext(t), personalizedMessage())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if n := fake.AuthAttempts(); n != 0 {
				t.Errorf("the client started %d AUTH exchanges", n)
			}
			if n := len(fake.Messages()); n != 0 {
				t.Errorf("the relay accepted %d messages", n)
			}
		})
	}
}

func TestRelayWrongPassword(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			fake, err := sendlooptest.StartRelay(t, testUser, "the-right-one", sendlooptest.RelayAuthMechanisms(mech))
			if err != nil {
				t.Fatal(err)
			}
			_, err = newClient(t, fake, testPassword, nil).Send(testContext(t), personalizedMessage())
			var smtpErr *smtp.ReplyError
			if !errors.As(err, &smtpErr) {
				t.Fatalf("err = %v, want *ReplyError", err)
			}
			if smtpErr.Command != "AUTH" || smtpErr.Code != 535 || smtpErr.EnhancedCode != "5.7.8" || !smtpErr.Permanent() || smtpErr.Temporary() {
				t.Errorf("err = %+v, want permanent AUTH 535 5.7.8", smtpErr)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("error text holds the password: %v", err)
			}
		})
	}
}

func TestRelayReplyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		fault         sendlooptest.RelayFault
		wantCommand   string
		wantRecipient string
		wantTemporary bool
	}{
		// A refused recipient does not stop the others: see
		// TestRelayPartialAcceptance. Here the message goes nowhere.
		{"MAIL 451", sendlooptest.RelayFault{Command: "MAIL", Code: 451, Message: "try again later"}, "MAIL", "", true},
		{"MAIL 550", sendlooptest.RelayFault{Command: "MAIL", Code: 550, Message: "sender blocked"}, "MAIL", "", false},
		{"RCPT 452 for all", sendlooptest.RelayFault{Command: "RCPT", Code: 452, Message: "mailbox full", Times: 4}, "RCPT", "zoe@example.net", true},
		{"RCPT 550 for all", sendlooptest.RelayFault{Command: "RCPT", Code: 550, Message: "no such user", Times: 4}, "RCPT", "zoe@example.net", false},
		{"DATA 421", sendlooptest.RelayFault{Command: "DATA", Code: 421, Message: "shutting down"}, "DATA", "", true},
		{"DATA 554", sendlooptest.RelayFault{Command: "DATA", Code: 554, Message: "spam"}, "DATA", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t)
			fake.InjectFault(tt.fault)
			var logs bytes.Buffer
			client := newClient(t, fake, testPassword, &logs)
			ctx := testContext(t)
			_, err := client.Send(ctx, personalizedMessage())
			var smtpErr *smtp.ReplyError
			if !errors.As(err, &smtpErr) {
				t.Fatalf("err = %v, want *ReplyError", err)
			}
			if smtpErr.Command != tt.wantCommand || smtpErr.Recipient != tt.wantRecipient || smtpErr.Code != tt.fault.Code ||
				smtpErr.Message != tt.fault.Message || smtpErr.Temporary() != tt.wantTemporary || smtpErr.Permanent() == tt.wantTemporary {
				t.Errorf("err = %+v, want %s %d recipient %q temporary %v", smtpErr, tt.wantCommand, tt.fault.Code, tt.wantRecipient, tt.wantTemporary)
			}
			if tt.wantRecipient != "" && !strings.Contains(err.Error(), tt.wantRecipient) {
				t.Errorf("error %q does not name the recipient", err)
			}
			if n := len(fake.Messages()); n != 0 {
				t.Errorf("%d messages delivered despite the error", n)
			}
			if strings.Contains(err.Error(), testPassword) || strings.Contains(logs.String(), testPassword) {
				t.Error("the password leaked")
			}
			// The fault is used up: the same send now goes through.
			if _, err := client.Send(ctx, personalizedMessage()); err != nil {
				t.Errorf("second Send: %v", err)
			}
		})
	}
}

// hangingServer accepts connections and, if greet, sends the greeting and
// the EHLO reply, then never answers again. hung is closed once a client
// waits on an answer that will never come: the greeting, or the reply to
// the command after EHLO.
func hangingServer(t *testing.T, greet bool) (host string, port int, hung <-chan struct{}) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	waiting := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		listener.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				if greet {
					tp := textproto.NewConn(conn)
					_ = tp.PrintfLine("220 hanging ESMTP")
					if _, err := tp.ReadLine(); err == nil {
						_ = tp.PrintfLine("250-hanging\r\n250 AUTH PLAIN")
					}
					_, _ = tp.ReadLine()
				}
				once.Do(func() { close(waiting) })
				<-done
			}()
		}
	}()
	addr := listener.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port, waiting
}

func TestRelayContextEndsSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		greet   bool
		cancel  bool
		wantErr error
	}{
		{"deadline, no greeting", false, false, context.DeadlineExceeded},
		{"deadline after EHLO", true, false, context.DeadlineExceeded},
		{"cancel, no greeting", false, true, context.Canceled},
		{"cancel after EHLO", true, true, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host, port, hung := hangingServer(t, tt.greet)
			client, err := smtp.NewRelay(net.JoinHostPort(host, strconv.Itoa(port)), smtp.Auth{Username: testUser, Password: testPassword}, smtp.WithRetry(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			var ctx context.Context
			var cancel context.CancelFunc
			if tt.cancel {
				// Cancelled as the client waits on the server, whatever the machine's load.
				ctx, cancel = context.WithCancel(context.Background())
				go func() {
					select {
					case <-hung:
						cancel()
					case <-ctx.Done():
					}
				}()
			} else {
				// A real deadline, which sets the connection's: wherever it lands, the
				// error is the deadline's.
				ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
			}
			defer cancel()
			start := time.Now()
			_, err = client.Send(ctx, personalizedMessage())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			// Time is what is tested: the server never answers, so only the context
			// can end Send. 10 s is 200 times the median under -race (50 ms, 20 runs).
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Send returned after %v", elapsed)
			}
		})
	}
}

func TestRelayTLSFailure(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	var logs bytes.Buffer
	// No RootCAs: the certificate of the fake relay is not trusted.
	client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: testPassword},
		smtp.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Send(testContext(t), personalizedMessage())
	var verifyErr *tls.CertificateVerificationError
	if !errors.As(err, &verifyErr) {
		t.Fatalf("err = %v, want a certificate verification error", err)
	}
	if fake.AuthAttempts() != 0 {
		t.Error("AUTH attempted after a TLS failure")
	}
	if strings.Contains(err.Error(), testPassword) || strings.Contains(logs.String(), testPassword) {
		t.Error("the password leaked")
	}
}

// TestRelayPasswordNeverLeaks goes through every failure path with a marker
// password and looks for it, plain or base64-encoded, in errors, logs and the
// printed forms of the Relay.
func TestRelayPasswordNeverLeaks(t *testing.T) {
	t.Parallel()
	secretForms := []string{
		testPassword,
		base64.StdEncoding.EncodeToString([]byte(testPassword)),
		base64.StdEncoding.EncodeToString([]byte("\x00" + testUser + "\x00" + testPassword)),
	}
	closedPort := func() int {
		_, port, err := net.SplitHostPort(testkit.RefusingAddr(t))
		require.NoError(t, err)
		n, err := strconv.Atoi(port)
		require.NoError(t, err)
		return n
	}()
	echoHost, echoPort := echoingServer(t)

	tests := []struct {
		name   string
		client func(logs *bytes.Buffer) *smtp.Relay
	}{
		{"wrong password", func(logs *bytes.Buffer) *smtp.Relay {
			fake, err := sendlooptest.StartRelay(t, testUser, "another")
			if err != nil {
				t.Fatal(err)
			}
			return newClient(t, fake, testPassword, logs)
		}},
		{"dial failure", func(logs *bytes.Buffer) *smtp.Relay {
			r, err := smtp.NewRelay(net.JoinHostPort("127.0.0.1", strconv.Itoa(closedPort)), smtp.Auth{Username: testUser, Password: testPassword}, smtp.WithLogger(jsonLogger(logs)), smtp.WithRetry(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"TLS failure", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t)
			r, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: testPassword}, smtp.WithLogger(jsonLogger(logs)))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"5xx reply", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t)
			fake.FailNext("RCPT", 550, "rejected "+testPassword)
			return newClient(t, fake, testPassword, logs)
		}},
		{"4xx reply", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t)
			fake.FailNext("DATA", 451, "later")
			return newClient(t, fake, testPassword, logs)
		}},
		{"421 and reconnection", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t)
			fake.InjectFault(sendlooptest.RelayFault{Command: "MAIL", Code: 421, Message: "bye " + testPassword, Times: 5})
			return newClient(t, fake, testPassword, logs, smtp.WithRetry(2, time.Millisecond))
		}},
		{"dropped after the final dot", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t)
			fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true})
			return newClient(t, fake, testPassword, logs)
		}},
		{"no TLS", func(logs *bytes.Buffer) *smtp.Relay {
			fake := startRelay(t, sendlooptest.RelayWithoutSTARTTLS(), sendlooptest.RelayInsecureAuth())
			r := newClient(t, fake, testPassword, logs)
			smtp.TreatLoopbackAsRemote(r)
			return r
		}},
		{"server echoes the credentials", func(logs *bytes.Buffer) *smtp.Relay {
			r, err := smtp.NewRelay(net.JoinHostPort(echoHost, strconv.Itoa(echoPort)), smtp.Auth{Username: testUser, Password: testPassword}, smtp.WithLogger(jsonLogger(logs)))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			client := tt.client(&logs)
			_, err := client.Send(testContext(t), personalizedMessage())
			if err == nil {
				t.Fatal("Send succeeded")
			}
			texts := map[string]string{
				"error %v":  fmt.Sprintf("%v", err),
				"error %+v": fmt.Sprintf("%+v", err),
				"error %#v": fmt.Sprintf("%#v", err),
				"logs":      logs.String(),
			}
			for what, text := range texts {
				for _, secret := range secretForms {
					if strings.Contains(text, secret) {
						t.Errorf("%s holds the password: %s", what, text)
					}
				}
			}
			if !strings.Contains(logs.String(), "send failed") {
				t.Errorf("the failure was not logged: %s", logs.String())
			}
		})
	}
}

// echoingServer offers AUTH PLAIN in clear text (allowed on loopback) and
// rejects it with a reply that repeats the credentials, as a hostile server
// could.
func echoingServer(t *testing.T) (string, int) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		listener.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
				tp := textproto.NewConn(conn)
				_ = tp.PrintfLine("220 echo ESMTP")
				for {
					line, err := tp.ReadLine()
					if err != nil {
						return
					}
					verb, arg, _ := strings.Cut(line, " ")
					switch strings.ToUpper(verb) {
					case "EHLO":
						_ = tp.PrintfLine("250-echo\r\n250 AUTH PLAIN")
					case "AUTH":
						_, payload, _ := strings.Cut(arg, " ")
						decoded, _ := base64.StdEncoding.DecodeString(payload)
						_ = tp.PrintfLine("535-5.7.8 bad credentials %s\r\n535 5.7.8 decoded %q", payload, decoded)
					case "QUIT":
						_ = tp.PrintfLine("221 bye")
						return
					default:
						_ = tp.PrintfLine("250 ok")
					}
				}
			}()
		}
	}()
	addr := listener.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port
}

func jsonLogger(w *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestRelayPrintedFormsRedactPassword(t *testing.T) {
	t.Parallel()
	client, err := smtp.NewRelay("smtp.example.com:587", smtp.Auth{Username: testUser, Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	auth := smtp.Auth{Username: testUser, Password: testPassword}
	var printed []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		printed = append(printed, fmt.Sprintf(verb, auth), fmt.Sprintf(verb, &auth))
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %[1]v"} {
		printed = append(printed, fmt.Sprintf(verb, client), fmt.Sprintf(verb, *client))
	}
	printed = append(printed, client.String(), client.GoString(), fmt.Sprint([]any{client, *client}))
	for _, v := range []any{auth, &auth, struct{ Relay smtp.Auth }{auth}} {
		dumped, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		printed = append(printed, string(dumped))
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	logger.Info("relay", "relay", client, "value", *client)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("relay", "relay", client)
	printed = append(printed, logs.String())
	for _, text := range printed {
		if strings.Contains(text, testPassword) {
			t.Errorf("printed form holds the password: %s", text)
		}
	}
	if !strings.Contains(client.String(), "smtp.example.com:587") || !strings.Contains(logs.String(), "REDACTED") {
		t.Errorf("printed forms lack the address or the redaction marker: %s / %s", client, logs.String())
	}
}

func TestRelayConcurrentSends(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	ctx := testContext(t)
	const senders = 8
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := client.Send(ctx, &smtp.Message{
				From: "a@example.com", To: []string{fmt.Sprintf("user%d@example.com", i)},
				Subject: "n", Text: "{{N}}", Headers: smtp.Headers{MergeVars: map[string]any{"N": i}},
			})
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	seen := map[string]bool{}
	for _, m := range fake.Messages() {
		seen[m.RenderedText] = true
	}
	if len(seen) != senders {
		t.Errorf("relay rendered %d distinct messages, want %d: %v", len(seen), senders, seen)
	}
}

func TestRelayInvalidMessageSendsNothing(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	_, err := client.Send(testContext(t), &smtp.Message{From: "a@example.com", To: []string{"not an address"}, Text: "x"})
	var addrErr *smtp.AddressError
	if !errors.As(err, &addrErr) || addrErr.Field != "To" {
		t.Fatalf("err = %v, want *AddressError for To", err)
	}
	if fake.AuthAttempts() != 0 {
		t.Error("the client connected for an invalid message")
	}
	if _, err := client.Send(testContext(t), nil); err == nil {
		t.Error("Send(nil) succeeded")
	}
}

func TestNewRelayValidation(t *testing.T) {
	t.Parallel()
	good := smtp.Auth{Username: "u", Password: testPassword}
	tests := []struct {
		name, addr string
		auth       smtp.Auth
		opts       []smtp.Option
	}{
		{"empty host", ":587", good, nil},
		{"host with space", "a b:587", good, nil},
		{"port 0", "h:0", good, nil},
		{"port too big", "h:70000", good, nil},
		{"port not a number", "h:smtp", good, nil},
		{"no username", "h:587", smtp.Auth{Password: testPassword}, nil},
		{"no password", "h:587", smtp.Auth{Username: "u"}, nil},
		{"CR in password", "h:587", smtp.Auth{Username: "u", Password: testPassword + "\r\nQUIT"}, nil},
		{"unknown mechanism", "h:587", smtp.Auth{Username: "u", Password: testPassword, Mechanism: "CRAM-MD5"}, nil},
		{"bad local name", "h:587", good, []smtp.Option{smtp.WithLocalName("a b")}},
		{"no connections", "h:587", good, []smtp.Option{smtp.WithMaxConnections(0)}},
		{"negative retries", "h:587", good, []smtp.Option{smtp.WithRetry(-1, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := smtp.NewRelay(tt.addr, tt.auth, tt.opts...)
			if err == nil {
				t.Fatal("NewRelay accepted invalid settings")
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("error holds the password: %v", err)
			}
		})
	}
	for addr, want := range map[string]string{"[::1]:25": "[::1]:25", "smtp.example.com": "smtp.example.com:587", "[::1]": "[::1]:587"} {
		r, err := smtp.NewRelay(addr, good)
		if err != nil || r.Addr() != want {
			t.Errorf("NewRelay(%q) = %v, %v; want %s", addr, r, err, want)
		}
	}
}

// Compile-time check that the printed forms are implemented on values.
var (
	_ fmt.Stringer   = smtp.Relay{}
	_ fmt.GoStringer = smtp.Relay{}
	_ fmt.Formatter  = smtp.Relay{}
	_ slog.LogValuer = smtp.Relay{}
)
