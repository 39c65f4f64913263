package sendlooptest_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// relayTestSession returns a go-smtp client of relay, past STARTTLS and AUTH.
func relayTestSession(t *testing.T, relay *sendlooptest.Relay) *gosmtp.Client {
	t.Helper()
	client := relayTestClient(t, relay)
	if err := client.Auth(sasl.NewPlainClient("", relayTestUser, relayTestPassword)); err != nil {
		t.Fatal(err)
	}
	return client
}

func relayTestData(t *testing.T, client *gosmtp.Client, body string) error {
	t.Helper()
	if err := client.Mail("a@example.com", nil); err != nil {
		return err
	}
	if err := client.Rcpt("b@example.com", nil); err != nil {
		return err
	}
	w, err := client.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return err
	}
	return w.Close()
}

func TestRelayParsesStructureAndEncodings(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	client := relayTestSession(t, relay)
	// Built by hand, so that the fake's reading is tested on its own: an
	// encoded-word subject, a base64 text part, a quoted-printable HTML part
	// and an inline image in a multipart/related.
	raw := "From: a@example.com\r\n" +
		"To: b@example.com\r\n" +
		"Subject: =?utf-8?b?SGFsbG8gJU5BTUUlIOKAkyBHcsO8w59l?=\r\n" +
		"Message-ID: <hand-1@example.com>\r\n" +
		"X-SL-Merge-Vars: {\"%NAME%\":\"J\\u00fcrgen\",\"NAME\":\"<J\\u00fcrgen>\",\r\n \"VIP\":true}\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=outer\r\n" +
		"\r\n" +
		"--outer\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: base64\r\n" +
		"\r\n" +
		"SGkge3tOQU1FfX17eyNWSVB9fSwgVklQe3svVklQfX0=\r\n" +
		"--outer\r\n" +
		"Content-Type: multipart/related; boundary=inner; type=\"text/html\"\r\n" +
		"\r\n" +
		"--inner\r\n" +
		"Content-Type: text/html; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: quoted-printable\r\n" +
		"\r\n" +
		"<p>{{{NAME}}} / {{NAME}} =E2=80=93 <img src=3D\"cid:logo@example.com\"></p>\r\n" +
		"--inner\r\n" +
		"Content-Type: image/png\r\n" +
		"Content-ID: <logo@example.com>\r\n" +
		"Content-Disposition: inline; filename=\"logo.png\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n" +
		"\r\n" +
		"iVBORw==\r\n" +
		"--inner--\r\n" +
		"--outer--\r\n"
	if err := relayTestData(t, client, raw); err != nil {
		t.Fatal(err)
	}
	m := relay.Messages()[0]
	checks := []struct{ name, got, want string }{
		{"structure", m.Structure, "multipart/alternative(text/plain, multipart/related(text/html, image/png))"},
		{"subject", m.Subject, "Hallo %NAME% – Grüße"},
		{"message id", m.MessageID, "hand-1@example.com"},
		{"text", m.Text, "Hi {{NAME}}{{#VIP}}, VIP{{/VIP}}"},
		// The CRLF before a boundary belongs to the boundary.
		{"html", m.HTML, "<p>{{{NAME}}} / {{NAME}} – <img src=\"cid:logo@example.com\"></p>"},
		// %KEY% takes the value of the key '%KEY%'; {{NAME}} that of 'NAME',
		// HTML-escaped; {{{NAME}}} unescaped; sections render when truthy.
		{"rendered subject", m.RenderedSubject, "Hallo Jürgen – Grüße"},
		{"rendered text", m.RenderedText, "Hi &lt;Jürgen&gt;, VIP"},
		{"rendered html", m.RenderedHTML, "<p><Jürgen> / &lt;Jürgen&gt; – <img src=\"cid:logo@example.com\"></p>"},
		{"inline", m.Inline[0].ContentID + " " + m.Inline[0].Filename + " " + m.Inline[0].ContentType + " " + string(m.Inline[0].Data), "logo@example.com logo.png image/png \x89PNG"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(m.Attachments) != 0 {
		t.Errorf("attachments %+v, want none (the image is inline)", m.Attachments)
	}
}

func TestRelayFault421ClosesTheConnection(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	client := relayTestSession(t, relay)
	relay.FailNext("MAIL", 421, "4.3.2 going down")
	err := client.Mail("a@example.com", nil)
	var smtpErr *gosmtp.SMTPError
	if !errors.As(err, &smtpErr) || smtpErr.Code != 421 || smtpErr.EnhancedCode != (gosmtp.EnhancedCode{4, 3, 2}) || smtpErr.Message != "going down" {
		t.Fatalf("MAIL = %v, want 421 4.3.2 going down", err)
	}
	if err := client.Noop(); err == nil {
		t.Error("the connection is still open after 421")
	}
}

func TestRelayFaultDropAfterFinalDot(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	client := relayTestSession(t, relay)
	relay.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true})
	err := relayTestData(t, client, "Subject: x\r\n\r\nbody\r\n")
	var smtpErr *gosmtp.SMTPError
	if err == nil || errors.As(err, &smtpErr) {
		t.Fatalf("err = %v, want the connection lost with no reply", err)
	}
	if n := len(relay.Messages()); n != 1 {
		t.Errorf("%d messages kept, want 1: the message was read through its final dot", n)
	}
}

func TestRelayFaultDropAtMail(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	client := relayTestSession(t, relay)
	relay.InjectFault(sendlooptest.RelayFault{Command: "MAIL", Drop: true})
	if err := client.Mail("a@example.com", nil); err == nil || errors.As(err, new(*gosmtp.SMTPError)) {
		t.Fatalf("MAIL = %v, want the connection lost", err)
	}
}

func TestRelayConnectionsAndDrop(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	first := relayTestSession(t, relay)
	second := relayTestSession(t, relay)
	if n := relay.Connections(); n != 2 {
		t.Errorf("Connections = %d, want 2", n)
	}
	relay.DropConnections()
	for _, c := range []*gosmtp.Client{first, second} {
		if err := c.Noop(); err == nil {
			t.Error("a connection survived DropConnections")
		}
	}
	// The relay still listens.
	third := relayTestSession(t, relay)
	if err := relayTestData(t, third, "Subject: x\r\n\r\nbody\r\n"); err != nil {
		t.Fatal(err)
	}
	if n := relay.Connections(); n != 3 {
		t.Errorf("Connections = %d, want 3", n)
	}
}

func TestRelayCACertificatePEM(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(relay.CACertificatePEM()) {
		t.Fatal("no certificate in the PEM")
	}
	conn, err := net.DialTimeout("tcp", relay.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	client, err := gosmtp.NewClientStartTLS(conn, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Noop(); err != nil {
		t.Fatalf("the PEM does not verify the relay: %v", err)
	}
	if pem := relayTestStart(t, sendlooptest.RelayWithoutSTARTTLS()).CACertificatePEM(); len(pem) != 0 {
		t.Error("a relay without TLS has a certificate")
	}
}

func TestRelayImplicitTLSAndSize(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t, sendlooptest.RelayImplicitTLS(), sendlooptest.RelayMaxMessageBytes(1000))
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", relay.Addr(), relay.ClientTLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := gosmtp.NewClient(conn)
	defer client.Close()
	if err := client.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := client.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered over implicit TLS")
	}
	if size, ok := client.MaxMessageSize(); !ok || size != 1000 {
		t.Errorf("SIZE = %d %v, want 1000", size, ok)
	}
	if ok, _ := client.Extension("SMTPUTF8"); !ok {
		t.Error("SMTPUTF8 not offered")
	}
	if err := client.Auth(sasl.NewPlainClient("", relayTestUser, relayTestPassword)); err != nil {
		t.Fatal(err)
	}
	err = relayTestData(t, client, "Subject: x\r\n\r\n"+strings.Repeat(strings.Repeat("x", 70)+"\r\n", 30))
	var smtpErr *gosmtp.SMTPError
	if !errors.As(err, &smtpErr) || smtpErr.Code != 552 {
		t.Errorf("over SIZE: %v, want 552", err)
	}
	if _, err := sendlooptest.StartRelay(nil, "u", "p", sendlooptest.RelayImplicitTLS(), sendlooptest.RelayWithoutSTARTTLS()); err == nil {
		t.Error("implicit TLS without TLS accepted")
	}
}

func TestRelayKeepsMessagesOfTheSMTPPackage(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	sender := relayTestSender(t, relay)
	res, err := sender.Send(relayTestContext(t), &smtp.Message{
		From: "a@example.com", To: []string{"b@example.com"}, Subject: "Ünïcode", HTML: `<img src="cid:i@example.com">`,
		Inline:      []smtp.Inline{{ContentID: "i@example.com", ContentType: "image/gif", Data: []byte("GIF89a")}},
		Attachments: []smtp.Attachment{{Filename: "résumé.txt", Data: []byte("cv")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := relay.Messages()[0]
	if "<"+m.MessageID+">" != res.MessageID || m.Subject != "Ünïcode" || m.Attachments[0].Filename != "résumé.txt" ||
		m.Inline[0].ContentType != "image/gif" || m.Structure != "multipart/mixed(multipart/related(text/html, image/gif), text/plain)" {
		t.Errorf("captured %+v", m)
	}
}

// TestRelayGreetingFault refuses connections at the greeting, as a server
// refusing service does, in plain text and with implicit TLS; the next
// connection is served.
func TestRelayGreetingFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		implicit bool
		fault    sendlooptest.RelayFault
		wantCode int // 0: dropped without a reply
	}{
		{"554", false, sendlooptest.RelayFault{Command: "connect", Code: 554, Message: "5.7.1 no service for you"}, 554},
		{"421 after a delay", false, sendlooptest.RelayFault{Command: "CONNECT", Code: 421, Delay: 10 * time.Millisecond}, 421},
		{"dropped", false, sendlooptest.RelayFault{Command: "CONNECT", Drop: true}, 0},
		{"554 over implicit TLS", true, sendlooptest.RelayFault{Command: "CONNECT", Code: 554}, 554},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []sendlooptest.RelayOption
			if tt.implicit {
				opts = append(opts, sendlooptest.RelayImplicitTLS())
			}
			relay := relayTestStart(t, opts...)
			relay.InjectFault(tt.fault)
			dial := func() (*gosmtp.Client, error) {
				conn, err := net.DialTimeout("tcp", relay.Addr(), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				if tt.implicit {
					conn = tls.Client(conn, relay.ClientTLSConfig())
				}
				client := gosmtp.NewClient(conn)
				t.Cleanup(func() { client.Close() })
				return client, client.Hello("localhost")
			}
			_, err := dial()
			var smtpErr *gosmtp.SMTPError
			switch {
			case tt.wantCode == 0 && err == nil, tt.wantCode != 0 && (!errors.As(err, &smtpErr) || smtpErr.Code != tt.wantCode):
				t.Errorf("greeting: %v, want %d", err, tt.wantCode)
			}
			if _, err := dial(); err != nil {
				t.Fatalf("the next connection: %v", err)
			}
			if relay.Connections() != 2 {
				t.Errorf("%d connections counted, want 2", relay.Connections())
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Error("a CONNECT fault with a delay and no code was accepted")
		}
	}()
	relayTestStart(t).InjectFault(sendlooptest.RelayFault{Command: "CONNECT", Delay: time.Millisecond})
}
