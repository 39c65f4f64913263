package sendlooptest

import (
	"crypto/tls"
	"net"
	"net/smtp"
	"testing"
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
		conn, err := net.Dial("tcp", r.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c, err := smtp.NewClient(conn, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		err = c.StartTLS(&tls.Config{RootCAs: r.RootCAs(), ServerName: name, MinVersion: tls.VersionTLS12})
		if (err == nil) != ok {
			t.Errorf("STARTTLS as %s: %v", name, err)
		}
		c.Close()
	}
}
