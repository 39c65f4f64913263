// Package livetest is the SDK's live smoke suite: tests that run against a real Sendloop
// account, to find what the fake (sendlooptest) and the decoders do not know of the
// service before a release. They are built only with the live build tag and run only when
// SENDLOOP_LIVE=1 is set beside SENDLOOP_BASE_URL and SENDLOOP_API_KEY, so that a
// production key that happens to be in the environment is never written to:
//
//	SENDLOOP_LIVE=1 SENDLOOP_BASE_URL=https://acme.sendloop.com SENDLOOP_API_KEY=… \
//		go test -tags live -count=1 -v ./livetest
//
// Without SENDLOOP_LIVE=1 every test skips and says why; `go test -tags live ./...` is
// safe anywhere. SENDLOOP_INSECURE_HTTP=1 allows a plain-http base URL that is not on this
// machine, as for the SDK.
//
// Use a test account. The service can delete neither a list nor a suppression entry, so
// the suite keeps to one list, which it names sendloop-live-test and creates on its first
// run (single opt-in: no confirmation mail goes out), and finds again by name with
// list.getlist on the next ones; it refuses to run when that list is double opt-in. Each
// run subscribes two new addresses, named after the time of the run, on the domain of
// SENDLOOP_LIVE_DOMAIN (default example.com, which receives no mail), so the list and the
// account's suppression list grow by two addresses a run.
//
// A run subscribes, gets, browses, updates (a new address) and searches; unsubscribes one
// address from the list (Subscribers.Unsubscribe, through the legacy API) and the other
// from all lists (Subscribers.UnsubscribeFromAllLists); reads the suppression lists, the
// list's report and the exports. It creates no campaign and sends no mail. Keys of an
// answer that the SDK's decoders do not read are written to the test log (with -v), not
// failed: they show what the service sends beyond the specification.
//
// CI runs the suite against `sendloop fake` in another process, so the suite itself is
// known to pass; RELEASING.md asks for a run against a real test account before a tag.
package livetest
