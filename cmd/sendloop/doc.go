// Command sendloop is the command-line tool of sendloop-go, for CI jobs and scripts: it
// keeps Sendloop subscriber lists in step with CSV files, exports them, sends mail through
// the SMTP relay, makes raw API calls, shows reports and serves a local fake of the service.
//
//	go install github.com/go-sendloop/sendloop/cmd/sendloop@latest
//
// # Usage
//
//	sendloop [global flags] <command> [flags] [arguments]
//
// Flags go anywhere: global flags and the command's, before or after the command name and
// after its arguments (`sendloop sync --list 12 --csv subscribers.csv --json` is
// `sendloop --json sync --list 12 --csv subscribers.csv`); `--` ends the flags. Flags take one
// dash or two, and a value as `--name value` or `--name=value`. `sendloop help`,
// `sendloop -h` and `sendloop help <command>` (or `sendloop <command> -h`) print the help on
// stdout.
//
// Global flags:
//
//	--json         machine-readable output: JSON on stdout, errors as a JSON object on stderr
//	--fake         run against an in-process fake of the service holding the demo data below
//	--quiet        no progress and no notes on stderr (errors are still printed)
//	--verbose      log every API request (command, attempt, status, duration; never a body
//	               or a key) and SMTP step to stderr
//	--timeout DUR  give up after DUR (e.g. 30s, 10m); default: no limit
//	--otel         export the command's traces over OTLP/HTTP (see Tracing); default
//	               endpoint http://localhost:4318
//	--version      print the version and exit
//
// # Commands
//
//	sync    --list ID --csv FILE [--dry-run [--plan FILE|-]] [--unsubscribe-missing]
//	        [--rejects FILE] [--max-rejects N|N%] [--max-unknown N|N%] [--annotations auto|github|none]
//	        [--batch-size N] [--concurrency N] [--column SOURCE=TARGET]...
//	        [--ignore-column NAME]... [--ignore-unknown-columns] [--encoding ENC]
//	        [--delimiter CHAR] [--no-trim]
//	        keep a list in step with a CSV file
//	export  --list ID [--segment ID] [--format csv|json] [--excel] [--concurrency N]
//	        stream a list's (or a segment's) subscribers to stdout
//	send    --from ADDR (--to ADDR | --recipients FILE) --subject TEXT [--text FILE|-] [--html FILE|-]
//	        [--cc ADDR]... [--bcc ADDR]... [--inline CID=FILE]... [--attach FILE]...
//	        [--header 'Name: value']... [--list-unsubscribe URL|mailto] [--one-click]
//	        [--message-id ID] [--merge-vars JSON] [--custom-args JSON] [--tags a,b]
//	        [--track-opens] [--track-clicks] [--track-ga]
//	        [--recipients FILE.csv --journal FILE [--rate N] [--concurrency N] [--shard K/N]
//	        [--var NAME=VALUE]... [--default NAME=VALUE]... [--allow-empty NAME]...
//	        [--allow-tag NAME]... [--continue-from OLD] [--resend-unknown] [--resend-refused]
//	        [--max-rejects N|N%] [--max-unknown N|N%] [--dry-run | --preview DIR
//	        [--preview-rows N] | --test-to ADDR [--test-rows N] [--test-as-is]]]
//	        send a message through the SMTP relay, or one per row of a CSV file
//	call    [--format json|xml|php] COMMAND [key=value ...]
//	        send any v3 command and print its answer, JSON pretty-printed
//	lists   show the account's lists
//	report  campaign ID | list ID
//	        show a campaign's (report.campaign.overall) or a list's overall report
//	fake    [--addr 127.0.0.1:8080] [--smtp-addr 127.0.0.1:2525] [--empty | --seed FILE]
//	        [--ca-file FILE] [--listen-any] [--tls-name NAME]... [--latency D[,JITTER]]
//	        [--keep-messages N]
//	        serve the fake (HTTP API, SMTP relay, control API and inbox) until SIGINT or
//	        SIGTERM
//	fake    messages [--to ADDR] | message ID [--raw] | confirm EMAIL --list ID |
//	        event KIND EMAIL [--list ID] [--campaign ID] | reset | inbox
//	        call the control API of a running fake (SENDLOOP_FAKE_URL, SENDLOOP_FAKE_KEY)
//	version print the version (also --version; with --json, an object)
//
// `sendloop help <command>` describes each one in full.
//
// # Environment
//
//	SENDLOOP_API_KEY        the API key; required unless --fake. There is no flag for it, so
//	                        that it stays out of shell histories and process lists.
//	SENDLOOP_BASE_URL       the account's host, e.g. https://acme.sendloop.com; default
//	                        https://app.sendloop.com. The host only: a URL whose path ends in
//	                        /api/v3…, /api/v4… or /api/index.php is refused ("give the host
//	                        (and any proxy prefix) only"), by the SDK's rule; other path
//	                        prefixes (a proxy's) are kept. Plain http is refused except on
//	                        loopback.
//	SENDLOOP_INSECURE_HTTP  1 allows a plain http SENDLOOP_BASE_URL on another host, such as
//	                        a `sendloop fake --listen-any` reached by a CI service name (the
//	                        SDK's WithInsecureHTTP)
//	SENDLOOP_SMTP_HOST      the relay, for send
//	SENDLOOP_SMTP_PORT      default 587
//	SENDLOOP_SMTP_USER      a sender address's relay user name
//	SENDLOOP_SMTP_PASSWORD  and password
//	SENDLOOP_SMTP_CA_FILE   optional: a PEM file of certificates to trust for the relay's
//	                        STARTTLS, besides the system's (sendloop fake writes one)
//	SENDLOOP_JOURNAL_URL    a PostgreSQL database (postgres://user:password@host/db) of send
//	                        journals: --journal NAME names one in it instead of a file
//	SENDLOOP_STATE_URL      a PostgreSQL database of sync states: sync's --state NAME names
//	                        one in it instead of a file; the password of either is never
//	                        printed
//
// # Tracing
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the URL as it
// is) set, or with --otel, a command sends its traces over OTLP/HTTP (http/protobuf) to
// that collector: a span "sendloop <command>" (e.g. "sendloop sync"), the parent of a span
// per API call ("sendloop subscriber.import") and per relay message ("sendloop smtp.send"),
// as package otel records them, under the resource service.name "sendloop"
// (OTEL_SERVICE_NAME overrides it). OTEL_EXPORTER_OTLP_HEADERS (and …_TRACES_HEADERS)
// give the headers of each export, e.g. a backend's API key; OTEL_TRACES_EXPORTER=none
// turns the export off unless --otel is given. OTEL_EXPORTER_OTLP_PROTOCOL (or
// …_TRACES_PROTOCOL), when set, must be http/protobuf: any other protocol is refused
// (exit 2). The spans are flushed when the command ends, for at most 5 seconds; a
// collector that is down or refuses costs a one-line note on stderr, never the command's
// exit status. The endpoint and the headers' values are never printed.
//
// # Exit status
//
//	0    done
//	1    some rows failed (sync: rejected or refused rows, in a dry run too, beyond
//	     --max-rejects), or any other failure: an API or relay error, a network failure
//	2    usage, configuration or credentials: an unknown command or flag, a missing or
//	     invalid flag value or argument, an unreadable input file, a CSV header that does not
//	     fit the list, an environment variable unset or invalid, a key or account the
//	     service refuses (API codes 103, 104, 147, 148, 149; legacy code 2), relay
//	     credentials refused (SMTP 535)
//	130  interrupted by SIGINT
//	143  interrupted by SIGTERM (Unix; on Windows, closing the console window)
//
// # Output
//
// Results go to stdout: aligned tables, or with --json one JSON document (export: JSON
// Lines). Every key is snake_case: the tool's own documents (sync's plan and result, send's
// report) and the service's records alike (lists: list_id, name, opt_in_mode, …; reports:
// total_recipients, unique_opens_ratio, …; exported subscribers: email_address,
// subscriber_id, … with the custom fields in a "custom_fields" object keyed by their
// column names, which are data). Two exceptions: call prints the service's JSON unchanged,
// and fake's settings are keyed by the environment variables' names. Notes and progress go
// to stderr as text, each line prefixed with "sendloop: "; errors too, or with --json as one
// JSON object: {"error": "...", "kind": "usage"|"credentials"|"failure", "exit_code": 2,
// "api_command": "list.get", "api_error_code": 104, "help": "sendloop help sync"} (the last
// three when they apply; smtp_command and smtp_code for the relay). Only a usage mistake (a
// flag or argument the command refuses before any call) points at the help, as text with
// "Run 'sendloop help sync' for usage." and in JSON with "help"; other errors of exit code
// 2, such as a file that cannot be read or a guard's refusal, say what to change themselves.
// Messages are the tool's: the SDK's package prefixes (sendloop:, sendloop/smtp:) are not
// repeated.
//
// Progress is drawn on stderr only when it is a terminal (golang.org/x/term), cut to its
// width, redrawn ten times a second and erased when done; never with TERM=dumb, a pipe, a
// file or /dev/null, so CI logs hold no control characters.
//
// The API key and the relay password are never printed: the SDK removes them from its
// errors and logs, and call replaces the key with [REDACTED] should an answer hold it. The
// one exception is the fake command, whose purpose is to print the fake's own credentials.
//
// # The fake
//
// --fake runs any command against sendlooptest, the SDK's in-memory fake, started in the
// process and gone when the command ends (each invocation starts afresh). It holds:
//
//   - list 1 "Demo" (single opt-in) with the custom fields 1 "First name" and 2 "Plan";
//   - its subscribers ann@example.com (Ann, pro) and bob@example.com (Bob, free), and
//     carol@example.com (Carol, free), who unsubscribed;
//   - campaign 1 "Welcome" to list 1, delivered to Ann and Bob four hours before the fake
//     started: Ann opened it and clicked its link, Bob opened it, all before the start.
//
// The fake's clock is the host's.
//
// With --fake, send goes to a fake relay started in the process (trusted through its own
// certificate authority) and prints the message it captured, merge variables rendered.
//
// `sendloop fake` serves the same fake (with the same data unless --empty) on loopback
// ports for local development, and prints export lines a shell can source:
//
//	sendloop fake > fake.env &
//	. ./fake.env && sendloop lists
//
// It also prints SENDLOOP_FAKE_URL, SENDLOOP_FAKE_KEY and SENDLOOP_FAKE_INBOX: the control
// API (sendlooptest.Control; the relay's messages in the shape of Mailpit's API, lists,
// webhook deliveries, and actions: confirm, delete, events, reset), its own key, and a
// one-time URL of the inbox page for a browser. The fake's subcommands (messages, message,
// confirm, delete, event, reset, inbox) are shell clients of that API;
// docs/testing-with-the-fake.md shows it driven from Python and shell.
//
// With --seed FILE it starts with the data of a JSON seed instead: lists, custom fields
// with the IDs a program expects, segments, subscribers in any state and suppressions. The
// format is sendlooptest's own (sendlooptest.Seed documents it; its testdata holds
// seed-example.json), not the service's; a fault stops the command with exit code 2 before
// it prints its settings, named by its JSON path.
//
// # sync
//
// sync reads the list (list.get with its custom fields), then, all at the same time, its
// members (subscriber.browse, every state, --concurrency pages at once), the list's and the
// global suppression lists and the file, once, to plan; it prints the plan, and applies it: additions through subscriber.import (ImportAll, in
// batches of --batch-size, --concurrency at a time), then updates through subscriber.update
// (by SubscriberID, changed fields only), then, with --unsubscribe-missing, unsubscriptions
// through the legacy API's Subscriber.Unsubscribe.
//
// Memory holds the list's members (their addresses and the values of the fields the file
// maps) and 8 bytes per new address of the file, for the duplicate check; the rows are
// streamed, never held. The file is read once to plan, once more (only when it repeats
// addresses new to the list) to tell repetitions from hash collisions exactly, once to
// apply, and once more only when the service refused rows, to find their lines.
//
// # Decisions where the issue is silent
//
//   - Unsubscriptions use the legacy Subscriber.Unsubscribe, which takes the list's ID: the
//     v3 subscriber.unsubscribe has no ListID and would unsubscribe the address from every
//     list of the account. UnsubscriptionIP is sent as 0.0.0.0, the service's "unset"
//     address: no subscriber made the request. An address already gone from the list
//     (legacy code 8) counts as unsubscribed.
//   - sync refuses to unsubscribe when the file names no subscriber at all (an empty,
//     truncated or entirely invalid file must not empty the list): exit code 1. A member
//     whose row is rejected but still names the address (a wrong number of fields, invalid
//     UTF-8 in another field) is not unsubscribed either: a stray comma must not unsubscribe
//     anyone. And when any record cannot be parsed at all (a stray quote; a quoted field
//     left open swallows the lines after it), the addresses it hides are unknown, so sync
//     with --unsubscribe-missing refuses to run, dry run included: exit code 1.
//   - Rows the service refused without a line to show for them (subscriber.import counts
//     only totals) fail the run too: exit code 1, with a note saying how many.
//   - Members who unsubscribed are not subscribed again (subscriber.import would), and
//     addresses on the list's or the global suppression list are not added: both are counted
//     as skipped, not rejected, and do not change the exit code. Members pending a double
//     opt-in confirmation count as members: updated, never re-added, unsubscribed when
//     missing.
//   - Additions go through subscriber.import, which subscribes at once without a
//     confirmation email even on a double opt-in list; sync says so in a note.
//   - Header names: the address column is EmailAddress in any common spelling (Email,
//     E-mail, "Email Address", email_address, Mail, EmailAddr), compared without case,
//     spaces, '-', '_' and '.'; custom fields by CustomField<id> or the field's name,
//     case-insensitively, trimmed (a name shared by two fields must be given by key).
//     --column SOURCE=TARGET maps any column, whatever its name (TARGET: EmailAddress or a
//     field). A column given twice, an unnamed column, an unknown column or no address
//     column is a usage error that names them all; --ignore-column NAME skips one (and must
//     name a column of the file, so a typo shows), --ignore-unknown-columns skips every
//     unknown or unnamed one (an ambiguous field name is still an error).
//   - The read-only columns export writes (SubscriberID, SubscriptionStatus, BounceType,
//     SubscriptionDate, SubscriptionIP, UnsubscriptionDate, UnsubscriptionIP, OptInDate)
//     are accepted and ignored, so that an export syncs back; with a SubscriptionStatus
//     column only the rows whose status is Subscribed count, and the others are skipped:
//     they add, update and unsubscribe no one (a copy never resubscribes an opt-out, and a
//     list synced with its own export plans nothing).
//   - The delimiter: --delimiter if given; else Excel's "sep=X" first line (which is then
//     skipped, and line numbers still count it); else whichever of comma, semicolon and tab
//     occurs most often outside quotes in the header line (comma on a tie).
//   - Encodings: UTF-8 (a byte-order mark is skipped); UTF-16 LE or BE when the file starts
//     with its byte-order mark; latin1, windows-1252, utf-16le or utf-16be with --encoding (a
//     byte-order mark that disagrees with it is an error). A header that is not UTF-8 (or
//     looks like UTF-16 without its mark) is a usage error naming the encoding it looks like
//     (windows-1252 when it holds bytes 0x80–0x9F, else latin1). A later row holding invalid
//     UTF-8 is rejected rather than sent garbled, the reason naming --encoding. Quotes follow
//     RFC 4180 strictly: a stray quote rejects the row (a quoted field left open runs to the
//     end of the file, as in every CSV reader, and the reason names the lines). A quoted
//     value is kept byte for byte: a line break in it stays CRLF, LF or CR, as written.
//     (Package csvfile reads the file, for sync and send --recipients alike.)
//   - Values are trimmed of surrounding whitespace (spreadsheets pad cells); --no-trim keeps
//     it in custom fields. An empty cell empties the field of a member, and is not sent for
//     a new address. Addresses are always trimmed (sendloop.NormalizeAddress: white space,
//     a byte-order mark, zero-width spaces), checked as the SDK checks them, and
//     compared case-insensitively; the first row of an address wins, later ones are
//     rejected as duplicates naming its line. A rejected row keeps its address as written:
//     for a line the CSV reader cannot parse, the address column of its first line split
//     plainly, or the line itself, never an empty string.
//   - Rejects: `line,email,reason,outcome`, in file order for the rows refused before
//     sending (outcome `rejected`), then the rows the service refused (`refused`, import or
//     update) and those whose call may have run without an answer (`unknown`, counted
//     apart: no reject, settled by the same sync run again). The file gets its header even
//     when nothing is rejected, and may not be the CSV itself. Without --rejects the first
//     20 are printed on stderr. Unsubscriptions that fail, or whose outcome is unknown, are
//     printed on stderr (they are no row of the file) and make the exit code 1.
//   - A dry run reads the file twice too, to list its changes (additions in file order,
//     then updates, then unsubscriptions) and write the rejects; it never writes to the
//     service. As text it prints the plan's counts and the first 20 changes of each kind,
//     then "… and N more additions" (a dry run of 5,000 additions is about 30 lines, and
//     stops reading once it has shown them and seen every rejected row); --plan FILE (or -
//     for stdout, instead of the table) reads the file once more and writes every change
//     and every rejected row as CSV (listsync's Plan.WriteCSV),
//     action,line,email,subscriber_id,field,field_id,from,to,reason, in the file's order
//     then the unsubscriptions, one row per field set or changed, reason set on the
//     reject rows only; --json lists every change.
//   - --max-rejects N or N% (of the file's data rows, rounded up) is a reject budget:
//     rejected rows and rows the service refused (traced to a line or not) count; within
//     it the exit code is 0 and every reject is still reported, beyond it 1. A dry run
//     measures the planned rejects. The default 0 allows none; the guard's exit code 2
//     comes first. The JSON document's reject_budget says {"max": "5%", "allowed": 50,
//     "rejects": 3, "held": true} (allowed -1 for 100%).
//   - --max-unknown N or N% is the same budget for the rows of unknown outcome, which never
//     count against --max-rejects; beyond it the run exits 1 and says that the same sync
//     settles them. The JSON document's unknown_budget counts "unknown".
//   - GitHub Actions: with GITHUB_ACTIONS=true or --annotations github (none turns it off),
//     every rejected row is also a workflow command on stderr (so that --json's stdout stays
//     one document; the runner reads both streams), "::warning file=F,line=N::rejected
//     "ADDR": REASON", F relative to $GITHUB_WORKSPACE when the file is inside it, N the
//     record's first line, escaped as workflow commands require (%25, %0D, %0A; in F also
//     %3A and %2C). The first 10 only, as GitHub shows 10 warnings per step, then one
//     ::notice:: with the count of the rest. A Markdown summary (the plan's counts, the
//     result, the five most common reasons, "line N" folded; a few KiB at most) is
//     appended to $GITHUB_STEP_SUMMARY when it is set, also when the sync fails or is
//     refused. docs/github-actions.md shows a nightly workflow.
//   - Progress: only on a terminal (see Output); --quiet silences it there too. export shows
//     how many subscribers it has written.
//   - export reads up to --concurrency pages at once (4), in order, holding no more in
//     memory; the output is the same whatever the concurrency.
//   - export writes every subscriber in every state, values as the service sends them
//     ('0000-00-00' for an unset date). Custom-field columns are named as in the list, or
//     CustomField<id> when the name is empty, shared, or one of the record's own columns.
//     --format json writes JSON Lines (one object per line, streamable, jq-friendly) with
//     snake_case keys, the custom fields in "custom_fields", subscriber_id a number; it is
//     the default with --json. --excel (CSV only) adds a UTF-8 byte-order mark and prefixes
//     with ' every cell starting with =, +, -, @, a tab or a carriage return, so that a
//     spreadsheet shows it as text rather than running it (OWASP's CSV injection advice);
//     the quote stays in the data, so the plain export is the one to sync back.
//   - call: parameters are key=value (repeated keys send every value; bracket notation is
//     passed as is); an APIKey parameter is refused. Non-JSON formats print the body as is.
//   - report also shows `report list ID` (report.list.overall). Its table shows the
//     statistics in the service's order, an empty value as "-".
//   - send: --to may be repeated or comma-separated; --custom-args (X-SL-Custom-Args) is
//     offered beside the requested flags; a body may be a file or - (stdin, for one of the
//     two). Bad addresses or headers are usage errors. The relay's STARTTLS certificate is
//     verified against the system's roots plus SENDLOOP_SMTP_CA_FILE.
//   - fake: only loopback hosts (127.0.0.0/8, ::1, localhost) are accepted, unless
//     --listen-any, which prints a warning; --tls-name adds names to the relay's certificate
//     (sendlooptest.RelayTLSNames), the first being the host of the printed settings, which
//     then include SENDLOOP_INSECURE_HTTP=1. Port 0 picks a free one. The relay's CA certificate is written to a temporary file removed on exit,
//     unless --ca-file names where to keep it. It logs the API commands it serves and the
//     messages its relay accepts; its state is lost when it stops. SIGINT and SIGTERM stop
//     it with exit code 0.
//   - Missing or invalid configuration (the key, the base URL, the relay settings) and
//     credentials the service or the relay refuses are exit code 2: a CI job tells a
//     configuration problem from a failure.
//   - The version: a release binary's version and commit; the build's module version
//     (go install …@v1.2.3); for a build from a checkout, the version the go command took
//     from a tag or else the SDK's Version constant, and the VCS revision when the build
//     recorded it, with ", modified" for a dirty tree.
//   - send --recipients is a shell over package mailmerge, which holds the job: the
//     recipient file to messages (the row's address, a Name column giving the display
//     name, every other column a merge variable for both %COL% and {{COL}}; a header that
//     cannot be a tag's name is refused with a hint to rename it with --column
//     'First name=FIRST'), the check of every tag before the first message (exit code 2,
//     with the tag, its place and the nearest name), the rows rejected for an empty value
//     (--default, --allow-empty), --header and --list-unsubscribe rendered per row
//     (percent-encoded in the URL), the journal's binding (0.3.0's for the same flags), the
//     preview and the test send, and each row's fate. The CLI parses flags, prints, writes
//     annotations and decides the exit code; .ci/run fails if it imports personalize,
//     calls mailmerge.TemplateFingerprint or compiles a regular expression over "{{". A journal
//     written for another message is refused with the way on (--continue-from OLD
//     --journal NEW); one of another shard names both as --shard does. Exit code 1 when
//     any row is deferred or not attempted (a rerun sends it), when more rows than
//     --max-rejects allows (default 0) are rejected (a bad or missing address, a malformed
//     line, a duplicate: "duplicate of line N", an empty value, a message that cannot be
//     built) or refused, or more than --max-unknown allows (default 0) are of unknown
//     outcome, in this run or an earlier one; the report lists them with the reply the
//     journal recorded. --annotations and the GitHub step summary work as for sync:
//     "::warning file=F,line=N::rejected|refused|outcome unknown for "ADDR": REASON" (a
//     refusal given as the command and the reply, without the address, so that the
//     summary counts one reason for many rows), 10 then a notice. The --json report ends
//     with reject_budget and unknown_budget. The report's rows follow the file's order; at
//     most 1,000 of each kind are held in memory, the rest in an unlinked temporary file;
//     the journal and the duplicate check keep a few tens of bytes a row, and the
//     collector runs at GOGC 25, so that the peak RSS grows little with the file. A dry
//     run applies no budget: it renders the first messages, lists the %…% left as written
//     and counts the rows an empty value would reject.
//   - SIGINT and SIGTERM cancel any command (fake: stop it, exit code 0; send --recipients
//     starts no new row and gives the messages in flight 10s to finish, which a second
//     signal cuts short; sync does the same with --grace); the exit code is
//     then 130 after SIGINT and 143 after SIGTERM, as shells report a process the signal
//     ended. Windows has no SIGTERM: Ctrl-C and Ctrl-Break count as SIGINT (exit 130),
//     closing the console window, logging off or shutting down as SIGTERM (exit 143, if
//     the few seconds Windows allows suffice), and taskkill /F or the Task Manager end the
//     process at once, as SIGKILL does.
package main
