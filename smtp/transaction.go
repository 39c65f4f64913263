package smtp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// attempt outcomes.
type outcomeKind int

const (
	done    outcomeKind = iota // delivered, or failed for good: no retry
	retry                      // nothing delivered, a temporary failure: may be sent again
	unknown                    // the final dot went out with no reply: never sent again
	stale                      // a reused connection was found closed before anything was sent
)

// deliver sends data, retrying temporary failures, and fills res.
func (r *Relay) deliver(ctx context.Context, env envelope, data []byte, res *SendResult, b *bulk, hs *hooked) {
	staleRetried := false
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			wait := r.backoff << (attempt - 1)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				res.Err = fmt.Errorf("sendloop/smtp: waiting to retry after %w: %w", res.Err, ctx.Err())
				return
			case <-t.C:
			}
		}
		if err := b.failed(); err != nil {
			res.Err = err
			return
		}
		if r.limiter != nil {
			if err := r.limiter.wait(ctx); err != nil {
				res.Err = fmt.Errorf("sendloop/smtp: waiting for the rate limit: %w", err)
				return
			}
		}
		s, err := r.acquire(ctx, b)
		if err != nil {
			res.Err = err
			r.slowDownOn(err)
			if !isTemporarySetup(err) || ctx.Err() != nil {
				return
			}
			if attempt >= r.maxRetries {
				return
			}
			continue
		}
		if err := b.failed(); err != nil {
			// The run stopped while this one waited for a connection.
			r.release(s)
			res.Err = err
			return
		}
		res.Attempts++
		kind, err := r.transact(ctx, s, env, data, res, attempt >= r.maxRetries, hs)
		var smtpErr *ReplyError
		if hs != nil && errors.As(err, &smtpErr) && smtpErr.Command == "MAIL" && smtpErr.Permanent() {
			// A 5xx to MAIL FROM is about the sender, not this message: the
			// hooked run stops before the connection goes to the next one.
			b.fail(&runStopped{cause: r.redact(err)})
		}
		r.release(s)
		res.Err = err
		if kind != stale {
			r.slowDownOn(err) // not the 421 of a connection the server closed while idle
		}
		if hs != nil && hs.dotOut && kind == retry {
			// A 4xx reply to the final dot: not delivered, and the message may
			// be sent again, by this run or the next.
			if jerr := hs.deferred(res); jerr != nil {
				res.Err = jerr
				return
			}
		}
		if refusedBeforeMail(err) {
			res.Attempts-- // the session's limits refused it: nothing went on the wire
		}
		if kind == stale && !staleRetried {
			staleRetried = true
			res.Attempts--
			attempt--
			continue
		}
		if kind == stale {
			kind = retry
		}
		if kind != retry || attempt >= r.maxRetries || ctx.Err() != nil {
			return
		}
		res.Accepted, res.Refused = nil, nil
		r.log(ctx, slog.LevelDebug, "smtp: temporary failure, will retry", slog.Int("attempt", attempt+1), slog.Any("error", r.redact(err)))
	}
}

// isTemporarySetup reports a connection failure worth another try: a dial
// or network error, or a 4xx reply to the greeting, EHLO or AUTH.
func isTemporarySetup(err error) bool {
	var smtpErr *ReplyError
	if errors.As(err, &smtpErr) {
		return smtpErr.Temporary()
	}
	var verifyErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var alertErr tls.AlertError
	switch {
	case errors.Is(err, ErrInsecureAuth), errors.Is(err, ErrNoAuthMechanism), errors.Is(err, ErrRelayClosed),
		errors.As(err, &verifyErr), errors.As(err, &recordErr), errors.As(err, &alertErr):
		return false
	}
	return true
}

// transact sends one message over s: MAIL, RCPT for each recipient, DATA.
//
// For a message of SendAllHooked (hs not nil), the hook is called after the
// content is written and before the final dot: a bulk send records the
// message in flight there, so that a crash from then on leaves it unknown,
// never sent again by a rerun.
func (r *Relay) transact(ctx context.Context, s *session, env envelope, data []byte, res *SendResult, last bool, hs *hooked) (kind outcomeKind, err error) {
	release := s.conn.bind(ctx)
	defer func() {
		if !release() {
			s.broken = true // ctx ended: the connection was closed under us
		}
	}()
	if hs != nil {
		hs.dotOut = false
	}
	reused := s.used > 0
	s.used++
	if s.maxSize > 0 && len(data) > s.maxSize {
		return done, &SizeError{Size: len(data), Limit: s.maxSize, Server: true}
	}
	if env.utf8 && !s.utf8 {
		return done, ErrSMTPUTF8Required
	}
	r.log(ctx, slog.LevelDebug, "smtp: mail", slog.String("from", env.from), slog.Int("bytes", len(data)))
	s.clean = false
	if err := s.client.Mail(env.from, &gosmtp.MailOptions{Size: int64(len(data)), UTF8: env.utf8}); err != nil {
		kind, err := r.replyError(ctx, s, "MAIL", "", err)
		var smtpErr *ReplyError
		if reused && s.broken && (!errors.As(err, &smtpErr) || smtpErr.Code == 421) && ctx.Err() == nil {
			// The server closed the connection while it was idle (maybe
			// with a 421, read now): nothing was sent, and the message goes
			// on a new one without counting an attempt.
			return stale, err
		}
		return kind, err
	}
	var temporary bool
	for _, rcpt := range env.rcpts {
		err := s.client.Rcpt(rcpt, nil)
		if err == nil {
			res.Accepted = append(res.Accepted, rcpt)
			continue
		}
		kind, err := r.replyError(ctx, s, "RCPT", rcpt, err)
		var smtpErr *ReplyError
		if s.broken || !errors.As(err, &smtpErr) {
			return kind, err // 421 or a lost connection: the transaction is gone
		}
		r.log(ctx, slog.LevelDebug, "smtp: recipient refused", slog.String("to", rcpt), slog.Int("code", smtpErr.Code))
		res.Refused = append(res.Refused, smtpErr)
		temporary = temporary || smtpErr.Temporary()
	}
	if len(res.Accepted) == 0 || (temporary && !last) {
		// Nothing is sent yet: end the transaction and retry if a refusal
		// was temporary.
		r.reset(s)
		rerr := &RecipientsError{Refused: res.Refused}
		if temporary {
			return retry, rerr
		}
		return done, rerr
	}
	w, err := s.client.Data()
	if err != nil {
		return r.replyError(ctx, s, "DATA", "", err)
	}
	if _, err := w.Write(data); err != nil {
		// The final dot is not out: nothing was delivered.
		s.broken = true
		return retry, r.ctxError(ctx, "DATA", err)
	}
	if hs != nil {
		if err := hs.beforeDot(res.MessageID); err != nil {
			// The final dot is not out: closing the connection abandons the
			// message, which is delivered to no one.
			s.broken = true
			return done, err
		}
		hs.dotOut = true
	}
	resp, err := w.CloseWithResponse()
	var goErr *gosmtp.SMTPError
	switch {
	case err == nil:
		res.Reply = parseReply(resp.StatusText, r.redactString)
	case errors.As(err, &goErr) && goErr.Code/100 == 2:
		// go-smtp wants 250, but any 2xx is a positive completion (RFC 5321,
		// section 4.2.1): the message was accepted.
		e := newReplyError("DATA", "", goErr, r.redactString)
		res.Reply = Reply{Code: e.Code, EnhancedCode: e.EnhancedCode, Message: e.Message}
	case errors.As(err, &goErr) && (goErr.Code/100 == 4 || goErr.Code/100 == 5):
		s.clean = true // the reply to the final dot ends the transaction
		return r.replyError(ctx, s, "DATA", "", err)
	case errors.As(err, &goErr):
		// Neither an acceptance nor a refusal: the message may or may not
		// have been delivered, and the session is out of step.
		s.broken = true
		return unknown, &outcome.Error{Prefix: "sendloop/smtp: the reply to the final dot was neither an acceptance nor a refusal",
			First: newReplyError("DATA", "", goErr, r.redactString)}
	default:
		s.broken = true
		return unknown, &outcome.Error{Prefix: "sendloop/smtp: the connection was lost after the final dot", First: r.ctxError(ctx, "DATA", err)}
	}
	s.clean = true
	if len(res.Refused) > 0 {
		return done, &RecipientsError{Refused: res.Refused, Delivered: true}
	}
	return done, nil
}

// replyError classifies the failure of a command: a reply becomes an
// *ReplyError (4xx: retry, 5xx: done; 421 also ends the connection), anything
// else a lost connection (retry).
func (r *Relay) replyError(ctx context.Context, s *session, command, recipient string, err error) (outcomeKind, error) {
	var goErr *gosmtp.SMTPError
	if errors.As(err, &goErr) {
		smtpErr := newReplyError(command, recipient, goErr, r.redactString)
		if smtpErr.Code == 421 {
			s.broken = true
		}
		if smtpErr.Temporary() {
			return retry, smtpErr
		}
		if command != "RCPT" {
			r.reset(s)
		}
		return done, smtpErr
	}
	s.broken = true
	return retry, r.ctxError(ctx, command, err)
}

// reset ends the transaction with RSET; a connection that fails it is not
// used again.
func (r *Relay) reset(s *session) {
	if s.broken {
		return
	}
	if err := s.client.Reset(); err != nil {
		s.broken = true
		return
	}
	s.clean = true
}

func parseReply(text string, redact func(string) string) Reply {
	reply := Reply{Code: 250}
	code, msg := stripEnhancedCode("", text)
	reply.EnhancedCode, reply.Message = code, redact(msg)
	return reply
}
