// Package sendloop is a typed client for the Sendloop email-marketing service's v3 command
// API (and its one v4 operation).
//
// Install it with go get github.com/go-sendloop/sendloop (Go 1.23 or newer), then:
//
//	client, err := sendloop.NewClient(os.Getenv("SENDLOOP_API_KEY"),
//		sendloop.WithBaseURL("https://acme.sendloop.com")) // the account's host; default: the generic one
//	if err != nil { … }
//	info, err := client.Account.Get(ctx)
//	listID, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInDouble})
//	res, err := client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{
//		EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.7"})
//
// The ID that scopes a call (the list, the campaign, the person) comes after the context;
// every other parameter is one <Resource><Verb>Params value, checked before anything is
// sent. NewClientFromEnv reads SENDLOOP_API_KEY and SENDLOOP_BASE_URL.
//
// Every command of the API is a method on one of the Client's services (Account, System, …)
// taking a context first; Client.Call reaches any other command. The companion packages are
// sendlooptest (an in-memory fake of the whole service, for tests and examples), legacy
// (the single-endpoint XML-RPC API), smtp (the relay's X-SL-* headers and a sender),
// personalize (merge variables) and webhook (the subscription callbacks).
//
// One Client reaches both APIs: Client.Legacy returns the legacy client built with it, on
// the same key, host, HTTP client, retries, rate limiter and logger; its own settings (the
// input form, …) are given with WithLegacyOptions. Subscribers.Unsubscribe, which leaves one
// list, goes through it.
//
// # Requests and responses
//
// Each command is a POST to {base}/api/v3/<command>/json with a form body; the API key is
// the body's APIKey field and never appears in a URL. Array parameters use the service's
// bracket notation (TargetListIDs[], Fields[CustomField7], Subscribers[0][EmailAddress]),
// booleans are sent as 1 or 0, and unset optional parameters are left out. The body's
// keys are sorted, so the same call always sends the same bytes.
//
// Responses are decoded tolerantly, because the service is loosely typed: numbers may come
// as numbers or strings ("12", "", null), unset dates as '0000-00-00' (the zero Date), empty
// objects as [] and lists with gaps as objects. Text fields are kept exactly as sent, and
// enum-like fields (SubscriptionStatus, BounceType, …) keep values this package does not
// know. Date-times carry no offset on the wire: DateTime holds the account's wall clock in
// UTC, and WallClockIn places it in a zone.
//
// # Errors
//
// A failure reported by the service is an *APIError with the service's ErrorCode; every
// code has a sentinel, so errors.Is(err, sendloop.ErrListNotFound) works, and errors.As
// gives the details. Parameters that the service would refuse are refused before anything
// is sent with a *ValidationError that matches the same sentinel (ErrMissingParameters for
// a missing required parameter, and so on). A response that is no envelope at all (an HTML
// error page, a truncated body, a non-2xx status) is an *HTTPError with a short, redacted
// excerpt of the body. Transport failures keep their cause, so errors.Is(err,
// context.DeadlineExceeded) works, and say which command failed after how many attempts.
//
// No error, log line or printed value contains the API key or a password.
//
// # Retries
//
// Requests are retried with jittered exponential backoff (RetryPolicy) according to what
// repeating them would do:
//
//   - reads (get, getlist, browse, search, report.*, data.*, export.*, system.*) and
//     idempotent writes (updates, subscribe, unsubscribe, import, delete, suppression add)
//     are retried after a dial error, a reset, a per-attempt timeout, 429, 502, 503 and 504;
//   - one-shot writes (list.create, campaign.create, People.Track) only after a dial error,
//     429 or 503, where the request surely was not processed, so that a retry never makes a
//     second list or campaign or records a second session.
//
// A plain 500 is never retried: the service answers some invalid input with it. Retry-After
// is honoured up to RetryPolicy.MaxRetryAfter; a longer wait fails at once with an
// *HTTPError carrying it. The context bounds the whole call, backoff waits included.
//
// Reading the response body is part of the attempt: a body that stalls past the per-attempt
// timeout (the Timeout of the client given to WithHTTPClient), breaks, or comes shorter
// than its Content-Length is a transport failure handled by the command's class, like a
// reset. A write whose request may have reached the service without an answer that proves
// its effect fails with an error matching ErrOutcomeUnknown.
//
// # Calls in flight
//
// A Client keeps a window of calls in flight, shared by everything it sends (ImportAll's
// workers, BrowseIter's pages read ahead, single calls, retries, and the calls of
// Client.Legacy). Until the service pushes back the window (1,024 calls) is far wider than
// any caller's concurrency and never binds. When the service answers 429 or 503, the window falls to
// half the calls then in flight (multiplicative decrease, once per round of calls), and
// every other answer widens it by one call per round of answers (additive increase), so
// that a client that was told to slow down sends fewer calls at once and then finds its
// pace again. This comes on top of the retries, which still wait as Retry-After says. The
// service's rate limits are not published: the SDK's default concurrency
// (ImportOptions.Concurrency) stays at 4.
//
// # Already done, and outcome unknown
//
// After an attempt that may have run (a reset after the request was written, a timeout, a
// broken body, a 502 or 504), the retry of a write can be answered "already exists" (125),
// "not found" (106 on campaign.delete) or "not subscribed" (127). Such an answer is settled
// by a read that can prove the intended end state: subscriber.get after Subscribe (which
// then reports SubscriberSubscribeResult.ConfirmedOnRetry), subscriber.get after
// Unsubscribe (the legacy code 8, "not in the list"; SubscriberUnsubscribeResult
// .ConfirmedOnRetry), subscriber.search after UnsubscribeFromAllLists, campaign.get after
// Campaigns.Delete. Proved, the call succeeds. Otherwise the error is an
// *OutcomeUnknownError: it matches ErrOutcomeUnknown and the first failure (a
// *TransportError, context.DeadlineExceeded), never ErrEmailExists, ErrNotFound or the
// legacy "not in the list", since that answer may be the call's own doing; the answer and
// the read-back's failure are in its Last and ReadBack fields and in its message. A one-shot
// write whose answer was lost, or that a gateway answered 502 or 504, fails the same way: it
// is not sent again, and only the caller can tell whether to check or repeat it.
// APIError.EarlierAttemptMayHaveRun tells Call users when to apply the same rule.
//
// # Redirects
//
// Every request carries the API key, so a request is never sent to another scheme, host or
// port than the base URL's. A POST never follows a redirect (it would also repeat a write);
// a GET (the People reads) follows one only within the base URL's origin, never from https
// to http. Any other redirect answer fails with an *HTTPError holding the 3xx status and
// naming the target's origin, never its path or query. The rule is applied on the Client's
// copy of a client given to WithHTTPClient, whose own CheckRedirect is not used and whose
// Transport still carries every attempt.
//
// # Paging
//
// Subscribers.BrowseIter and every CampaignData …Iter walk all pages as an iter.Seq2,
// holding one page at a time: they start from the params they are given (a copy), yield an
// error once and stop, stop after a short or empty page, and stop with an error on a page
// that repeats the previous one. BrowseIter reads ahead with SubscriberBrowseParams'
// Concurrency: up to N pages in flight and in memory, still yielded in order by the same
// rules, at most N-1 pages asked for past the end. Subscribers.Members walks the same pages
// by the same rules, decoding only a Member: the ID, address and status, and the custom
// fields asked for. Subscribers.ImportAll streams any number of rows the other way, in
// concurrent batches, and reports every row it could not import.
//
// # Testing with sendlooptest
//
// sendlooptest.NewServer(t) starts an in-memory fake of the whole service on loopback; point
// the client at it with WithBaseURL(srv.URL) and use srv.APIKey. It follows the service's
// behaviour where it is known, records every request, counts executions per command, and
// injects faults (statuses with Retry-After, resets before or after the command ran,
// delays, error codes), so that retries and outcome-unknown paths can be tested:
//
//	srv := sendlooptest.NewServer(t)
//	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
//	srv.InjectFault("list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
//
// # Decisions where the service's specification is silent
//
//   - The default base URL is the generic host https://app.sendloop.com; an account host
//     is selected with WithBaseURL. Plain http is refused except on loopback, unless
//     WithInsecureHTTP is given.
//   - system.timezones.Get's response is not specified: SystemService.TimeZones reads the
//     first list in the answer, whatever its member name, as names, name → label pairs or
//     objects. AccountService.Update does not consult it: the service judges a TimeZone
//     itself (116).
//   - A success response that lacks Success is accepted when the HTTP status is 2xx and no
//     ErrorCode is present.
//   - Nothing to change: every Update method (Account, Lists, Lists.UpdateSettings,
//     Subscribers, Campaigns) refuses an update with no field set before sending, with
//     ErrMissingParameters. The service may accept one (account.info.update's fields are
//     all optional) but it changes nothing, so such a call is taken for a mistake; Call
//     sends one anyway. In ListSettingsUpdateParams a nil field is left alone and a pointer to ""
//     clears the setting (a webhook URL, say).
//   - One vocabulary for the subscriber record, here and in the webhook package (whose
//     Event carries a Subscriber): an unset date ('0000-00-00') is the zero Date, the unset
//     IP '0.0.0.0' is kept as sent (string fields are opaque), unknown keys are kept in
//     Subscriber.Extra.
//   - Invalid UTF-8 in anything decoded (a JSON string or key, an XML document in UTF-8, a
//     webhook field) is replaced by U+FFFD byte by byte, as encoding/json does, in every
//     package of the module: a decoded string is valid text, and what is decoded survives
//     being encoded and decoded again unchanged.
//   - The API key's format is not published. NewClient trims it and refuses a key with
//     white space or control characters inside or shorter than 8 characters: a sanity floor
//     that catches a placeholder before the first request, not a rule of the service. The
//     base URL is the host and any proxy prefix: one ending in /api/v3, /api/v4 or
//     /api/index.php is refused, as the clients add the API's path themselves.
//   - Addresses are checked before sending by one rule shared with the legacy and smtp
//     packages and the CLI: a bare address (no display name) that net/mail reads, with a
//     host-name domain holding a dot (not "ann@localhost"), labels neither starting nor
//     ending with a hyphen, no address literal or quoted local part, RFC 5321 lengths (local
//     part 64, label 63, address 254 octets), internationalised domains accepted, nothing
//     that NormalizeAddress trims at either end (white space, a byte-order mark, a
//     zero-width space: never removed silently, the error says it is there).
//     ErrMissingParameters when empty, ErrInvalidEmailFormat otherwise, the reason in the
//     message; CheckAddress applies the rule alone. Campaign FromEmail and ReplyToEmail are
//     checked the same way.
//   - Lists.Get's custom fields (their record is not shown) are read from the keys
//     CustomFieldID, FieldName, FieldType, FieldDataType, FieldDefaultValue and
//     FieldOptions; any other key is kept in CustomField.Extra, structured values as JSON.
//   - subscriber.unsubscribe takes no ListID, so it takes the address out of every list
//     that holds it: Subscribers.UnsubscribeFromAllLists sends it. Subscribers.Unsubscribe
//     leaves one list, through the legacy API's Subscriber.Unsubscribe (Client.Legacy).
//   - subscriber.import answers with counts only. ImportAll refuses malformed rows before
//     sending and, when the service counts failures in a batch, resends the batch in halves
//     (rows already imported come back as duplicates) until each refused row is found; a
//     failure that does not recur is counted in ImportReport.Unattributed. It stops at the
//     first error every batch would get (103, 104, 118, 123, 147, 148, 149); the rows it
//     then never sent are ImportReport.NotAttempted, not failures. The rows of a call whose
//     every attempt may have run (the connection broke after the body was sent) are
//     ImportReport.Unknown, not failures either: they may have been imported.
//   - An import body lists ListID, then each row's EmailAddress and custom fields in row
//     order, rather than sorted like other bodies: it is written directly for speed.
//   - The command that returns one campaign is not named: CampaignsService.Get sends
//     campaign.get. Campaign.SendTime is a TimeOfDay ('HH:MM:SS', zero when unset);
//     CampaignStatus keeps values it does not know ('Sent' is what sendlooptest uses).
//   - A required ID sent as 0 is a missing parameter (105); a negative one, or one over the
//     int32 range, an invalid value (116). The same holds for the IDs in target arrays.
//   - Campaigns.Create and CreateV2 check before sending, in this order: missing fields
//     (105, all named), neither PlainContent nor HTMLContent (105), an email address in
//     FromName or ReplyToName (137: an address character, '@', and a run holding a dot with
//     a character before it and a non-dot after it; sendlooptest uses the same rule), no
//     target (138; for version 2 an empty Recipients is 138 too, after the specification's
//     "missing campaign recipients gives 138"), then bad IDs (116). CreateV2 always sends
//     Iguana, GoogleAnalyticsTracking and ECommerceTracking, as 1 or 0. Campaigns.Update
//     refuses an update with no field set (105) and cannot change content: the
//     specification lists no such parameter.
//   - Report members are named but not defined: counts are int, ratios, rates, averages and
//     OpenPerformance/LinkPerformance float64 (a trailing '%' accepted), the highest-rate
//     days the text sent. Daily reports are sorted by date, a date sent twice is summed.
//   - report.campaign.spamcomplaints' shape is not shown: SpamComplaintStats accepts a
//     date → {Total, Unique} or date → count object, overall Total/Unique members, a bare
//     count, an array of [address, date-time] pairs, and empty forms.
//   - data.campaign.*: a Limit over 50 or negative and a negative Page are refused before
//     sending (116). Record dates are DateTime and accept bare dates. The …Iter methods
//     stop after a short or empty page, and with an error on a page whose first record is
//     the previous page's first record.
//   - Exports.Bounces takes a BounceType (BounceHard/BounceSoft, or "hard"/"soft") and sends
//     it in lower case; anything else is refused with 119, an empty one with 105.
//     Exports.Unsubscriptions sends no ListID for 0 (every list).
//   - People.Get and Delete send the key as the user name of HTTP Basic authentication with
//     an empty password, never in the URL, where logs and proxies keep it; Track sends
//     APIKey in its form body like every command. extrainfo is one JSON object of string
//     attributes. A person answer fails when it carries an ErrorCode, Success false or a
//     Status other than Okay (an *APIError with Code 0 when no code is given). The Basic
//     credential is removed from error texts like the key.
package sendloop
