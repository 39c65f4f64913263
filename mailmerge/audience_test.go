package mailmerge_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testAPI is a client of a fresh fake with nothing suppressed, for the tests whose send is
// not about who may be mailed.
func testAPI(t *testing.T) *sendloop.Client {
	t.Helper()
	c, _ := fakeAPI(t)
	return c
}

// fakeAPI starts a fake and returns a client of it, through a transport of the test's own.
func fakeAPI(t *testing.T) (*sendloop.Client, *sendlooptest.Server) {
	t.Helper()
	srv := sendlooptest.NewServer(t)
	tr := testkit.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	return c, srv
}

// audienceWorld is a fake whose list 7 holds, besides the Subscribed members given, one
// member in each state a send must not reach, and an address suppressed in the list and
// one everywhere.
func audienceWorld(t *testing.T, subscribed int) (*sendloop.Client, *sendlooptest.Server, *sendlooptest.Relay) {
	t.Helper()
	c, srv := fakeAPI(t)
	subs := []sendlooptest.SeedSubscriber{
		{Email: "unsub@example.com", Status: "Unsubscribed"},
		{Email: "bounced@example.com", BounceType: "Hard"},
		{Email: "pending@example.com", Status: "Confirmation Pending"},
		{Email: "listsupp@example.com"},
		{Email: "global@example.com"},
	}
	for i := range subscribed {
		subs = append(subs, sendlooptest.SeedSubscriber{Email: fmt.Sprintf("m%04d@example.com", i),
			Fields: map[string]string{"First Name": fmt.Sprintf("M%d", i)}})
	}
	require.NoError(t, srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{ID: 7, Name: "News",
		CustomFields: []sendlooptest.SeedCustomField{{ID: 3, Name: "First Name"}}, Subscribers: subs}}}))
	_, err := srv.Suppress(7, "listsupp@example.com", "Manual")
	require.NoError(t, err)
	_, err = srv.Suppress(0, "GLOBAL@example.com", "FBL Report")
	require.NoError(t, err)
	fake, err := srv.StartRelay(t)
	require.NoError(t, err)
	return c, srv, fake
}

// worldRelay is a client of the world's relay.
func worldRelay(t *testing.T, srv *sendlooptest.Server, fake *sendlooptest.Relay) *smtp.Relay {
	t.Helper()
	user, pass := srv.RelayCredentials()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: pass}, smtp.WithTLSConfig(fake.ClientTLSConfig()))
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	return relay
}

func fatesByAddress(t *testing.T, res *mailmerge.Result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range []*mailmerge.RowList{&res.SuppressedRows, &res.NotSubscribedRows, &res.RejectedRows} {
		require.NoError(t, l.Each(func(r mailmerge.RowResult) error {
			out[r.Address] = r.Fate.String() + ": " + r.Reason
			return nil
		}))
	}
	return out
}

func TestSendReachesOnlyWhoMayBeMailed(t *testing.T) {
	t.Parallel()
	file := []string{"ann@example.com", "unsub@example.com", "Bounced@example.com", "pending@example.com",
		"listsupp@example.com", "global@example.com", "stranger@example.com", "m0000@example.com"}
	tests := []struct {
		name    string
		opts    mailmerge.Options
		sent    []string
		notSent map[string]string // address: fate and the start of its reason
	}{{
		name: "no list: only the global suppression applies",
		sent: []string{"ann@example.com", "unsub@example.com", "Bounced@example.com", "pending@example.com",
			"listsupp@example.com", "stranger@example.com", "m0000@example.com"},
		notSent: map[string]string{"global@example.com": "suppressed: on the account's global suppression list (FBL Report)"},
	}, {
		name: "a list: its suppressions and its members' status too",
		opts: mailmerge.Options{ListID: 7},
		sent: []string{"m0000@example.com"},
		notSent: map[string]string{
			"global@example.com":   "suppressed: on the account's global suppression list (FBL Report)",
			"listsupp@example.com": "suppressed: on list 7's suppression list (Manual)",
			"unsub@example.com":    "not subscribed: unsubscribed from list 7",
			"bounced@example.com":  "not subscribed: hard-bounced in list 7",
			"pending@example.com":  "not subscribed: confirmation pending in list 7",
			"ann@example.com":      "not subscribed: not a member of list 7",
			"stranger@example.com": "not subscribed: not a member of list 7",
		},
	}, {
		name: "a list, not-subscribed members included: suppressed addresses still not",
		opts: mailmerge.Options{ListID: 7, IncludeNotSubscribed: true},
		sent: []string{"ann@example.com", "unsub@example.com", "Bounced@example.com", "pending@example.com",
			"stranger@example.com", "m0000@example.com"},
		notSent: map[string]string{
			"global@example.com":   "suppressed: on the account's global suppression list (FBL Report)",
			"listsupp@example.com": "suppressed: on list 7's suppression list (Manual)",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv, fake := audienceWorld(t, 1)
			var rows []mailmerge.Row
			for i, a := range file {
				rows = append(rows, mailmerge.Row{Line: i + 2, Address: a, Values: map[string]string{"email": a}})
			}
			opts := tt.opts
			opts.API, opts.NoUnsubscribe = c, true
			mm, err := mailmerge.New(mailmerge.Rows([]string{"email"}, rows), &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"}, opts)
			require.NoError(t, err)

			check, err := mm.Check(testContext(t), mailmerge.CheckOptions{})
			require.NoError(t, err)
			suppressed, notSubscribed := 0, 0
			for _, v := range tt.notSent {
				if strings.HasPrefix(v, "suppressed") {
					suppressed++
				} else {
					notSubscribed++
				}
			}
			assert.Equal(t, len(tt.sent), check.Sendable, "the dry run counts what the send sends")
			assert.Equal(t, suppressed, check.Suppressed)
			assert.Equal(t, notSubscribed, check.NotSubscribed)
			assert.Len(t, check.FirstSuppressed, len(tt.notSent))

			// The zero budgets allow no reject: suppressed and not subscribed rows are none.
			res, err := mm.Send(testContext(t), worldRelay(t, srv, fake), mailmerge.SendOptions{})
			require.NoError(t, err)
			defer res.Close()
			var got []string
			for _, m := range fake.Messages() {
				got = append(got, m.EnvelopeTo...)
			}
			assert.ElementsMatch(t, tt.sent, got, "the relay got messages for these only")
			assert.Equal(t, tt.notSent, fatesByAddress(t, res))
			assert.Equal(t, suppressed, res.Tally.Suppressed)
			assert.Equal(t, notSubscribed, res.Tally.NotSubscribed)
			assert.Equal(t, res.Rows, res.Tally.Total(), "the fates add up to the rows")
			assert.Zero(t, res.Rejects())
		})
	}
}

// TestMembershipReadsFewCalls pins the cost of reading a file's addresses' state in a
// list: a few addresses against a big list are looked up one by one, many against a
// small list walk it.
func TestMembershipReadsFewCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		members, rows     int
		wantGets, wantMin int // subscriber.get calls; subscriber.browse calls at least
	}{
		{name: "3 rows, 1,005 members: 3 lookups", members: 1000, rows: 3, wantGets: 3},
		{name: "30 rows, 35 members: a walk", members: 30, rows: 30, wantMin: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv, _ := audienceWorld(t, tt.members)
			var rows []mailmerge.Row
			for i := range tt.rows {
				a := fmt.Sprintf("m%04d@example.com", i)
				rows = append(rows, mailmerge.Row{Line: i + 2, Address: a, Values: map[string]string{"email": a}})
			}
			mm, err := mailmerge.New(mailmerge.Rows([]string{"email"}, rows), &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"},
				mailmerge.Options{API: c, ListID: 7, NoUnsubscribe: true})
			require.NoError(t, err)
			check, err := mm.Check(testContext(t), mailmerge.CheckOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.rows, check.Sendable)
			assert.Equal(t, tt.wantGets, srv.Executions("subscriber.get"))
			if tt.wantMin == 0 {
				assert.Zero(t, srv.Executions("subscriber.browse"))
			} else {
				assert.GreaterOrEqual(t, srv.Executions("subscriber.browse"), tt.wantMin)
			}
			assert.Equal(t, 2, srv.Executions("suppression.list.getlist"), "one read of each suppression list")
		})
	}
}

// TestSendToAList is the list's send: 1,000 members, five of whom may not be mailed.
func TestSendToAList(t *testing.T) {
	t.Parallel()
	c, srv, fake := audienceWorld(t, 995)
	src, err := mailmerge.OpenList(testContext(t), c, 7)
	require.NoError(t, err)
	assert.Equal(t, []string{"EmailAddress", "SubscriberID", "ListID", "First_Name"}, src.Columns())
	tmpl := &smtp.Message{From: "a@example.com", Subject: "Hi {{{First_Name}}}", Text: "Hello {{{First_Name}}} ({{SubscriberID}})",
		ListUnsubscribe: []string{"https://example.com/u/{{SubscriberID}}"}, ListUnsubscribeOneClick: true}
	mm, err := mailmerge.New(src, tmpl, mailmerge.Options{})
	require.NoError(t, err)
	relay := worldRelay(t, srv, fake)
	journal := t.TempDir() + "/list.journal"
	res, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{Journal: journal})
	require.NoError(t, err)
	defer res.Close()
	assert.Equal(t, 1000, res.Rows)
	assert.Equal(t, 995, res.Tally.Done)
	assert.Len(t, fake.Messages(), 995)
	assert.Equal(t, map[string]string{
		"global@example.com":   "suppressed: on the account's global suppression list (FBL Report)",
		"listsupp@example.com": "suppressed: on list 7's suppression list (Manual)",
		"unsub@example.com":    "not subscribed: unsubscribed from list 7",
		"bounced@example.com":  "not subscribed: hard-bounced in list 7",
		"pending@example.com":  "not subscribed: confirmation pending in list 7",
	}, fatesByAddress(t, res))
	var m0 sendlooptest.RelayMessage
	for _, m := range fake.Messages() {
		if len(m.EnvelopeTo) == 1 && m.EnvelopeTo[0] == "m0000@example.com" {
			m0 = m
		}
	}
	assert.Equal(t, "Hi M0", m0.RenderedSubject, "a custom field by its name")
	assert.Regexp(t, `^<https://example\.com/u/\d+>$`, m0.Header.Get("List-Unsubscribe"), "each message its own URL")

	again, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{Journal: journal})
	require.NoError(t, err)
	defer again.Close()
	assert.Len(t, fake.Messages(), 995, "a rerun sends nothing")
	assert.Equal(t, 995, again.SkippedSent)
	assert.Equal(t, 5, again.Tally.Suppressed+again.Tally.NotSubscribed)
}

func TestBulkSendNeedsTheAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    int
		wantErr error
	}{
		{name: "two rows", rows: 2, wantErr: mailmerge.ErrNoAPI},
		{name: "one row", rows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake, relay := startRelay(t)
			var rows []mailmerge.Row
			for i := range tt.rows {
				rows = append(rows, mailmerge.Row{Address: fmt.Sprintf("r%d@example.com", i)})
			}
			mm, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"},
				mailmerge.Options{NoUnsubscribe: true})
			require.NoError(t, err)
			check, err := mm.Check(testContext(t), mailmerge.CheckOptions{})
			require.NoError(t, err, "a check sends nothing: it says what it could not read")
			assert.Equal(t, tt.wantErr != nil, check.AudienceUnread)
			res, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Empty(t, fake.Messages(), "refused before the first message")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, res.Tally.Done)
		})
	}
	_, err := mailmerge.New(mailmerge.Rows(nil, nil), &smtp.Message{From: "a@example.com"}, mailmerge.Options{ListID: 7})
	require.Error(t, err, "a list needs the API")
}

func TestAudienceReadFailsBeforeTheFirstMessage(t *testing.T) {
	t.Parallel()
	c, srv, fake := audienceWorld(t, 2)
	srv.InjectFault("suppression.list.getlist", sendlooptest.Fault{Status: 500})
	rows := []mailmerge.Row{{Address: "m0000@example.com"}, {Address: "m0001@example.com"}}
	mm, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"},
		mailmerge.Options{API: c, NoUnsubscribe: true})
	require.NoError(t, err)
	_, err = mm.Send(testContext(t), worldRelay(t, srv, fake), mailmerge.SendOptions{})
	require.Error(t, err)
	var httpErr *sendloop.HTTPError
	assert.True(t, errors.As(err, &httpErr), "the service's failure, as it came: %v", err)
	assert.Empty(t, fake.Messages())
}

// TestSuppressedRowsAreDecidedInTheJournal: a row suppressed in one run is recorded as
// decided, so that a rerun keeps its fate even when the account no longer suppresses it;
// an address suppressed after it was sent stays "already sent".
func TestSuppressedRowsAreDecidedInTheJournal(t *testing.T) {
	t.Parallel()
	c, srv, fake := audienceWorld(t, 2)
	relay := worldRelay(t, srv, fake)
	journal := t.TempDir() + "/news.journal"
	rows := []mailmerge.Row{{Address: "global@example.com"}, {Address: "m0000@example.com"}, {Address: "m0001@example.com"}}
	tmpl := &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"}
	first, err := mailmerge.New(mailmerge.Rows(nil, rows), tmpl, mailmerge.Options{API: c, NoUnsubscribe: true})
	require.NoError(t, err)
	res, err := first.Send(testContext(t), relay, mailmerge.SendOptions{Journal: journal})
	require.NoError(t, err)
	defer res.Close()
	require.Equal(t, 1, res.Tally.Suppressed)
	require.Equal(t, 2, res.Tally.Done)

	// The rerun reads another account, which suppresses m0000@ (sent already) and not
	// global@ (decided already).
	other, otherSrv := fakeAPI(t)
	_, err = otherSrv.Suppress(0, "m0000@example.com", "Manual")
	require.NoError(t, err)
	again, err := mailmerge.New(mailmerge.Rows(nil, rows), tmpl, mailmerge.Options{API: other, NoUnsubscribe: true})
	require.NoError(t, err)
	got := map[string]mailmerge.RowResult{}
	res2, err := again.Send(testContext(t), relay, mailmerge.SendOptions{Journal: journal,
		OnRow: func(r mailmerge.RowResult) { got[r.Address] = r }})
	require.NoError(t, err)
	defer res2.Close()
	assert.Len(t, fake.Messages(), 2, "the rerun sends nothing")
	assert.Equal(t, job.Suppressed, got["global@example.com"].Fate)
	assert.Equal(t, "on the account's global suppression list (FBL Report)", got["global@example.com"].Reason, "the first run's reason")
	assert.Equal(t, job.Skipped, got["m0000@example.com"].Fate)
	assert.Equal(t, mailmerge.SkipAlreadySent, got["m0000@example.com"].Skip)
	assert.Equal(t, job.Skipped, got["m0001@example.com"].Fate)
}

// TestCheckMessage: a message sent on its own is refused, before anything is sent, when one
// of its recipients is on the global suppression list, whatever the address's case or
// form; a list's own suppressions do not refuse it (only a send to that list reads them).
func TestCheckMessage(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	_, err := srv.Suppress(0, "GLOBAL@example.com", "FBL Report")
	require.NoError(t, err)
	require.NoError(t, srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{ID: 7, Name: "News"}}}))
	_, err = srv.Suppress(7, "listsupp@example.com", "Manual")
	require.NoError(t, err)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	require.NoError(t, err)
	tests := []struct {
		name    string
		msg     smtp.Message
		refused []string
	}{
		{name: "nobody suppressed", msg: smtp.Message{To: []string{"ok@example.com"}, Cc: []string{"listsupp@example.com"}}},
		{name: "a To in another case", msg: smtp.Message{To: []string{"global@EXAMPLE.com"}}, refused: []string{"global@EXAMPLE.com"}},
		{name: "a named Bcc, listed once", msg: smtp.Message{To: []string{"ok@example.com"}, Bcc: []string{"Gil <GLOBAL@example.com>", "GLOBAL@example.com"}},
			refused: []string{"GLOBAL@example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mailmerge.CheckMessage(t.Context(), c, &tt.msg)
			if tt.refused == nil {
				require.NoError(t, err)
				return
			}
			var refused *mailmerge.SuppressedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, tt.refused, refused.Addresses)
			for _, addr := range tt.refused {
				assert.Contains(t, refused.Reasons[addr], "global suppression list (FBL Report)")
				assert.Contains(t, err.Error(), addr)
			}
		})
	}
	t.Run("no client", func(t *testing.T) {
		t.Parallel()
		require.Error(t, mailmerge.CheckMessage(t.Context(), nil, &smtp.Message{To: []string{"ok@example.com"}}))
	})
}
