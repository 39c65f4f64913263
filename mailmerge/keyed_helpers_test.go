package mailmerge

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// The relay account of the keyed-sending tests; testPassword is a marker that no error or
// record may hold.
const (
	testUser     = "sender-42"
	testPassword = "MARKER-s3cr3t-PASSWORD-7f1c"
)

func startRelay(t *testing.T, opts ...sendlooptest.RelayOption) *sendlooptest.Relay {
	t.Helper()
	relay, err := sendlooptest.StartRelay(t, testUser, testPassword, opts...)
	require.NoError(t, err)
	return relay
}

// newClient returns a client of fake, trusting its certificate, with no retries unless a
// test asks.
func newClient(t *testing.T, fake *sendlooptest.Relay, password string, _ any, opts ...smtp.Option) *smtp.Relay {
	t.Helper()
	opts = append([]smtp.Option{smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithDialTimeout(2 * time.Second), smtp.WithRetry(0, 0)}, opts...)
	client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: password}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	return client
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// retrying is the retry policy of the fault tests: quick.
var retrying = smtp.WithRetry(2, time.Millisecond)
