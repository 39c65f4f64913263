package sendlooptest_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestRelayFaultReached: Reached is called each time its fault applies, as the command
// arrives and before the fault's Delay, so that a test can end its context while the client
// waits on that command.
func TestRelayFaultReached(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"MAIL", "RCPT", "DATA"} {
		t.Run(command+"/each time", func(t *testing.T) {
			t.Parallel()
			relay := relayTestStart(t)
			var reached atomic.Int32
			relay.InjectFault(sendlooptest.RelayFault{Command: command, Code: 451, Times: 2, Reached: func() { reached.Add(1) }})
			client := relayTestSession(t, relay)
			for range 2 {
				err := relayTestData(t, client, "Subject: x\r\n\r\nx\r\n")
				var smtpErr *gosmtp.SMTPError
				require.ErrorAs(t, err, &smtpErr)
				assert.Equal(t, 451, smtpErr.Code)
				require.NoError(t, client.Reset())
			}
			require.NoError(t, relayTestData(t, client, "Subject: x\r\n\r\nx\r\n"), "the fault is used up")
			assert.EqualValues(t, 2, reached.Load())
		})
		t.Run(command+"/before the delay", func(t *testing.T) {
			t.Parallel()
			relay := relayTestStart(t)
			reached := make(chan struct{})
			relay.InjectFault(sendlooptest.RelayFault{Command: command, Code: 451, Delay: time.Hour, Reached: func() { close(reached) }})
			client := relayTestSession(t, relay)
			sent := make(chan error, 1)
			go func() { sent <- relayTestData(t, client, "Subject: x\r\n\r\nx\r\n") }()
			select {
			case <-reached: // an hour before the reply
			case err := <-sent:
				t.Fatalf("answered before Reached was called: %v", err)
			}
			require.NoError(t, relay.Close(), "closing the relay ends the delay")
			assert.Error(t, <-sent)
		})
	}
	t.Run("CONNECT", func(t *testing.T) {
		t.Parallel()
		relay := relayTestStart(t)
		var reached atomic.Int32
		relay.InjectFault(sendlooptest.RelayFault{Command: "CONNECT", Code: 554, Reached: func() { reached.Add(1) }})
		conn, err := net.Dial("tcp", relay.Addr())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute)))
		greeting := make([]byte, 64)
		n, err := conn.Read(greeting)
		require.NoError(t, err)
		assert.Contains(t, string(greeting[:n]), "554")
		assert.EqualValues(t, 1, reached.Load())
	})
}

// TestRelayOpenConnections counts the connections open now: one once its greeting is read,
// none once every client has quit and the relay has ended their sessions.
func TestRelayOpenConnections(t *testing.T) {
	t.Parallel()
	relay := relayTestStart(t)
	assert.Zero(t, relay.OpenConnections())
	var clients []*gosmtp.Client
	for i := range 3 {
		clients = append(clients, relayTestClient(t, relay))
		assert.Equal(t, i+1, relay.OpenConnections(), "open once the greeting is read")
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, c.Quit())
		}()
	}
	wg.Wait()
	// The relay closes its side after its reply to QUIT: a poll, bounded far above the
	// milliseconds it takes.
	assert.Eventually(t, func() bool { return relay.OpenConnections() == 0 }, time.Minute, time.Millisecond)
	assert.Equal(t, 3, relay.Connections(), "Connections counts them all the same")
}
