// Package smtp sends email through the Sendloop SMTP relay and reads and
// writes the X-SL-* headers that carry per-message options. The client runs
// on emersion/go-smtp with go-sasl; messages are built with
// emersion/go-message.
//
// # The relay
//
// The relay listens on ports 25 and 587 (PortSMTP, PortSubmission) of the
// host given in the Sendloop settings, with the username and password of the
// delivery settings of a sender address. Make one Relay and close it when
// done: it keeps its connections open and sends many messages over each.
//
//	relay, err := smtp.NewRelay(host+":587", smtp.Auth{Username: user, Password: password})
//	...
//	defer relay.Close()
//	res, err := relay.Send(ctx, &smtp.Message{
//		From:    "Ann <ann@example.com>",
//		To:      []string{"bob@example.net"},
//		Subject: "Hello %FIRSTNAME%",
//		Text:    "Hi {{FIRSTNAME}}!",
//		Headers: smtp.Headers{
//			MergeVars:  smtp.MergeVars(map[string]string{"FIRSTNAME": "Bob"}), // %FIRSTNAME% and {{FIRSTNAME}}
//			Tags:       []string{"welcome"},
//			TrackOpens: true,
//		},
//	})
//	// res.MessageID: "<...@example.com>"; res.Reply: "250 2.0.0 Ok: queued as ..."
//
// SendAll sends a sequence (iter.Seq[*Message]) and yields one SendResult per
// message, in input order.
//
// # Sending a list
//
// SendAllHooked is SendAll with a Hook per message: a bulk job hears of each
// message's final dot before it goes out and of its outcome before it is
// yielded, and stops the whole run at a failure of the session (refused
// credentials, a 5xx to MAIL FROM, a relay that stays unreachable), the
// messages not sent matching ErrRunStopped. It is what package mailmerge
// sends through: the durable record of each row, which lets a rerun after a
// crash send no row twice, is mailmerge's.
//
// Decisions:
//   - Rate: WithRate(perSecond, burst) is a token bucket over every try of
//     every message of the Relay. A 4xx reply halves the rate (at most once
//     a second, down to 1/32) as well as being retried; 5 seconds without
//     one double it again, up to the rate asked for.
//
// NewRelayFromEnv makes the Relay from the variables the sendloop CLI reads
// (SENDLOOP_SMTP_HOST, _PORT, _USER, _PASSWORD and _CA_FILE, a PEM file of
// certificates to trust), so that one program sends through the real relay
// and through `sendloop fake`, which prints those variables and writes its
// relay's authority to the CA file. NewRelayFromLookup reads them through a
// function of the caller's.
//
// # Decisions where the service is silent
//
// Transport and authentication:
//   - Any port is accepted; only 25 and 587 are documented. The connection is
//     upgraded with STARTTLS whenever the server offers it. Implicit TLS
//     (RFC 8314) is used WithImplicitTLS, or for port 465. go-smtp says its
//     first EHLO, before STARTTLS, as "localhost"; the one after STARTTLS
//     uses WithLocalName.
//   - Credentials are required. Without TLS (the server offers no
//     STARTTLS), neither the credentials nor a message are sent, on any port
//     (ErrInsecureAuth, before AUTH), unless the host is a loopback address
//     ("localhost", 127.0.0.0/8, ::1: local test relays) or the Relay is made
//     WithAllowPlaintext.
//   - AUTH PLAIN is preferred, AUTH LOGIN used when it is the only one
//     offered (or Auth.Mechanism asks for it); anything else is
//     ErrNoAuthMechanism.
//   - 8BITMIME is declared when offered (go-smtp does; bodies are 7-bit
//     quoted-printable and base64 anyway). SMTPUTF8 is asked for when an
//     envelope address is not ASCII; a server without it gets nothing
//     (ErrSMTPUTF8Required). The SIZE the server announces is checked before
//     MAIL and sent with it (*SizeError, matching ErrMessageTooLarge, with
//     Server set); WithMaxMessageSize refuses larger messages before
//     connecting.
//   - The context bounds every step: the dial, each command and the wait for
//     each reply (go-smtp's own timeouts never pass its deadline), and its
//     cancellation closes the connection in use. Its error is returned,
//     wrapped for errors.Is. WithDialTimeout bounds the dial alone (30
//     seconds by default).
//
// Connections:
//   - A Relay keeps at most WithMaxConnections connections open at once (4,
//     DefaultMaxConnections); concurrent Sends and SendAll share them, so
//     that many messages go in parallel and each connection carries many
//     messages. WithMaxMessagesPerConnection closes a connection after n
//     messages (no limit by default).
//   - Between messages on a connection, RSET is sent where a transaction may
//     be open (the previous one was aborted) and, as a check, after two
//     seconds idle. After a transaction that reached the reply to its final
//     dot the server has cleared its state, and go-smtp follows an RSET with
//     a new EHLO: an RSET there would double the round trips for nothing.
//   - A connection the server closes (421, or dropped) is replaced. One
//     found closed when reused (dropped, or a 421 to its first command) is
//     replaced without counting an attempt, since nothing was sent.
//
// Retries and delivery:
//   - A temporary failure is retried, up to WithRetry's count (2 by
//     default) with a doubling wait (1 second first): a 4xx reply to MAIL,
//     RCPT, DATA or the final dot (421 included), a dial failure, a
//     connection lost before the final dot. A 5xx reply is final.
//   - A message is never delivered twice by a retry: once its final dot is
//     out, a lost connection or an ended context before the reply is
//     ErrOutcomeUnknown (the sentinel shared with the API packages), never
//     sent again. The result keeps the Message-ID to look it up by.
//   - To, Cc and Bcc all become recipients (duplicates, compared without
//     case, sent once); Bcc never appears in the header. When the server
//     refuses some recipients the message goes to the others: the result
//     lists Accepted and Refused (each with the server's reply), and the
//     error is a *RecipientsError matching ErrSomeRecipientsRefused. A 4xx
//     refusal is retried first, with the whole message (nothing was sent).
//     When every recipient is refused, nothing is sent.
//   - Server replies are *ReplyError: the command, the recipient for RCPT,
//     the code, the enhanced status and the text; errors.Is tells
//     ErrTemporary (4xx) from ErrPermanent (5xx).
//   - SendAll does not stop at a failed message. A setup failure that cannot
//     change (refused credentials, an untrusted certificate, no TLS) fails
//     the remaining messages without connecting again, so that a wrong
//     password is tried once, not once per message. Once its context ends,
//     every message not yet sent is still yielded, with ErrNotAttempted.
//   - The password never appears in an error, a log line (WithLogger; silent
//     by default) or the printed form of a Relay or an Auth (String,
//     GoString, Format, LogValue). A reply echoing it is redacted.
//
// X-SL headers (Headers.Fields, ParseHeaders):
//   - Empty CustomArgs, MergeVars and Tags produce no header; when present,
//     JSON objects are never null or [] and keys are sorted.
//   - Disabled tracking produces no header (absent means disabled); enabled
//     tracking produces "1".
//   - JSON is pure ASCII: every other character is written \uXXXX (surrogate
//     pairs above U+FFFF), so that no mailer rewrites the header as RFC 2047
//     encoded-words. <, > and & are not escaped: they mean nothing in a
//     header and stay readable.
//   - Tags, custom-argument keys and values, and merge-variable keys must not
//     contain control characters (CR, LF, NUL, tab, ...) or invalid UTF-8,
//     and must not be empty (custom-argument values may): *HeaderError
//     naming the header and key. Merge-variable values may hold any text
//     (JSON escapes it) but invalid UTF-8 in them becomes U+FFFD, as
//     encoding/json does.
//   - Custom-argument values are JSON scalars: strings, numbers, booleans and
//     null, both ways; an object, an array, NaN or an infinity is refused
//     (ErrNotScalar). ParseHeaders gives numbers back as json.Number, so that
//     no digit is lost.
//   - Long JSON headers are folded after commas outside strings; a single
//     string too long for a 998-character line is ErrLineTooLong.
//   - ParseHeaders accepts the spellings 1/true/on/yes and 0/false/off/no in
//     any case with surrounding spaces, RFC 2047 encoded-words, and folded
//     values; it decodes merge-variable numbers as json.Number, returns nil
//     for empty objects and arrays, and ignores unknown X-SL-* headers.
//     A header present twice is ErrDuplicateHeader.
//
// Messages (Message), built with go-message:
//   - Text only is text/plain, HTML only text/html, both
//     multipart/alternative (plain text first). Inline parts make the HTML a
//     multipart/related (type text/html) with them, each with its
//     Content-ID: alternative(text, related(html, images)). Attachments wrap
//     that in multipart/mixed. Bodies are UTF-8 quoted-printable, inline
//     parts and attachments base64; line endings are CRLF; header lines are
//     folded before spaces to 78 characters where the words allow and never
//     pass 998.
//   - Subjects, display names and extra header values with non-ASCII text
//     are RFC 2047 encoded-words; file names, RFC 2231 parameters.
//     Structured extra headers (In-Reply-To, References, List-*) must be
//     ASCII; In-Reply-To and References must hold <id@host> message IDs.
//   - ListUnsubscribe writes List-Unsubscribe (RFC 2369): http(s) URLs and
//     mailto: addresses, in angle brackets. Non-ASCII characters in them are
//     percent-encoded as UTF-8 (RFC 3987, section 3.1), so that
//     https://example.com/u?e=Zoë is written https://example.com/u?e=Zo%C3%AB. ListUnsubscribeOneClick
//     adds "List-Unsubscribe-Post: List-Unsubscribe=One-Click" (RFC 8058)
//     and needs an https URL.
//   - ExtraHeaders may not set what the builder writes (From, To, Cc, Bcc,
//     Reply-To, Subject, Date, Message-ID, MIME-Version, Content-*, X-SL-*):
//     ErrReservedHeader.
//   - A Message-ID is generated when none is given: 128 random bits at the
//     domain of From. Send returns it, with angle brackets.
//   - Everything is checked before connecting, each with a typed error
//     naming the part: addresses with the shared rule of the sendloop
//     packages (*AddressError), CR, LF or other controls in any header value
//     (*HeaderError), a content type that does not parse, a multipart type
//     or a charset other than UTF-8 for an inline part or attachment, an
//     inline part without an HTML body or with a Content-ID that is not
//     printable ASCII (*PartError). A Content-ID need not have the id@host
//     form of RFC 2392: a file name such as logo.png is accepted, since mail
//     clients resolve cid: URLs by the Content-ID as written.
//   - A Raw message is sent as is after the X-SL-* fields of Headers (and a
//     Message-ID when it has none); if it already carries one of those X-SL
//     fields it is refused (ErrDuplicateHeader) rather than silently sending
//     two.
package smtp
