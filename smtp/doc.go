// Package smtp sends email through the Sendloop SMTP relay and reads and
// writes the X-SL-* headers that carry per-message options. It uses only the
// standard library.
//
// # The relay
//
// The relay listens on ports 25 and 587 (PortSMTP, PortSubmission) of the
// host given in the Sendloop settings, with the username and password of the
// delivery settings of a sender address:
//
//	relay, err := smtp.NewRelay(host, smtp.PortSubmission, username, password)
//	...
//	err = relay.Send(ctx, &smtp.Message{
//		From:    "Ann <ann@example.com>",
//		To:      []string{"bob@example.net"},
//		Subject: "Hello %FIRSTNAME%",
//		Text:    "Hi {{FIRSTNAME}}!",
//		Headers: smtp.Headers{
//			MergeVars:  map[string]any{"%FIRSTNAME%": "Bob", "FIRSTNAME": "Bob"},
//			Tags:       []string{"welcome"},
//			TrackOpens: true,
//		},
//	})
//
// # Decisions where the service is silent
//
// Transport and authentication:
//   - Any port is accepted; only 25 and 587 are documented. There is no
//     implicit TLS (port 465): the connection is upgraded with STARTTLS
//     whenever the server offers it.
//   - Credentials are required, and are sent only over TLS, or in clear text
//     to a loopback host ("localhost", 127.0.0.0/8, ::1), for local test
//     relays. Otherwise Send fails with ErrInsecureAuth before AUTH.
//   - AUTH PLAIN is preferred, AUTH LOGIN used when it is the only one
//     offered; anything else is ErrNoAuthMechanism.
//   - The context given to Send bounds the dial and the whole session
//     (deadline on the connection, closed on cancellation); WithDialTimeout
//     bounds the dial alone (30 seconds by default).
//   - To, Cc and Bcc all become recipients (duplicates sent once); Bcc never
//     appears in the header. If the server rejects any recipient the send is
//     aborted (RSET, QUIT) before DATA, so nobody receives the message, and
//     the *SMTPError names that recipient.
//   - Server replies that end a send are *SMTPError, with the command, the
//     code (Temporary for 4xx, Permanent for 5xx) and the enhanced status.
//   - The password never appears in an error, a log line (WithLogger; silent
//     by default) or the printed form of a Relay (String, GoString, Format,
//     LogValue). A reply echoing it is redacted.
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
// Messages (Message):
//   - Text only is text/plain, HTML only text/html, both
//     multipart/alternative; attachments wrap that in multipart/mixed.
//     Bodies are UTF-8 quoted-printable and attachments base64, in lines of
//     at most 76 characters; headers are folded to 78 characters where
//     possible and never pass 998; line endings are CRLF. Subjects and
//     display names that need it are RFC 2047 encoded-words; attachment
//     names, RFC 2231 parameters.
//   - Addresses are checked with net/mail before anything is sent, and must
//     be ASCII (no SMTPUTF8): *AddressError.
//   - A Raw message is sent as is after the X-SL-* fields of Headers; if it
//     already carries one of those fields it is refused (ErrDuplicateHeader)
//     rather than silently sending two.
package smtp
