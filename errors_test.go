package sendloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestEveryDocumentedCodeHasAMeaning(t *testing.T) {
	t.Parallel()
	for code := sendloop.ErrorCode(100); code <= 150; code++ {
		assert.NotEmpty(t, code.Message(), "code %d", code)
		assert.Contains(t, code.Error(), fmt.Sprint(int(code)))
	}
	for _, code := range []sendloop.ErrorCode{151, 155, 161, 212} {
		assert.Equal(t, "undocumented error", code.Message(), "code %d", code)
	}
	assert.Equal(t, "", sendloop.ErrorCode(999).Message())
	assert.Equal(t, "999", sendloop.ErrorCode(999).String())
}

func TestErrorsMatchTheirSentinel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		sentinel error
		other    error
		text     string
	}{
		{
			name:     "api error",
			err:      &sendloop.APIError{Code: 118, Message: "Invalid List ID", Command: "list.get", HTTPStatus: 200},
			sentinel: sendloop.ErrListNotFound, other: sendloop.ErrNotFound,
			text: "sendloop: list.get: error 118: Invalid List ID",
		},
		{
			name:     "api error with fields and no message",
			err:      &sendloop.APIError{Code: 105, Fields: []string{"ListID", "EmailAddress"}, Command: "subscriber.get"},
			sentinel: sendloop.ErrMissingParameters, other: sendloop.ErrInvalidAPIKey,
			text: "sendloop: subscriber.get: error 105: required parameter(s) missing (fields: ListID, EmailAddress)",
		},
		{
			name:     "validation error",
			err:      &sendloop.ValidationError{Code: 138, Command: "campaign.create", Fields: []string{"TargetListIDs"}, Reason: "no target"},
			sentinel: sendloop.ErrNoTargets, other: sendloop.ErrMissingParameters,
			text: "sendloop: campaign.create: invalid parameters: no target (fields: TargetListIDs) [error 138]",
		},
		{
			name:     "wrapped",
			err:      fmt.Errorf("syncing: %w", &sendloop.APIError{Code: 104, Command: "list.getlist"}),
			sentinel: sendloop.ErrInvalidAPIKey, other: sendloop.ErrIPNotAuthorized,
			text: "syncing: sendloop: list.getlist: error 104: invalid API key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.ErrorIs(t, tt.err, tt.sentinel)
			assert.NotErrorIs(t, tt.err, tt.other)
			assert.EqualError(t, tt.err, tt.text)
		})
	}
}

func TestErrorsAsGivesTheDetails(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("ctx: %w", &sendloop.APIError{Code: 125, Message: "Email address already exists", Command: "subscriber.subscribe"})
	var apiErr *sendloop.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, sendloop.ErrEmailExists, apiErr.Code)
	assert.Equal(t, "subscriber.subscribe", apiErr.Command)
}

func TestHTTPErrorText(t *testing.T) {
	t.Parallel()
	err := &sendloop.HTTPError{Command: "account.info.get", HTTPStatus: 429, Attempts: 1,
		RetryAfter: 120_000_000_000, Excerpt: "slow down", Reason: "unexpected status"}
	assert.EqualError(t, err, `sendloop: account.info.get: HTTP 429: unexpected status (server asks to retry after 2m0s): "slow down"`)
}

func TestTransportErrorIsReachable(t *testing.T) {
	t.Parallel()
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL("http://127.0.0.1:1"), sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: 1, MinWait: time.Millisecond, MaxWait: time.Millisecond}))
	require.NoError(t, err)
	_, err = c.Account.Get(context.Background())
	var te *sendloop.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "account.info.get", te.Command)
	assert.Equal(t, 2, te.Attempts)
	var legacyTE *legacy.TransportError
	require.ErrorAs(t, err, &legacyTE, "one type for both packages")
}

func TestAPIErrorCountsAttempts(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("list.get", sendlooptest.Fault{Status: 503})
	_, err := c.Lists.Get(context.Background(), 42, sendloop.ListGetParams{CustomFields: false})
	var apiErr *sendloop.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, sendloop.ErrListNotFound, apiErr.Code)
	assert.Equal(t, 2, apiErr.Attempts)
}

func TestTolerantScalars(t *testing.T) {
	t.Parallel()
	var v struct {
		A, B, C sendloop.Int
		F, G    sendloop.Float
		T, U, W sendloop.Bool
	}
	require.NoError(t, json.Unmarshal([]byte(`{"A":"12","B":7,"C":"","F":"12.5%","G":3.25,"T":"1","U":true,"W":null}`), &v))
	assert.Equal(t, sendloop.Int(12), v.A)
	assert.Equal(t, sendloop.Int(7), v.B)
	assert.Zero(t, v.C)
	assert.Equal(t, sendloop.Float(12.5), v.F)
	assert.Equal(t, sendloop.Float(3.25), v.G)
	assert.True(t, bool(v.T) && bool(v.U) && !bool(v.W))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"A":12,"B":7,"C":0,"F":12.5,"G":3.25,"T":true,"U":true,"W":false}`, string(out))
	require.Error(t, json.Unmarshal([]byte(`{"A":"twelve"}`), &v))
}

// TestForeignEnvelopesReplaceInvalidUTF8: the one rule for invalid UTF-8 holds for the xml
// and php formats of CallRaw too.
func TestForeignEnvelopesReplaceInvalidUTF8(t *testing.T) {
	t.Parallel()
	for format, body := range map[sendloop.Format]string{
		sendloop.FormatXML: "<?xml version=\"1.0\"?><response><Success>false</Success><ErrorCode>116</ErrorCode><ErrorMessage>bad \xff value</ErrorMessage></response>",
		sendloop.FormatPHP: "a:3:{s:7:\"Success\";b:0;s:9:\"ErrorCode\";i:116;s:12:\"ErrorMessage\";s:11:\"bad \xff value\";}",
	} {
		c := cannedClient(t, 200, body)
		_, err := c.CallRaw(context.Background(), "list.get", nil, format)
		var apiErr *sendloop.APIError
		require.ErrorAs(t, err, &apiErr, string(format))
		assert.Equal(t, sendloop.ErrInvalidParameterValue, apiErr.Code, string(format))
		assert.Equal(t, "bad \uFFFD value", apiErr.Message, string(format))
	}
}
