package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	netsmtp "net/smtp"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// terminalControls are the characters a terminal acts on: every C0 control, DEL, the C1
// controls in UTF-8, lone C1 bytes that are not UTF-8, and escape sequences that retitle
// the window, clear the screen or forge a line.
func terminalControls() map[string]string {
	out := map[string]string{}
	for b := range 0x20 {
		out[fmt.Sprintf("%#02x", b)] = string(rune(b))
	}
	out["0x7f"] = "\x7f"
	for r := rune(0x80); r <= 0x9f; r++ {
		out[fmt.Sprintf("U+%04X", r)] = string(r)
		out[fmt.Sprintf("byte %#02x", r)] = string([]byte{byte(r)})
	}
	out["OSC title"] = "\x1b]0;PWNED\a"
	out["clear screen"] = "\x1b[2J"
	out["forged line"] = "\nsendloop: relay: message from boss@example.com"
	return out
}

// rawControl returns the first control character of s that a terminal would act on
// (besides the line ends and tabs in allowed), or "".
func rawControl(s, allowed string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf("byte %#02x at %d", s[i], i)
		}
		if unicode.IsControl(r) && !strings.ContainsRune(allowed, r) {
			return fmt.Sprintf("%U at %d", r, i)
		}
		i += size
	}
	return ""
}

func TestPrintableEscapesEveryControl(t *testing.T) {
	t.Parallel()
	for name, c := range terminalControls() {
		in := "a" + c + "b"
		assert.Empty(t, rawControl(printable(in), ""), "%s: %q", name, printable(in))
		assert.Empty(t, rawControl(printableLines(in), "\n\t"), "%s: %q", name, printableLines(in))
	}
	tests := []struct{ in, want, lines string }{
		{"Grüße, Zoë ✓", "Grüße, Zoë ✓", "Grüße, Zoë ✓"},
		{"a\x1b]0;PWNED\ab", `a\x1b]0;PWNED\ab`, `a\x1b]0;PWNED\ab`},
		{"a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"a\u0085b\xffc\x7f", `a\u0085b\xffc\x7f`, `a\u0085b\xffc\x7f`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, printable(tt.in), "%q", tt.in)
		assert.Equal(t, tt.lines, printableLines(tt.in), "%q", tt.in)
	}
}

func FuzzPrintable(f *testing.F) {
	for _, c := range terminalControls() {
		f.Add("x" + c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := printable(s); rawControl(got, "") != "" {
			t.Fatalf("printable(%q) = %q", s, got)
		}
		if got := printableLines(s); rawControl(got, "\n\t") != "" {
			t.Fatalf("printableLines(%q) = %q", s, got)
		}
	})
}

// TestFakeLogAndClientsPrintNoRawControl: for every control character a request's path
// or a message can carry, the fake's log and its shell clients print none raw.
func TestFakeLogAndClientsPrintNoRawControl(t *testing.T) {
	t.Parallel()
	p := startFake(t, false, "--empty")
	hc := &http.Client{Transport: testkit.Transport()}
	controls := terminalControls()
	for name, c := range controls {
		// Before any key check: the command name comes from the path.
		resp, err := hc.Get(p.get(envBaseURL) + "/api/v3/x" + urlPathEscapeAll(c) + "y/json")
		require.NoError(t, err, name)
		resp.Body.Close()
	}

	// One message carrying every control in its subject (an encoded word), another
	// header and its text (the relay refuses a Message-ID that is not one).
	var all strings.Builder
	for _, c := range controls {
		all.WriteString(c)
	}
	pem, err := os.ReadFile(p.get(envSMTPCAFile))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	addr := p.get(envSMTPHost) + ":" + p.get(envSMTPPort)
	client, err := netsmtp.Dial(addr)
	require.NoError(t, err)
	defer client.Close()
	require.NoError(t, client.StartTLS(&tls.Config{RootCAs: pool, ServerName: p.get(envSMTPHost), MinVersion: tls.VersionTLS12}))
	require.NoError(t, client.Auth(netsmtp.PlainAuth("", p.get(envSMTPUser), p.get(envSMTPPassword), p.get(envSMTPHost))))
	require.NoError(t, client.Mail("shop@example.com"))
	require.Error(t, client.Rcpt("a\x1b[2Jb@example.com"), "the relay refuses a control in RCPT TO")
	require.NoError(t, client.Rcpt("ann@example.com"))
	w, err := client.Data()
	require.NoError(t, err)
	var qp strings.Builder
	for _, b := range []byte(all.String()) {
		fmt.Fprintf(&qp, "=%02X", b)
	}
	_, err = fmt.Fprintf(w, "From: shop@example.com\r\nTo: ann@example.com\r\nSubject: =?utf-8?q?Hi%s?=\r\n"+
		"Message-ID: <m1@example.com>\r\nX-Note: \x1b[2J\x07\x7f\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Content-Transfer-Encoding: quoted-printable\r\n\r\nHello=0A%s\r\n", qp.String(), qp.String())
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, client.Quit())

	r := invocation{args: []string{"fake", "messages"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{`\x1b]0;PWNED\a`, `\x1b[2J`, `\nsendloop: relay: message from boss@`}, nil)
	assert.Empty(t, rawControl(r.stdout, "\n"), "fake messages:\n%q", r.stdout)
	id := strings.Fields(strings.Split(r.stdout, "\n")[1])[0]
	r = invocation{args: []string{"fake", "message", id}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{`Subject: Hi`, `\x1b]0;PWNED\a`, `\x1b[2J`, "Hello\n"}, nil)
	assert.Empty(t, rawControl(r.stdout, "\n\t"), "fake message:\n%q", r.stdout)

	waitFor(t, "the relay's log line", func() bool { return strings.Contains(p.stderr.String(), "relay: message from") })
	waitFor(t, "the requests' log lines", func() bool { return strings.Count(p.stderr.String(), "api: GET x") >= len(controls) })
	assert.Empty(t, rawControl(p.stderr.String(), "\n"), "the fake's log:\n%q", p.stderr.String())
	assert.NotContains(t, p.stderr.String(), "\nsendloop: relay: message from boss@", "no forged line")
}

// urlPathEscapeAll percent-encodes every byte, so that the path carries it as is.
func urlPathEscapeAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
