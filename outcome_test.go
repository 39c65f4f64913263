package sendloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// Outcomes of a write whose first attempt ran and lost its answer.
const (
	succeeds  = "succeeds"  // retried; the retry's answer is success
	confirmed = "confirmed" // retried; "already done", proved by a read-back
	unknown   = "unknown"   // not retried (one-shot) or not provable: ErrOutcomeUnknown
)

// outcomeCase is a write of the outcome table; the registry's outcome rule of its command
// says what to expect.
type outcomeCase struct {
	command string // the registry's name
	call    func(context.Context, *writeWorld) (confirmedOnRetry bool, err error)
}

// outcomeCases has a row for every write of the registry with a typed method
// (TestRegistryCoverage checks), more for a command sent by more than one method.
var outcomeCases = []outcomeCase{
	{command: commands.AccountInfoUpdate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return false, w.c.Account.Update(ctx, sendloop.AccountUpdateParams{City: "Izmir"})
	}},
	{command: commands.ListCreate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		_, err := w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Other", OptInMode: sendloop.OptInDouble})
		return false, err
	}},
	{command: commands.ListUpdate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return false, w.c.Lists.Update(ctx, w.listID, sendloop.ListUpdateParams{Name: "Renamed"})
	}},
	{command: commands.ListSettingsUpdate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		subject := "Please confirm"
		return false, w.c.Lists.UpdateSettings(ctx, w.listID, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: &subject})
	}},
	{command: commands.SubscriberSubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		res, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		if err != nil {
			return false, err
		}
		if res.SubscriberID == 0 || res.SubscriptionStatus != sendloop.StatusSubscribed {
			return false, errors.New("the read-back did not fill the result")
		}
		return res.ConfirmedOnRetry, nil
	}},
	{command: commands.SubscriberUnsubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return true, w.c.Subscribers.UnsubscribeFromAllLists(ctx, w.member)
	}},
	{command: commands.SubscriberUpdate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return false, w.c.Subscribers.Update(ctx, w.listID, sendloop.SubscriberUpdateParams{EmailAddress: w.member, Fields: sendloop.CustomFields{w.field: "pro"}})
	}},
	{command: commands.SubscriberImport, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		_, err := w.c.Subscribers.Import(ctx, w.listID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "imported@example.com"}}})
		return false, err
	}},
	{command: commands.SuppressionListAdd, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		_, err := w.c.Suppression.Add(ctx, 0, sendloop.SuppressionAddParams{EmailAddress: "blocked@example.com"})
		return false, err
	}},
	{command: commands.CampaignCreate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		_, err := w.c.Campaigns.Create(ctx, campaignCreate(w.listID))
		return false, err
	}},
	{command: commands.CampaignCreate, call: func(ctx context.Context, w *writeWorld) (bool, error) { // version 2
		_, err := w.c.Campaigns.CreateV2(ctx, sendloop.CampaignCreateV2Params{Name: "C2", FromName: "Ann", FromEmail: "ann@example.com",
			ReplyToName: "Ann", ReplyToEmail: "ann@example.com", Subject: "Hi",
			Recipients: []sendloop.Recipient{{ListID: w.listID}}, HTMLContent: unsubscribeHTML})
		return false, err
	}},
	{command: commands.CampaignUpdate, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return false, w.c.Campaigns.Update(ctx, w.campaign, sendloop.CampaignUpdateParams{Subject: "New subject"})
	}},
	{command: commands.CampaignDelete, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return true, w.c.Campaigns.Delete(ctx, w.campaign)
	}},
	{command: commands.PersonTrack, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		return false, w.c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: w.member})
	}},
	{command: commands.PersonDelete, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		if err := w.c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: w.member}); err != nil {
			return false, err
		}
		return false, w.c.People.Delete(ctx, "u1")
	}},
	{command: legacy.CommandSubscriberAdd, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		res, err := w.lc.SubscriberAdd(ctx, w.listID, legacy.SubscriberAddParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		if err != nil {
			return false, err
		}
		if res.SubscriberID == 0 || res.Status != legacy.StatusSubscribed {
			return false, errors.New("the read-back did not fill the result")
		}
		return res.ConfirmedOnRetry, nil
	}},
	{command: legacy.CommandSubscriberUnsubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		res, err := w.lc.SubscriberUnsubscribe(ctx, w.listID, legacy.SubscriberUnsubscribeParams{EmailAddress: w.member, UnsubscriptionIP: "192.0.2.1"})
		if err != nil {
			return false, err
		}
		if res.Status != legacy.StatusUnsubscribed {
			return false, errors.New("the result is not Unsubscribed")
		}
		return res.ConfirmedOnRetry, nil
	}},
	{command: legacy.CommandSubscriberUnsubscribe, call: func(ctx context.Context, w *writeWorld) (bool, error) { // through the root client
		res, err := w.c.Subscribers.Unsubscribe(ctx, w.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: w.member, UnsubscriptionIP: "0.0.0.0"})
		if err != nil {
			return false, err
		}
		if res.SubscriptionStatus != sendloop.StatusUnsubscribed || res.RedirectURL != "" {
			return false, errors.New("the read-back did not fill the result")
		}
		return res.ConfirmedOnRetry, nil
	}},
	{command: legacy.CommandMediaUpload, call: func(ctx context.Context, w *writeWorld) (bool, error) {
		_, err := w.lc.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("GIF89a"), MediaType: "image/gif"})
		return false, err
	}},
}

// TestWritesAfterAnAttemptThatMayHaveRun runs every write command of the root and legacy
// packages against a connection reset after the command ran, and, where a read-back
// settles an "already done" answer, once more with that read-back failing.
func TestWritesAfterAnAttemptThatMayHaveRun(t *testing.T) {
	t.Parallel()
	// doubts holds, for each write settled by a read-back, the sentinels of the "already
	// done" answer that its retry gets: when the read-back fails, that answer may be the
	// first attempt's own doing and must not be matched.
	doubts := map[string][]error{
		commands.SubscriberSubscribe:        {sendloop.ErrEmailExists},
		commands.SubscriberUnsubscribe:      {sendloop.ErrSubscriberNotFound, sendloop.ErrNotFound},
		commands.CampaignDelete:             {sendloop.ErrNotFound},
		legacy.CommandSubscriberAdd:         {legacy.ErrEmailExists},
		legacy.CommandSubscriberUnsubscribe: {legacy.ErrEmailNotInList, sendloop.ErrNotInList},
	}
	for _, tt := range outcomeCases {
		spec := specNamed(t, tt.command)
		want, executions, readBack := expectedOutcome(spec)
		if readBack != "" && doubts[tt.command] == nil {
			t.Fatalf("%s is settled by a read-back: name the answer it settles in doubts", tt.command)
		}
		variants := []bool{false}
		if readBack != "" {
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
					srv.InjectFault(readBack, sendlooptest.Fault{Status: 500})
				}

				confirmedOnRetry, err := tt.call(context.Background(), w)

				assert.Equal(t, executions, srv.Executions(tt.command)-before, "executions")
				want := want
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

// expectedOutcome is what the registry's outcome rule of a write promises after an attempt
// that ran and lost its answer: the outcome, how many times the command runs, and the
// command that settles an "already done" answer.
func expectedOutcome(spec commands.Spec) (outcome string, executions int, readBack string) {
	switch spec.Outcome {
	case commands.Retried:
		return succeeds, 2, ""
	case commands.ReadBack:
		return confirmed, 2, spec.ReadBack
	}
	return unknown, 1, ""
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
		srv.InjectFault(commands.ListCreate, sendlooptest.Fault{Status: status})
		_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown, "HTTP %d", status)
		var httpErr *sendloop.HTTPError
		require.ErrorAs(t, err, &httpErr)
		assert.Equal(t, status, httpErr.HTTPStatus)
		assert.Equal(t, 1, len(requestsFor(srv, commands.ListCreate)), "not retried")
	}
}

// TestWriteEndingWithoutAnAnswerAfterAnAttemptThatMayHaveRun: a reset after the command ran,
// then gateways that never let the retries through: nothing tells what the write did.
func TestWriteEndingWithoutAnAnswerAfterAnAttemptThatMayHaveRun(t *testing.T) {
	t.Parallel()
	w, srv := newWriteWorld(t)
	srv.InjectFault(commands.ListUpdate, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	srv.InjectFault(commands.ListUpdate, sendlooptest.Fault{Status: 503, Times: 10})

	err := w.c.Lists.Update(context.Background(), w.listID, sendloop.ListUpdateParams{Name: "Renamed"})

	require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
	var ou *sendloop.OutcomeUnknownError
	require.ErrorAs(t, err, &ou)
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, ou.Last, &httpErr, "the last answer is kept")
	assert.Equal(t, 503, httpErr.HTTPStatus)
	assert.NotErrorAs(t, err, &httpErr, "the last answer is not wrapped")
	assert.Equal(t, 1, srv.Executions(commands.ListUpdate))

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
	srv.InjectFault(commands.ListGet, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	srv.InjectFault(commands.ListGet, sendlooptest.Fault{Status: 503, Times: 10})
	_, err := w.c.Lists.Get(context.Background(), w.listID, sendloop.ListGetParams{CustomFields: false})
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, err, &httpErr)
	assert.NotErrorIs(t, err, sendloop.ErrOutcomeUnknown)
}

// TestIdempotentWriteAnsweredByGatewaysWrapsTheFirstAsHTTPError: a write retried after a
// gateway's 502 or 504 whose retries get no answer of the service's either has an unknown
// outcome, and its First failure, the gateway's answer, is an *HTTPError that errors.As
// reaches, as OutcomeUnknownError documents.
func TestIdempotentWriteAnsweredByGatewaysWrapsTheFirstAsHTTPError(t *testing.T) {
	t.Parallel()
	for _, status := range []int{502, 504} {
		w, srv := newWriteWorld(t)
		srv.InjectFault("list.update", sendlooptest.Fault{Status: status, Times: 10})
		err := w.c.Lists.Update(context.Background(), w.listID, sendloop.ListUpdateParams{Name: "Renamed"})
		require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown, "HTTP %d", status)
		var httpErr *sendloop.HTTPError
		require.ErrorAs(t, err, &httpErr, "HTTP %d: the first failure is reached", status)
		assert.Equal(t, status, httpErr.HTTPStatus)
		assert.Equal(t, "list.update", httpErr.Command)
		assert.Equal(t, 1, httpErr.Attempts, "the first failure is the first attempt's")

		srv.InjectFault(legacy.CommandSubscriberAdd, sendlooptest.Fault{Status: status, Times: 10})
		_, err = w.lc.SubscriberAdd(context.Background(), w.listID, legacy.SubscriberAddParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		require.ErrorIs(t, err, legacy.ErrOutcomeUnknown, "HTTP %d", status)
		var legacyHTTPErr *legacy.HTTPError
		require.ErrorAs(t, err, &legacyHTTPErr, "legacy, HTTP %d: the first failure is reached", status)
		assert.Equal(t, status, legacyHTTPErr.HTTPStatus)
	}
}
