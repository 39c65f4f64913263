package sendlooptest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const (
	relayTestUser     = "relay-user"
	relayTestPassword = "relay-password"
)

func relayTestStart(t *testing.T, opts ...sendlooptest.RelayOption) *sendlooptest.Relay {
	t.Helper()
	relay, err := sendlooptest.StartRelay(t, relayTestUser, relayTestPassword, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return relay
}

// relayTestDial opens a textproto dialogue with relay, read past the
// greeting.
func relayTestDial(t *testing.T, relay *sendlooptest.Relay) *textproto.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", relay.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(conn)
	t.Cleanup(func() { tp.Close() })
	if _, _, err := tp.ReadResponse(220); err != nil {
		t.Fatal(err)
	}
	return tp
}

// relayTestCmd sends a command and returns the reply code and text.
func relayTestCmd(t *testing.T, tp *textproto.Conn, format string, args ...any) (int, string) {
	t.Helper()
	if err := tp.PrintfLine(format, args...); err != nil {
		t.Fatal(err)
	}
	code, msg, err := tp.ReadResponse(0)
	if err != nil && !errors.As(err, new(*textproto.Error)) {
		t.Fatal(err)
	}
	return code, msg
}

func relayTestClient(t *testing.T, relay *sendlooptest.Relay) *gosmtp.Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", relay.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	client, err := gosmtp.NewClientStartTLS(conn, relay.ClientTLSConfig())
	if err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func TestRelayAddress(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	if relay.Host() != "127.0.0.1" || relay.Port() == 0 || relay.Addr() != fmt.Sprintf("127.0.0.1:%d", relay.Port()) {
		t.Errorf("Host %q Port %d Addr %q", relay.Host(), relay.Port(), relay.Addr())
	}
	if relay.RootCAs() == nil {
		t.Error("no RootCAs")
	}
	if err := relay.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := relay.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", relay.Addr(), time.Second); err == nil {
		t.Error("relay still listening after Close")
	}
}

func TestRelayStartWithoutTestAndUnknownMechanism(t *testing.T) {
	t.Parallel()
	relay, err := sendlooptest.StartRelay(nil, relayTestUser, relayTestPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := relay.Close(); err != nil {
		t.Error(err)
	}
	if _, err := sendlooptest.StartRelay(nil, "u", "p", sendlooptest.RelayAuthMechanisms("CRAM-MD5")); err == nil {
		t.Error("StartRelay accepted CRAM-MD5")
	}
}

func TestRelayRefusesAuthBeforeSTARTTLS(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	tp := relayTestDial(t, relay)
	code, ehlo := relayTestCmd(t, tp, "EHLO client.test")
	if code != 250 || !strings.Contains(ehlo, "STARTTLS") || strings.Contains(ehlo, "AUTH") {
		t.Fatalf("EHLO before TLS = %d %q, want STARTTLS offered and no AUTH", code, ehlo)
	}
	payload := base64.StdEncoding.EncodeToString([]byte("\x00" + relayTestUser + "\x00" + relayTestPassword))
	if code, msg := relayTestCmd(t, tp, "AUTH PLAIN %s", payload); code/100 != 5 {
		t.Errorf("AUTH before STARTTLS = %d %q, want 5xx", code, msg)
	}
	if relay.AuthAttempts() != 0 {
		t.Errorf("AuthAttempts = %d", relay.AuthAttempts())
	}
}

func TestRelayRefusesMailBeforeAuth(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	client := relayTestClient(t, relay)
	err := client.Mail("a@example.com", nil)
	var smtpErr *gosmtp.SMTPError
	if !errors.As(err, &smtpErr) || smtpErr.Code != 530 {
		t.Fatalf("MAIL before AUTH = %v, want 530", err)
	}
	// Plain-text sessions get the same answer.
	tp := relayTestDial(t, relay)
	relayTestCmd(t, tp, "EHLO client.test")
	if code, _ := relayTestCmd(t, tp, "MAIL FROM:<a@example.com>"); code != 530 {
		t.Errorf("MAIL before AUTH in clear = %d, want 530", code)
	}
}

func TestRelayAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mechs    []string
		auth     sasl.Client
		wantCode int
	}{
		{"PLAIN", nil, sasl.NewPlainClient("", relayTestUser, relayTestPassword), 0},
		{"PLAIN with identity", nil, sasl.NewPlainClient(relayTestUser, relayTestUser, relayTestPassword), 0},
		{"PLAIN other identity", nil, sasl.NewPlainClient("admin", relayTestUser, relayTestPassword), 535},
		{"PLAIN wrong password", nil, sasl.NewPlainClient("", relayTestUser, "nope"), 535},
		{"PLAIN wrong user", nil, sasl.NewPlainClient("", "nobody", relayTestPassword), 535},
		{"PLAIN not offered", []string{"LOGIN"}, sasl.NewPlainClient("", relayTestUser, relayTestPassword), 504},
		{"LOGIN", []string{"LOGIN"}, &relayTestLogin{username: relayTestUser, password: relayTestPassword}, 0},
		{"LOGIN initial response", []string{"LOGIN"}, sasl.NewLoginClient(relayTestUser, relayTestPassword), 0},
		{"LOGIN wrong password", []string{"LOGIN"}, &relayTestLogin{username: relayTestUser, password: "nope"}, 535},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []sendlooptest.RelayOption
			if tt.mechs != nil {
				opts = append(opts, sendlooptest.RelayAuthMechanisms(tt.mechs...))
			}
			relay := relayTestStart(t, opts...)
			client := relayTestClient(t, relay)
			err := client.Auth(tt.auth)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Auth: %v", err)
				}
				if err := client.Mail("a@example.com", nil); err != nil {
					t.Errorf("MAIL after AUTH: %v", err)
				}
				return
			}
			var smtpErr *gosmtp.SMTPError
			if !errors.As(err, &smtpErr) || smtpErr.Code != tt.wantCode {
				t.Errorf("Auth = %v, want %d", err, tt.wantCode)
			}
		})
	}
}

// relayTestLogin is a minimal AUTH LOGIN client without an initial
// response, independent of the one in package smtp.
type relayTestLogin struct {
	username, password string
}

func (a *relayTestLogin) Start() (string, []byte, error) { return "LOGIN", nil, nil }

func (a *relayTestLogin) Next(challenge []byte) ([]byte, error) {
	switch string(challenge) {
	case "Username:":
		return []byte(a.username), nil
	case "Password:":
		return []byte(a.password), nil
	}
	return nil, fmt.Errorf("unexpected challenge %q", challenge)
}

func relayTestSender(t *testing.T, relay *sendlooptest.Relay) *smtp.Relay {
	t.Helper()
	sender, err := smtp.NewRelay(relay.Addr(), smtp.Auth{Username: relayTestUser, Password: relayTestPassword},
		smtp.WithTLSConfig(&tls.Config{RootCAs: relay.RootCAs()}), smtp.WithRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sender.Close() })
	return sender
}

func relayTestContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRelayCapturesAndRenders(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	msg := &smtp.Message{
		From:    "Shop <shop@example.com>",
		To:      []string{"ann@example.net"},
		Bcc:     []string{"audit@example.com"},
		Subject: "Für %NAME%",
		Text:    "Hallo {{NAME}}, {{#ITEMS}}{{.}} {{/ITEMS}}",
		HTML:    "<p>{{{HTML}}} / {{HTML}}</p>",
		Attachments: []smtp.Attachment{
			{Filename: "a.txt", Data: []byte("plain")},
			{Filename: "photo.png", Data: []byte{0x89, 'P', 'N', 'G'}},
		},
		Headers: smtp.Headers{
			MergeVars:   map[string]any{"%NAME%": "Jürgen", "NAME": "Jürgen", "ITEMS": []any{"tea", "cake"}, "HTML": "<b>x</b>"},
			CustomArgs:  map[string]any{"id": "7"},
			Tags:        []string{"de"},
			TrackClicks: true,
			TrackGA:     true,
		},
	}
	if _, err := relayTestSender(t, relay).Send(relayTestContext(t), msg); err != nil {
		t.Fatal(err)
	}
	got := relay.Messages()
	if len(got) != 1 {
		t.Fatalf("%d messages", len(got))
	}
	m := got[0]
	checks := []struct{ name, got, want string }{
		{"envelope from", m.EnvelopeFrom, "shop@example.com"},
		{"envelope to", strings.Join(m.EnvelopeTo, ","), "ann@example.net,audit@example.com"},
		{"user", m.Username, relayTestUser},
		{"subject", m.Subject, "Für %NAME%"},
		{"rendered subject", m.RenderedSubject, "Für Jürgen"},
		{"rendered text", m.RenderedText, "Hallo Jürgen, tea cake "},
		{"rendered HTML", m.RenderedHTML, "<p><b>x</b> / &lt;b&gt;x&lt;/b&gt;</p>"},
		{"header To", m.Header.Get("To"), "<ann@example.net>"},
		{"attachments", fmt.Sprintf("%s=%s %s=%q", m.Attachments[0].Filename, m.Attachments[0].Data, m.Attachments[1].ContentType, m.Attachments[1].Data), `a.txt=plain image/png="\x89PNG"`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if !m.TLS || !m.SLHeaders.TrackClicks || !m.SLHeaders.TrackGA || m.SLHeaders.TrackOpens || m.SLHeaders.CustomArgs["id"] != "7" {
		t.Errorf("TLS %v, X-SL headers %+v", m.TLS, m.SLHeaders)
	}
	if !bytes.HasPrefix(m.Raw, []byte("From: ")) {
		t.Errorf("raw message starts with %q", m.Raw[:20])
	}
	relay.Reset()
	if n := len(relay.Messages()); n != 0 {
		t.Errorf("%d messages after Reset", n)
	}
}

func TestRelayRejectsMalformedMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, wantText string
	}{
		{"bad tracking value", "Subject: x\r\nX-SL-Track-Opens: maybe\r\n\r\nbody\r\n", "X-SL-Track-Opens"},
		{"bad JSON", "Subject: x\r\nX-SL-Tags: [\"a\"\r\n\r\nbody\r\n", "X-SL-Tags"},
		{"bad template", "Subject: x\r\n\r\n{{#open}} never closed\r\n", "personaliz"},
		{"bad base64", "Subject: x\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!\r\n", "base64"},
		{"unknown encoding", "Subject: x\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbody\r\n", "x-uuencode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			relay := relayTestStart(t)
			_, err := relayTestSender(t, relay).Send(relayTestContext(t), &smtp.Message{
				From: "a@example.com", To: []string{"b@example.com"}, Raw: []byte(tt.raw),
			})
			var smtpErr *smtp.ReplyError
			if !errors.As(err, &smtpErr) || smtpErr.Command != "DATA" || smtpErr.Code != 554 || !strings.Contains(smtpErr.Message, tt.wantText) {
				t.Fatalf("err = %v, want DATA 554 mentioning %q", err, tt.wantText)
			}
			if n := len(relay.Messages()); n != 0 {
				t.Errorf("%d messages kept", n)
			}
		})
	}
}

func TestRelayFaults(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	sender := relayTestSender(t, relay)
	ctx := relayTestContext(t)
	send := func(to ...string) error {
		_, err := sender.Send(ctx, &smtp.Message{From: "a@example.com", To: to, Text: "x"})
		return err
	}
	relay.InjectFault(sendlooptest.RelayFault{Command: "rcpt", Recipient: "bad@example.com", Code: 550, Message: "no such user", Times: 2})
	relay.FailNext("MAIL", 421, "busy")

	steps := []struct {
		to            []string
		wantCode      int
		wantRecipient string
	}{
		{[]string{"ok@example.com"}, 421, ""},
		{[]string{"ok@example.com", "bad@example.com"}, 550, "bad@example.com"},
		{[]string{"ok@example.com"}, 0, ""},
		{[]string{"BAD@example.com"}, 550, "BAD@example.com"},
		{[]string{"bad@example.com"}, 0, ""},
	}
	for i, step := range steps {
		err := send(step.to...)
		if step.wantCode == 0 {
			if err != nil {
				t.Errorf("step %d: %v", i, err)
			}
			continue
		}
		var smtpErr *smtp.ReplyError
		if !errors.As(err, &smtpErr) || smtpErr.Code != step.wantCode || smtpErr.Recipient != step.wantRecipient {
			t.Errorf("step %d: err = %v, want %d for %q", i, err, step.wantCode, step.wantRecipient)
		}
	}
	// The second step delivered to ok@ and refused bad@.
	if n := len(relay.Messages()); n != 3 {
		t.Errorf("%d messages delivered, want 3", n)
	}
	for _, bad := range []sendlooptest.RelayFault{{Command: "QUIT", Code: 500}, {Command: "RCPT", Code: 250}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("InjectFault(%+v) did not panic", bad)
				}
			}()
			relay.InjectFault(bad)
		}()
	}
}

func TestRelayConcurrentUse(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	sender := relayTestSender(t, relay)
	ctx := relayTestContext(t)
	const n = 6
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			_, err := sender.Send(ctx, &smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
			}
		}(i)
		go func() {
			defer wg.Done()
			_ = relay.Messages()
			_ = relay.AuthAttempts()
		}()
	}
	wg.Wait()
	if got := len(relay.Messages()); got != n {
		t.Errorf("%d messages, want %d", got, n)
	}
}

func ExampleStartRelay() {
	relay, err := sendlooptest.StartRelay(nil, "user", "secret")
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()

	sender, err := smtp.NewRelay(relay.Addr(), smtp.Auth{Username: "user", Password: "secret"},
		smtp.WithTLSConfig(relay.ClientTLSConfig()))
	if err != nil {
		log.Fatal(err)
	}
	defer sender.Close()
	_, err = sender.Send(context.Background(), &smtp.Message{
		From:    "shop@example.com",
		To:      []string{"ann@example.net"},
		Subject: "Hi %NAME%",
		HTML:    "<p>Welcome, {{NAME}}!</p>",
		Headers: smtp.Headers{
			MergeVars: map[string]any{"%NAME%": "Ann", "NAME": "Ann"},
			Tags:      []string{"welcome"},
			TrackGA:   true,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range relay.Messages() {
		fmt.Println(m.RenderedSubject)
		fmt.Println(m.RenderedHTML)
		fmt.Println(m.SLHeaders.Tags, m.SLHeaders.TrackGA, m.TLS, m.AuthMechanism)
	}
	// Output:
	// Hi Ann
	// <p>Welcome, Ann!</p>
	// [welcome] true true PLAIN
}
