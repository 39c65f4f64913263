package sendlooptest_test

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/textproto"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// controlCharacters are the characters a terminal acts on, as they can reach an SMTP
// command line: every C0 control but CR and LF (which end the line), DEL, the C1 controls
// in UTF-8, a lone C1 byte that is not UTF-8, and an escape sequence.
func controlCharacters() map[string]string {
	out := map[string]string{}
	for b := range 0x20 {
		if b != '\r' && b != '\n' {
			out[fmt.Sprintf("%#02x", b)] = string(rune(b))
		}
	}
	out["0x7f"] = "\x7f"
	for r := rune(0x80); r <= 0x9f; r++ {
		out[fmt.Sprintf("U+%04X", r)] = string(r)
	}
	out["byte 0x9b"] = "\x9b"
	out["ESC ] title BEL"] = "\x1b]0;PWNED\a"
	return out
}

// relayTestRawSession opens a textproto dialogue over implicit TLS, authenticated.
func relayTestRawSession(t *testing.T, relay *sendlooptest.Relay) *textproto.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", relay.Addr(), 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute)))
	tp := textproto.NewConn(tls.Client(conn, relay.ClientTLSConfig()))
	t.Cleanup(func() { tp.Close() })
	_, _, err = tp.ReadResponse(220)
	require.NoError(t, err)
	code, msg := relayTestCmd(t, tp, "EHLO client.test")
	require.Equal(t, 250, code, msg)
	payload := base64.StdEncoding.EncodeToString([]byte("\x00" + relayTestUser + "\x00" + relayTestPassword))
	code, msg = relayTestCmd(t, tp, "AUTH PLAIN %s", payload)
	require.Equal(t, 235, code, msg)
	return tp
}

// TestRelayRefusesControlCharactersInTheEnvelope: RFC 5321 allows no control character in
// a mailbox, and an envelope address is logged by `sendloop fake`: MAIL FROM and RCPT TO
// holding one are refused as a syntax error, and the session goes on.
func TestRelayRefusesControlCharactersInTheEnvelope(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t, sendlooptest.RelayImplicitTLS())
	tp := relayTestRawSession(t, relay)
	for name, c := range controlCharacters() {
		code, msg := relayTestCmd(t, tp, "MAIL FROM:<sh%sop@example.com>", c)
		assert.Contains(t, []int{501, 553}, code, "MAIL FROM with %s: %d %s", name, code, msg)

		code, msg = relayTestCmd(t, tp, "MAIL FROM:<shop@example.com>")
		require.Equal(t, 250, code, "a clean sender after %s: %s", name, msg)
		code, msg = relayTestCmd(t, tp, "RCPT TO:<an%sn@example.com>", c)
		assert.Contains(t, []int{501, 553}, code, "RCPT TO with %s: %d %s", name, code, msg)
		code, msg = relayTestCmd(t, tp, "RSET")
		require.Equal(t, 250, code, msg)
	}
	code, msg := relayTestCmd(t, tp, "MAIL FROM:<shop@example.com>")
	require.Equal(t, 250, code, msg)
	code, msg = relayTestCmd(t, tp, "RCPT TO:<ann@example.com>")
	assert.Equal(t, 250, code, "a clean envelope passes: %s", msg)
}
