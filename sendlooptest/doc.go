// Package sendlooptest is an in-memory, loopback fake of the Sendloop service for tests,
// examples and local development: the v3 command API with its authentication (104, 103),
// unknown commands (101), response formats (100: json, xml and php), missing parameters
// (105 with ErrorFields) and the commands' own behaviour, answered as the real service does
// (numbers as strings, PHP-style JSON with empty objects written as []).
//
//	srv := sendlooptest.NewServer(t)
//	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
//
// NewServer and StartRelay take a TB, the part of testing.TB they use, so that a program
// serving the fake does not link the testing package; such a program calls Start, which
// returns an error instead of failing a test, and closes the server itself.
//
// It records every request (Requests), counts how many times each command really executed
// (Executions) and injects faults into the next calls of a command (InjectFault): an HTTP
// status with an optional Retry-After, a connection reset before or after the command ran,
// a delay, or a given ErrorCode.
//
// StartControl serves a control API beside the service's, under /_fake (ControlPrefix), with
// a key of its own: the relay's messages in the shape of Mailpit's API, the lists, their
// members and the webhook deliveries, and actions (confirm a pending subscriber, the events
// of SimulateEvents, reset to the seed), plus an inbox page for a browser. It is how a
// program in another language, or `sendloop fake`'s shell commands, see into the fake;
// Control lists its endpoints.
//
// WithLatency (and SetLatency) holds every answer back, API requests and relay replies
// alike, by a fixed delay plus a seeded random jitter: the way to see a job's behaviour
// over a real link, where the service is 20 to 150 ms away and the number of calls in
// flight decides the wall time rather than the CPU. Each request waits on its own, outside
// the server's lock, so concurrent requests overlap as they would there.
//
// Where the service's behaviour is not specified the fake decides, and says so here:
//   - API errors are answered with HTTP 200 unless a fault gives another status.
//   - Checks run in this order: response format (100), API key (104), client address (103),
//     command (101), required parameters (105), then the command's own checks.
//   - system.timezones.Get answers {"TimeZones": [names…]}; System.SystemDate.Get answers in UTC.
//   - The xml format wraps the envelope in <response>; keys that are not XML names, and list
//     elements, become <item> (with a key attribute for the former).
//   - account.info.update checks Username (113), Email (111), NewPassword (115: six
//     characters at least) and TimeZone (116) and applies nothing unless all pass.
//   - Subscriptions follow the specification's table. Single opt-in subscribes at once;
//     double opt-in holds the address as Confirmation Pending and puts a confirmation email
//     in the outbox (Outbox); Confirm completes it, posts the subscription webhook and, with
//     SubscriptionFinalAction 'Send Email', sends the welcome email. The subscription
//     webhook is posted on confirmation only, as the table says, not for single opt-in.
//   - Refusals: 118 unknown list, 111 malformed address, 114 suppressed address, 125 address
//     already Subscribed or pending, 127 not in the list, 135 unknown custom field, 121/136
//     bad or unknown segment, 116 other bad values. An Unsubscribed address may subscribe
//     again and keeps its SubscriberID.
//   - subscriber.unsubscribe has no ListID: it unsubscribes the address from every list
//     holding it (127 when none does), posting each list's unsubscription webhook.
//   - subscriber.update names the subscriber by SubscriberID when given, and EmailAddress is
//     then its new address; otherwise EmailAddress names it.
//   - subscriber.import subscribes at once (no opt-in email); an address already in the
//     list, or twice in the call, counts as a duplicate; a malformed, suppressed or
//     unknown-field row counts as failed. subscriber.browse pages 100 records by ascending
//     SubscriberID, every state included.
//   - Custom fields and segments have no command in the specification: DefineCustomField and
//     DefineSegment (a segment selects the subscribers whose field equals a value) make them,
//     and LoadSeed loads a whole account's lists, fields (with given IDs), segments,
//     subscribers in any state and suppressions from a Seed, the package's own format, which
//     `sendloop fake --seed FILE` reads as JSON (ReadSeed; testdata/seed-example.json).
//   - Webhooks are posted as the real service posts them: an XML document with root
//     sendloop_webservice holding action (Subscription or Unsubscription),
//     action_timestamp (Unix seconds) and a subscriber element whose children are the
//     record's keys, and no list ID (give each list's URLs its own, as package webhook
//     explains), labelled Content-Type application/x-www-form-urlencoded as PHP's curl
//     labels a string body. They are posted before the request that caused them is
//     answered; each delivery is tried up to three times with a 5s timeout
//     (SetWebhookPolicy) and recorded (Webhooks), its body printable with %v or %s.
//   - suppression.list.add is idempotent: adding the same address to the same list again
//     returns the existing entry's ID. Entries added through the API have Type 'Manual'.
//     suppression.list.get answers an empty list for an address that is not suppressed.
//   - The legacy endpoint (/api/index.php, legacy.go) reads POST FormValue_ fields
//     (form-encoded), GET bare names, and FormValue_Message (Entry > Message, nested elements
//     as bracket notation, <item key="…"> for name parts that are no XML names) by POST or
//     GET; anything else is code 1. Checks run: input form (1), key and client address (2),
//     command, then the command's own. Codes are answered as the APIError/APIErrorCode
//     struct with HTTP 200; where the legacy API has no code the answer is an XML-RPC fault:
//     -32601 for an unknown command or a listed one the fake does not simulate (the Report.*
//     functions), -32602 for a missing or unusable parameter (SubscriptionIP, Start, Days
//     over 1–3660, MediaType not image/*, MediaData not base64) and an unknown custom field.
//   - Legacy codes: 3 unknown list (Chart.ListActivity and Subscriber.Get/Update/Delete
//     too), 4 missing and 5 malformed address, 6 address already Subscribed or pending,
//     7 suppressed address, 8 address not in the list, 9 media over SetMaxMediaSize (1 MiB).
//     Subscriber.Get, Subscribers.Get, Subscriber.Update (custom fields) and
//     Subscriber.Delete are simulated with the v3 record's keys, the state spelled
//     'Waiting For Opt-In Confirmation'. Chart.ListActivity answers a struct whose Chart
//     member holds the chart document, counted from each record's latest subscription and
//     unsubscription dates; media URLs (srv.URL/media/<id>.<ext>) are not served.
//   - campaign.create stores a Draft. Version absent or 1 is the version 1 shape, 2 the
//     version 2 one, anything else 116. Checks run: required fields of the shape (105),
//     neither PlainContent nor HTMLContent (105), an address in FromName or ReplyToName
//     (137, the SDK's rule), a malformed FromEmail or ReplyToEmail (111), no target (138;
//     Recipients empty too), a malformed ID (116), an unknown list (139) or segment (140;
//     Recipients' <list>-<segment> must name a segment of that list), a customer ID that is
//     not a positive number (141; the fake has no customer accounts and takes any other), a
//     bad version 2 boolean (116), script, object, embed, applet or javascript: in the HTML
//     (145), then the unsubscription link (144, 146). Arrays may be sent as Name[], Name[n]
//     or Name.
//   - An unsubscription link is, in HTMLContent, an <a> whose href contains 'unsubscribe' in
//     any case (so %Link:Unsubscribe% and any …unsubscribe… URL); its text, markup removed
//     and entities decoded, must be longer than 3 characters (else 146); one such link is
//     enough. In PlainContent it is the %Link:Unsubscribe% tag or an http(s) URL containing
//     'unsubscribe'. Each content sent must hold one (else 144). HTMLContentWithIguana is
//     not checked.
//   - campaign.get, campaign.update and campaign.delete answer 106 for an unknown campaign.
//     campaign.update applies all or nothing (the create checks, blank values 116); target
//     arrays replace the current ones. A deleted campaign's activity stays for the exports.
//   - The fake's clock is the host's (time.Now) unless WithClock or SetClock sets one;
//     nothing else moves it.
//   - SimulateSend delivers a Draft at the server's clock (SimulateSendAt at an earlier
//     time) to the Subscribed members of its lists and segments that are neither
//     hard-bounced nor suppressed, each address once; the campaign becomes Sent, with
//     SendDate, SendTime and SendTimeZone in UTC. SimulateEvents records activity at
//     delivery + After and refuses an event after the clock's now: what recipients did over
//     days needs a delivery that many days ago. Unsubscriptions unsubscribe (webhook
//     included), bounces set BounceType, complaints suppress globally as 'FBL Report'. The
//     Campaign counts are all-time.
//   - The 20-day window counts events whose UTC date is one of the delivery date and the 19
//     dates after it. It applies to opens, forwards, openlocations, emailclients, bounces
//     and spamcomplaints; webbrowserviews and unsubscriptions cover all time.
//   - Report members the specification only names: campaign TotalDelivered is recipients
//     less bounced ones; ratios are percentages (of recipients for delivery, of delivered
//     messages for opens and clicks) with two decimals; OpenAvg, LinkAvg and DeliveredAvg are
//     the account's averages of those ratios over its delivered campaigns, and the three
//     *Rate members this campaign's difference from them; the highest days are the dates
//     with the most opens or clicks. For a list: OpenPerformance and LinkPerformance count
//     unique opens and clicks of its recipients per campaign, summed; the Avg members divide
//     them by the campaigns that reached the list, the Rate members by its deliveries (as a
//     percentage); the highest days are weekday names. Open locations and email clients
//     count opens that carry a country or a client. spamcomplaints is a date → {Total,
//     Unique} object; unsubscriptions a date → {Unique} one.
//   - data.campaign.* pages all-time records oldest first; Limit is 1 to 50 (default 10) and
//     Page from 1 (default 1), else 116. openlocations lists opens that carry a country;
//     Channel is 'Link' unless the event gives one.
//   - export.unsubscriptions lists every Unsubscribed list member (of ListID, when given:
//     118 if unknown) with the campaign that unsubscribed it, or CampaignID 0.
//     export.bounces lists recorded bounces of BounceType 'hard' or 'soft' in any case
//     (else 119), as 'Hard' or 'Soft'. export.suppressionlist lists every entry, global or
//     of a list; export.spamcomplaints the recorded complaints.
//   - The person addresses take the key as the HTTP Basic user name or an APIKey parameter
//     (body or query), on all three; the wrong method is 405. Failures are answered as
//     {"Status":"Failed", ErrorCode, ErrorMessage, ErrorFields}. Track needs user_id and
//     email (105, 111 malformed), takes extrainfo as a JSON object (else 116) whose values
//     are kept as text, and counts Sessions; City and Country stay empty; extra attributes
//     named like the person's own keys are not echoed. Get answers 106 for an unknown user;
//     deleting an unknown user succeeds, as the delete is idempotent.
package sendlooptest
