package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	retry, checkErr := c.decideRetry(ctx, resp, err)
	// An answered attempt is settled even when the context ended before it was judged: what
	// became of it is in its status, which decideRetry has read (or, for a 429 or 503 whose
	// body was cut, which the cut did not change).
	st := callOf(ctx)
	st.waiting = retry || (err == nil && resp != nil) || refusedBeforeBody(err)
	if st.obs != nil {
		// An error judged retryable after the last attempt is not retried: retryablehttp
		// stops at RetryMax, and the observer is told what will happen.
		st.obs.attemptEnded(resp, err, retry && st.attempts <= c.rc.RetryMax)
	}
	return retry, checkErr
}

// decideRetry is checkRetry's decision.
func (c *Client) decideRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st := callOf(ctx)
	if st.client != nil {
		c = st.client // the retry loop is shared with derived clients: log and redact as the sender
	}
	c.logAttempt(ctx, st, resp, err)
	if err == nil && resp != nil {
		// An answer is judged whether the context has ended or not: a final one is the call's
		// result (the service has answered; a write it carried out must not be reported as
		// cut short), and only one that would be retried gives way to the context's end.
		retry := c.retryAnswer(st, resp)
		if retry && st.attempts > c.rc.RetryMax {
			return false, nil // the last attempt: its answer is final, as retryablehttp returns it
		}
		if ctxErr := ctx.Err(); retry && ctxErr != nil {
			return false, ctxErr
		}
		return retry, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if isLimiterError(err) {
			// The context ended while the attempt waited for the window or the limiter:
			// nothing was sent, which the error must keep saying (see mayHaveRun).
			return false, err
		}
		return false, ctxErr
	}
	retry := retryableError(err, st.class)
	if retry && mayHaveRun(err) {
		st.mayHaveRun(c.failed(st.command, st.attempts, err))
	}
	return retry, err
}

// retryAnswer tells whether an answer is to be retried, recording a gateway's doubt.
func (c *Client) retryAnswer(st *call, resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		wait, ok := RetryAfter(resp.Header, time.Now())
		return !ok || wait <= c.policy.MaxRetryAfter
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		if st.class == OneShot {
			return false // a one-shot write's caller reads this answer itself
		}
		st.noteGateway(c, resp)
		return true
	}
	// Everything else, a plain 500 above all (the service's answer to some bad input), is final.
	return false
}

// noteGateway records an answer from a gateway: the request reached a proxy and may have
// reached the service behind it.
func (st *call) noteGateway(c *Client, resp *http.Response) {
	// An *HTTPError, as OutcomeUnknownError.First is documented to be for a gateway.
	st.mayHaveRun(&HTTPError{Command: st.command, HTTPStatus: resp.StatusCode, Attempts: st.attempts,
		Reason: "answered by a gateway: the service behind it may have processed the request", pkg: c.pkg})
}

// retryableError tells whether a request that failed with err may be sent again.
func retryableError(err error, class Class) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	switch {
	// The caller's own deadline and cancellation are handled before this: a deadline error
	// seen here is a per-attempt timeout (http.Client.Timeout), which may be retried.
	case errors.Is(err, context.Canceled), isBodyTooLarge(err), isLimiterError(err),
		errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr):
		return false
	}
	if class == OneShot {
		return isDialError(err)
	}
	return true
}

// isDialError reports a failure to connect: nothing reached the service.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// backoff waits as the server asked on 429 and 503 (checkRetry has already refused waits
// over the cap), and otherwise exponentially with equal jitter.
func (c *Client) backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if wait, ok := RetryAfter(resp.Header, time.Now()); ok {
			return wait
		}
	}
	return Backoff(minWait, maxWait, attempt)
}

// Backoff is minWait·2^attempt capped at maxWait, of which the upper half is random.
func Backoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	wait := maxWait
	if attempt < 32 {
		if w := minWait << attempt; w > 0 && w < maxWait {
			wait = w
		}
	}
	half := wait / 2
	if half <= 0 {
		return wait
	}
	return half + rand.N(half+1)
}

// RetryAfter parses a Retry-After header given in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, true
		}
		if secs > int64(24*time.Hour/time.Second)*365 {
			secs = int64(24*time.Hour/time.Second) * 365
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// isBodyTooLarge reports an answer over the bound on a body, whatever the bound.
func isBodyTooLarge(err error) bool {
	var e bodyTooLargeError
	return errors.As(err, &e)
}
