package sendloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// Outcomes of a write whose first attempt ran and lost its answer.
const (
	succeeds  = "succeeds"  // retried; the retry's answer is success
	confirmed = "confirmed" // retried; "already done", proved by a read-back
	unknown   = "unknown"   // not retried (one-shot) or not provable: ErrOutcomeUnknown
)

// TestWritesAfterAnAttemptThatMayHaveRun runs every write command of the root and legacy
// packages against a connection reset after the command ran, and, where a read-back
// settles an "already done" answer, once more with that read-back failing.
func TestWritesAfterAnAttemptThatMayHaveRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command    string
		call       func(context.Context, *writeWorld) (confirmedOnRetry bool, err error)
		outcome    string
		executions int
		readBack   string // the command that settles "already done", if any
	}{
		{command: "account.info.update", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return false, w.c.Account.Update(ctx, sendloop.AccountUpdateParams{City: "Izmir"})
		}, outcome: succeeds, executions: 2},
		{command: "list.create", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			_, err := w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Other", OptInMode: sendloop.OptInDouble})
			return false, err
		}, outcome: unknown, executions: 1},
		{command: "list.update", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return false, w.c.Lists.Update(ctx, w.listID, sendloop.ListUpdateParams{Name: "Renamed"})
		}, outcome: succeeds, executions: 2},
		{command: "list.settings.update", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			subject := "Please confirm"
			return false, w.c.Lists.UpdateSettings(ctx, w.listID, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: &subject})
		}, outcome: succeeds, executions: 2},
		{command: "subscriber.subscribe", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			res, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
			if err != nil {
				return false, err
			}
			if res.SubscriberID == 0 || res.SubscriptionStatus != sendloop.StatusSubscribed {
				return false, errors.New("the read-back did not fill the result")
			}
			return res.ConfirmedOnRetry, nil
		}, outcome: confirmed, executions: 2, readBack: "subscriber.get"},
		{command: "subscriber.unsubscribe", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return true, w.c.Subscribers.UnsubscribeFromAllLists(ctx, w.member)
		}, outcome: confirmed, executions: 2, readBack: "subscriber.search"},
		{command: "subscriber.update", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return false, w.c.Subscribers.Update(ctx, w.listID, sendloop.SubscriberUpdateParams{EmailAddress: w.member, Fields: sendloop.CustomFields{w.field: "pro"}})
		}, outcome: succeeds, executions: 2},
		{command: "subscriber.import", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			_, err := w.c.Subscribers.Import(ctx, w.listID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "imported@example.com"}}})
			return false, err
		}, outcome: succeeds, executions: 2},
		{command: "suppression.list.add", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			_, err := w.c.Suppression.Add(ctx, 0, sendloop.SuppressionAddParams{EmailAddress: "blocked@example.com"})
			return false, err
		}, outcome: succeeds, executions: 2},
		{command: "campaign.create", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			_, err := w.c.Campaigns.Create(ctx, campaignCreate(w.listID))
			return false, err
		}, outcome: unknown, executions: 1},
		{command: "campaign.create", call: func(ctx context.Context, w *writeWorld) (bool, error) { // version 2
			_, err := w.c.Campaigns.CreateV2(ctx, sendloop.CampaignCreateV2Params{Name: "C2", FromName: "Ann", FromEmail: "ann@example.com",
				ReplyToName: "Ann", ReplyToEmail: "ann@example.com", Subject: "Hi",
				Recipients: []sendloop.Recipient{{ListID: w.listID}}, HTMLContent: unsubscribeHTML})
			return false, err
		}, outcome: unknown, executions: 1},
		{command: "campaign.update", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return false, w.c.Campaigns.Update(ctx, w.campaign, sendloop.CampaignUpdateParams{Subject: "New subject"})
		}, outcome: succeeds, executions: 2},
		{command: "campaign.delete", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return true, w.c.Campaigns.Delete(ctx, w.campaign)
		}, outcome: confirmed, executions: 2, readBack: "campaign.get"},
		{command: "person.track", call: func(ctx context.Context, w *writeWorld) (bool, error) {
			return false, w.c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: w.member})
		}, outcome: unknown, executions: 1},
		{command: legacy.CommandSubscriberAdd, call: func(ctx context.Context, w *writeWorld) (bool, error) {
			res, err := w.lc.SubscriberAdd(ctx, w.listID, legacy.SubscriberAddParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
			if err != nil {
				return false, err
			}
			if res.SubscriberID == 0 || res.Status != legacy.StatusSubscribed {
				return false, errors.New("the read-back did not fill the result")
			}
			return res.ConfirmedOnRetry, nil
		}, outcome: confirmed, executions: 2, readBack: "subscriber.get"},
		{command: legacy.CommandSubscriberUnsubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) {
			res, err := w.lc.SubscriberUnsubscribe(ctx, w.listID, legacy.SubscriberUnsubscribeParams{EmailAddress: w.member, UnsubscriptionIP: "192.0.2.1"})
			if err != nil {
				return false, err
			}
			if res.Status != legacy.StatusUnsubscribed {
				return false, errors.New("the result is not Unsubscribed")
			}
			return res.ConfirmedOnRetry, nil
		}, outcome: confirmed, executions: 2, readBack: "subscriber.get"},
		{command: legacy.CommandSubscriberUnsubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) { // through the root client
			res, err := w.c.Subscribers.Unsubscribe(ctx, w.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: w.member, UnsubscriptionIP: "0.0.0.0"})
			if err != nil {
				return false, err
			}
			if res.SubscriptionStatus != sendloop.StatusUnsubscribed || res.RedirectURL != "" {
				return false, errors.New("the read-back did not fill the result")
			}
			return res.ConfirmedOnRetry, nil
		}, outcome: confirmed, executions: 2, readBack: "subscriber.get"},
		{command: legacy.CommandMediaUpload, call: func(ctx context.Context, w *writeWorld) (bool, error) {
			_, err := w.lc.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("GIF89a"), MediaType: "image/gif"})
			return false, err
		}, outcome: unknown, executions: 1},
	}
	// doubts holds, for each write settled by a read-back, the sentinels of the "already
	// done" answer that its retry gets: when the read-back fails, that answer may be the
	// first attempt's own doing and must not be matched.
	doubts := map[string][]error{
		"subscriber.subscribe":              {sendloop.ErrEmailExists},
		"subscriber.unsubscribe":            {sendloop.ErrSubscriberNotFound, sendloop.ErrNotFound},
		"campaign.delete":                   {sendloop.ErrNotFound},
		legacy.CommandSubscriberAdd:         {legacy.ErrEmailExists},
		legacy.CommandSubscriberUnsubscribe: {legacy.ErrEmailNotInList},
	}
	for _, tt := range tests {
		if tt.readBack != "" && doubts[tt.command] == nil {
			t.Fatalf("%s is settled by a read-back: name the answer it settles in doubts", tt.command)
		}
		variants := []bool{false}
		if tt.readBack != "" {
			variants = append(variants, true)
		}
		for _, readBackFails := range variants {
			name := tt.command
			if readBackFails {
				name += "/read-back fails"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w, srv := newWriteWorld(t)
				before := srv.Executions(tt.command)
				srv.InjectFault(tt.command, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
				if readBackFails {
					srv.InjectFault(tt.readBack, sendlooptest.Fault{Status: 500})
				}

				confirmedOnRetry, err := tt.call(context.Background(), w)

				assert.Equal(t, tt.executions, srv.Executions(tt.command)-before, "executions")
				want := tt.outcome
				if readBackFails {
					want = unknown
				}
				switch want {
				case succeeds:
					require.NoError(t, err)
				case confirmed:
					require.NoError(t, err)
					assert.True(t, confirmedOnRetry, "ConfirmedOnRetry")
				case unknown:
					require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
					require.ErrorIs(t, err, legacy.ErrOutcomeUnknown, "one sentinel across packages")
					var apiErr *sendloop.APIError
					var legacyErr *legacy.Error
					if errors.As(err, &apiErr) {
						assert.True(t, apiErr.EarlierAttemptMayHaveRun, "the wrapped answer came after an attempt that may have run")
					} else if errors.As(err, &legacyErr) {
						assert.True(t, legacyErr.EarlierAttemptMayHaveRun)
					}
					if readBackFails {
						assertNotTheDoubt(t, err, doubts[tt.command])
					}
				}
			})
		}
	}
}

// assertNotTheDoubt checks an outcome-unknown error after an "already done" answer that the
// read-back could not settle: it matches the first failure (the reset, a *TransportError)
// but none of the answer's sentinels, which stay readable in Last and in the message.
func assertNotTheDoubt(t *testing.T, err error, answers []error) {
	t.Helper()
	var transportErr *sendloop.TransportError
	assert.ErrorAs(t, err, &transportErr, "the first failure is wrapped")
	for _, answer := range answers {
		assert.NotErrorIs(t, err, answer, "the answer that caused the doubt is not matched")
	}
	var ou *sendloop.OutcomeUnknownError
	require.ErrorAs(t, err, &ou)
	var legacyOU *legacy.OutcomeUnknownError = ou // one type across packages
	require.NotNil(t, legacyOU.Last, "the answer is kept")
	require.NotNil(t, legacyOU.ReadBack, "the read-back's failure is kept")
	matched := false
	for _, answer := range answers {
		matched = matched || errors.Is(ou.Last, answer)
	}
	assert.True(t, matched, "Last %v is none of %v", ou.Last, answers)
	assert.Contains(t, err.Error(), ou.Last.Error())
	assert.Contains(t, err.Error(), ou.ReadBack.Error())
}

func TestOneShotAnsweredByAGatewayIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, status := range []int{502, 504} {
		c, srv := newTestClient(t)
		srv.InjectFault("list.create", sendlooptest.Fault{Status: status})
		_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown, "HTTP %d", status)
		var httpErr *sendloop.HTTPError
		require.ErrorAs(t, err, &httpErr)
		assert.Equal(t, status, httpErr.HTTPStatus)
		assert.Equal(t, 1, len(requestsFor(srv, "list.create")), "not retried")
	}
}

// TestWriteEndingWithoutAnAnswerAfterAnAttemptThatMayHaveRun: a reset after the command ran,
// then gateways that never let the retries through: nothing tells what the write did.
func TestWriteEndingWithoutAnAnswerAfterAnAttemptThatMayHaveRun(t *testing.T) {
	t.Parallel()
	w, srv := newWriteWorld(t)
	srv.InjectFault("list.update", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	srv.InjectFault("list.update", sendlooptest.Fault{Status: 503, Times: 10})

	err := w.c.Lists.Update(context.Background(), w.listID, sendloop.ListUpdateParams{Name: "Renamed"})

	require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
	var ou *sendloop.OutcomeUnknownError
	require.ErrorAs(t, err, &ou)
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, ou.Last, &httpErr, "the last answer is kept")
	assert.Equal(t, 503, httpErr.HTTPStatus)
	assert.NotErrorAs(t, err, &httpErr, "the last answer is not wrapped")
	assert.Equal(t, 1, srv.Executions("list.update"))

	// The same for legacy.
	srv.InjectFault(legacy.CommandSubscriberAdd, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	srv.InjectFault(legacy.CommandSubscriberAdd, sendlooptest.Fault{Status: 503, Times: 10})
	_, err = w.lc.SubscriberAdd(context.Background(), w.listID, legacy.SubscriberAddParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
	require.ErrorIs(t, err, legacy.ErrOutcomeUnknown)
	var legacyOU *legacy.OutcomeUnknownError
	require.ErrorAs(t, err, &legacyOU)
	var legacyHTTPErr *legacy.HTTPError
	require.ErrorAs(t, legacyOU.Last, &legacyHTTPErr)
}

// TestReadsNeverReportAnUnknownOutcome: the rule is for writes only.
func TestReadsNeverReportAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	w, srv := newWriteWorld(t)
	srv.InjectFault("list.get", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	srv.InjectFault("list.get", sendlooptest.Fault{Status: 503, Times: 10})
	_, err := w.c.Lists.Get(context.Background(), w.listID, sendloop.ListGetParams{CustomFields: false})
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, err, &httpErr)
	assert.NotErrorIs(t, err, sendloop.ErrOutcomeUnknown)
}
