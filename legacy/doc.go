// Package legacy is a typed client for the Sendloop service's legacy single-endpoint API:
// every command goes to {base}/api/index.php, and every answer is an XML-RPC struct.
//
//	client, err := legacy.NewClient(os.Getenv("SENDLOOP_API_KEY"))
//	if err != nil { … }
//	res, err := client.SubscriberAdd(ctx, 3, legacy.SubscriberAddParams{
//		EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.7",
//	})
//
// Subscriber.Add, Subscriber.Unsubscribe, Chart.ListActivity, Media.Upload and
// Media.Browse have typed methods; Client.Call reaches the other functions (Subscriber.Get,
// Subscribers.Get, Subscriber.Update, Subscriber.Delete, Report.*) and returns the answer's
// Struct. The package shares its transport with the root package (retries, redaction,
// logging) but does not import it: lists are made with the v3 API (sendloop.Client), and
// both APIs act on the same account.
//
// A program using both APIs needs no second client: sendloop.Client.Legacy returns a
// Client that sendloop.NewClient builds with this package's NewSharedClient, handing it one
// Shared value: the root client's base URL, HTTP client (and with it the window of calls in
// flight and the connections), retries, rate limiter, logger and secrets, with its key.
// The settings of this package alone (WithInputForm, WithMaxMediaSize, WithMaxChartDays,
// WithSecrets) are then given to sendloop.NewClient with sendloop.WithLegacyOptions; an
// option for a setting the root client owns is refused there.
//
// # Input forms
//
// WithInputForm selects how a request carries its parameters:
//
//   - PostForm (the default): POST, form-encoded, each field prefixed FormValue_
//     (FormValue_APIKey, FormValue_Command, FormValue_Fields[EmailAddress], …).
//   - GetForm: GET with the bare names in the query string. It PUTS THE API KEY IN THE URL,
//     where proxies, access logs and monitoring keep it; use it only where POST is not
//     possible.
//   - MessageForm: POST with one field, FormValue_Message, holding the XML document
//     Entry > Message with APIKey, Command and the parameters as child elements.
//   - MessageGetForm: the same document in the query string of a GET (the key is in the URL
//     again).
//
// Fields are sorted by name in every form, so the same call always sends the same bytes.
//
// # Answers and errors
//
// Answers are decoded with encoding/xml into a Value (see Decode): every XML-RPC scalar
// (string, int, i4, boolean, double, dateTime.iso8601, base64), an untyped
// <value>text</value> as a string, structs (Struct, members in order) and arrays, to any
// depth up to 64. Value's accessors convert tolerantly (Int accepts "12"), because the
// service sends numbers as strings.
//
// A failure answer (members APIError and APIErrorCode) is an *Error with the legacy
// ErrorCode; every code 1–9 has a sentinel, so errors.Is(err, legacy.ErrEmailExists) works
// and errors.As gives the details. An XML-RPC <fault> is a *Fault. Parameters that the
// service would refuse are refused before anything is sent with a *ValidationError that
// matches the same sentinel where the service has a code (3, 4, 5, 9). A response that is
// no XML-RPC answer (an HTML page, a truncated body) or has a non-2xx status without a
// failure struct is an *HTTPError with a short excerpt of the body. Transport failures
// keep their cause (errors.Is(err, context.DeadlineExceeded) works).
//
// No error, log line or printed Client contains the API key, in any input form: the key is
// removed from error texts and URLs in each spelling it travels in (as is, query-escaped,
// XML-escaped inside the message document, and escaped once more where a server's XML echoes
// that document), and from answers, before and after they are decoded, should a server
// echo it.
//
// # Retries
//
// Requests are retried with jittered exponential backoff (RetryPolicy) according to what
// repeating them would do:
//
//   - reads (Chart.ListActivity, Media.Browse, and through Call the functions the
//     specification lists: Subscriber.Get, Subscribers.Get, every Report.*) and idempotent
//     writes (Subscriber.Add, Subscriber.Unsubscribe, and through Call Subscriber.Update
//     and Subscriber.Delete) are retried after a dial error, a reset, a per-attempt
//     timeout, 429, 502, 503 and 504;
//   - one-shot writes (Media.Upload) only after a dial error, 429 or 503, so that a retry
//     never stores an image twice.
//
// Each command's class is in the module's one command registry. A name the registry does
// not know, sent through Call, is taken for a read when it says so (Chart.* and Report.*,
// names ending in .Get or .Browse) and for a one-shot write otherwise, unless
// WithRetryClass says otherwise.
//
// A plain 500 is never retried. Retry-After is honoured up to RetryPolicy.MaxRetryAfter.
// Reading the body is part of the attempt, as in the root package.
//
// A one-shot command is sent as a POST whatever the input form (GetForm becomes PostForm,
// MessageGetForm becomes MessageForm): net/http sends a GET again by itself when a
// kept-alive connection dies before the answer, beneath any retry policy, and that would
// run the command twice. A POST is never replayed that way.
//
// After an attempt that may have run, a retried Subscriber.Add answered 6 (already exists)
// or Subscriber.Unsubscribe answered 8 (not in the list) is settled by reading the address
// with the v3 subscriber.get on the same host (the legacy API has no specified read that
// names a list): proved, the call succeeds (SubscriberAddResult.ConfirmedOnRetry);
// otherwise the error is an *OutcomeUnknownError, which matches ErrOutcomeUnknown and the
// first failure but not the answer 6 or 8 (kept in its Last field), as is the error of a
// Media.Upload whose answer was lost or answered 502 or 504.
//
// Redirects follow the root package's rule: a request carrying the key never leaves the
// base URL's origin, a POST never follows a redirect, and a GET only within the origin;
// anything else is an *HTTPError with the 3xx status naming the target's origin.
//
// # Decisions where the service's specification is silent
//
//   - The default base URL is the generic host https://app.sendloop.com, as for the v3 API;
//     plain http is refused except on loopback, unless WithInsecureHTTP is given.
//   - "URL-encoded" in the message form means the ordinary form encoding of the
//     FormValue_Message field: the document is encoded once.
//   - The message document is <?xml version="1.0" encoding="UTF-8"?><Entry><Message>, then
//     <APIKey>, <Command> and the parameters sorted by name, on one line. Bracket notation
//     nests: Fields[EmailAddress] and Fields[CustomField7] are
//     <Fields><CustomField7>…</CustomField7><EmailAddress>…</EmailAddress></Fields>. A name
//     part that is no XML name (a number, "item", anything beyond ASCII letters, digits,
//     '_', '-', '.') is <item key="…">, the empty part of a list (Tags[]) a bare <item>; a
//     parameter with several values repeats its element. A value holding a character XML
//     cannot carry is refused before sending.
//   - In PostForm a parameter named Message, and in GetForm one named FormValue_Message,
//     would be read as the message document: they are refused, as are parameters named
//     APIKey or Command (the client sets those).
//   - A failure struct whose APIErrorCode is 0 and whose APIError is empty is no failure.
//     An APIErrorCode that is not a number gives an *Error with code 0.
//   - XML-RPC decoding tolerates <i8> and <nil/>, empty numbers (0), booleans written
//     true/false, base64 with line breaks or without padding, dateTime.iso8601 in the
//     extended form, with fractional seconds or a zone (UTC when it names none), and
//     documents declared ISO-8859-1, US-ASCII or Windows-1252 (PHP's XML-RPC default is
//     ISO-8859-1). Only the first param of a methodResponse is read. Struct member names
//     need not be unique: Struct.Get returns the first.
//   - Client-side checks: ListID must be positive (else code 3); an empty address is code 4,
//     one that net/mail does not read as a bare address code 5; SubscriptionIP and
//     UnsubscriptionIP must be non-empty but are not parsed; custom field IDs must not be
//     negative.
//   - Chart.ListActivity sends Start as the date of the given time in its own location, and
//     Days (at least 1) as the number of days charted, Start included. The spec says the
//     answer is "an XML chart document": this package accepts it as the body itself, or as
//     a string member of the XML-RPC struct — the member named Chart (what sendlooptest
//     answers), else the first string member holding a document. ParseChart reads
//     data > tooltip, xaxis (xaxislabel), yaxis, series > set > serie (value, tooltip); a
//     set's label may be an attribute or a child, values are numbers (float64, "" is 0).
//     The y axis keeps its text as Axis.Title and its child elements as labels.
//   - Media.Upload: MediaData is the standard base64 encoding (with padding, no line
//     breaks). An empty MediaType is detected from the data; the type must be image/*.
//     Tags, a required field whose format is not shown, is sent comma-separated (empty
//     when there are none). The client refuses media over 1 MiB by default
//     (WithMaxMediaSize): the service's maximum is not published. MediaID is read as an
//     integer.
//   - Media.Browse answers MediaURL1 … MediaURL<n>: MediaBrowse orders them by number,
//     tolerating gaps, and ignores the other members.
//   - Status values are kept as sent, known or not.
//   - The User-Agent is "sendloop-go/legacy", after the product given to WithUserAgent.
package legacy
