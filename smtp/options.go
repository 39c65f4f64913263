package smtp

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"
)

// Option configures a Relay.
type Option func(*Relay)

// WithTLSConfig sets the TLS configuration used for STARTTLS and implicit
// TLS, e.g. with RootCAs trusting a test server. It is cloned; an empty
// ServerName is set to the relay host.
func WithTLSConfig(config *tls.Config) Option {
	return func(r *Relay) {
		if config != nil {
			r.tlsConfig = config.Clone()
		}
	}
}

// WithImplicitTLS connects with TLS from the start (RFC 8314, usually port
// 465) instead of upgrading with STARTTLS. It is implied for port 465.
func WithImplicitTLS() Option {
	return func(r *Relay) { r.implicitTLS = true }
}

// WithAllowPlaintext lets the Relay authenticate and send without TLS when
// the server offers no STARTTLS. Without it that is refused
// (ErrInsecureAuth) unless the host is a loopback address.
func WithAllowPlaintext() Option {
	return func(r *Relay) { r.allowPlaintext = true }
}

// WithDialTimeout bounds the time to connect (30 seconds by default). The
// context given to Send bounds the dial and the whole session as well.
func WithDialTimeout(d time.Duration) Option {
	return func(r *Relay) { r.dialTimeout = d }
}

// WithLocalName sets the name sent with EHLO ("localhost" by default).
func WithLocalName(name string) Option {
	return func(r *Relay) { r.localName = name }
}

// WithLogger logs each step of a send, and its failure, at debug level, and
// each delivered message at info level. Without it a Relay logs nothing.
func WithLogger(logger *slog.Logger) Option {
	return func(r *Relay) { r.logger = logger }
}

// WithMaxConnections bounds the connections open at once
// (DefaultMaxConnections, 4, by default): SendAll and concurrent Sends use
// up to that many in parallel.
func WithMaxConnections(n int) Option {
	return func(r *Relay) { r.maxConns = n }
}

// WithMaxMessagesPerConnection closes a connection after n messages and
// opens a new one (0, the default, means no limit). 1 opens a connection
// per message.
func WithMaxMessagesPerConnection(n int) Option {
	return func(r *Relay) { r.maxPerConn = n }
}

// WithRetry sets how many times a message is sent again after a temporary
// failure (DefaultMaxRetries), and the wait before the first retry
// (DefaultRetryBackoff), doubled for each next one. A message is never sent
// again once its final dot is out without a reply: that is
// ErrOutcomeUnknown.
func WithRetry(maxRetries int, backoff time.Duration) Option {
	return func(r *Relay) { r.maxRetries, r.backoff = maxRetries, backoff }
}

// WithMaxMessageSize refuses, before connecting, a message larger than n
// bytes as sent (*SizeError). 0, the default, leaves only the limit the
// server announces with SIZE, which is always respected.
func WithMaxMessageSize(n int) Option {
	return func(r *Relay) { r.maxSize = n }
}

// WithRate sends at most perSecond messages a second, with bursts of up to
// burst messages (at least 1) at once; each try of a message counts, a retry
// too. A 4xx reply of the server (421, 450, 451, 452, ...) halves the rate,
// at most once a second and down to 1/32 of perSecond, as well as being
// retried; after 5 seconds without one the rate doubles again, step by step,
// back to perSecond. A perSecond of 0, the default, means no limit. The
// limit is shared by everything the Relay sends: Send, SendAll and SendAllHooked.
func WithRate(perSecond float64, burst int) Option {
	return func(r *Relay) {
		r.rate, r.burst = perSecond, burst
	}
}

// MessageObserver is told of every message a Relay's Send or SendAll has finished with,
// sent or not: the hook for tracing and metrics (package
// github.com/go-sendloop/sendloop/otel implements it). It is called from the goroutine that
// sent the message and must be safe for concurrent use. It is given counts, sizes, the
// reply code and the outcome: never an address, a header, a body or the password.
type MessageObserver interface {
	MessageSent(ctx context.Context, m MessageEvent)
}

// MessageEvent describes one message a Relay has finished with.
type MessageEvent struct {
	// Recipients is how many recipients the envelope had; Accepted and Refused how many
	// the server took and refused at RCPT.
	Recipients, Accepted, Refused int
	// Size is the message's size in bytes as sent (0 when it could not be built).
	Size int
	// ReplyCode is the server's reply code to the final dot, 0 if none came.
	ReplyCode int
	// Attempts is how many times the message was sent.
	Attempts int
	// Outcome is one of the Outcome constants.
	Outcome string
	// Start and End bound the send.
	Start, End time.Time
}

// The outcomes of a MessageEvent: few, fixed names, fit for a metric's attribute.
const (
	OutcomeDelivered    = "delivered"     // accepted for every recipient
	OutcomePartial      = "partial"       // accepted for some recipients (ErrSomeRecipientsRefused)
	OutcomeUnknown      = "unknown"       // may or may not have been delivered (ErrOutcomeUnknown)
	OutcomeNotAttempted = "not_attempted" // never tried: the context ended first (ErrNotAttempted)
	OutcomeFailed       = "failed"        // refused, invalid or failed otherwise
)

// WithMessageObserver sets the MessageObserver told of every message. nil, the default,
// observes nothing.
func WithMessageObserver(o MessageObserver) Option {
	return func(r *Relay) { r.observer = o }
}
