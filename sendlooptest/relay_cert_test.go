package sendlooptest

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// TestRelayTLSNames checks that the relay's certificate verifies for the extra names, and
// still for loopback, and not for other names.
func TestRelayTLSNames(t *testing.T) {
	t.Parallel()
	r, err := StartRelay(t, "u", "p", RelayTLSNames("fake.ci.internal", " 10.1.2.3 ", ""))
	if err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{"fake.ci.internal": true, "10.1.2.3": true, "localhost": true, "127.0.0.1": true, "other.example": false} {
		conn, err := net.DialTimeout("tcp", r.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		c, err := gosmtp.NewClientStartTLS(conn, &tls.Config{RootCAs: r.RootCAs(), ServerName: name, MinVersion: tls.VersionTLS12})
		if err == nil {
			// The handshake happens with the first command after STARTTLS.
			err = c.Noop()
			c.Close()
		}
		if (err == nil) != ok {
			t.Errorf("STARTTLS as %s: %v", name, err)
		}
	}
}
