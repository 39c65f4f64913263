package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSentinels(t *testing.T) {
	t.Parallel()
	sentinels := []struct {
		code     legacy.ErrorCode
		sentinel error
		meaning  string
	}{
		{1, legacy.ErrIncompatibleConnection, "connection type is not compatible"},
		{2, legacy.ErrInvalidAPIKey, "invalid API key or user account is not available"},
		{3, legacy.ErrListNotFound, "subscriber list does not exist or is not available"},
		{4, legacy.ErrEmailMissing, "email address is missing"},
		{5, legacy.ErrEmailFormat, "email address format is illegal"},
		{6, legacy.ErrEmailExists, "email address already exists in the subscriber list"},
		{7, legacy.ErrEmailInvalid, "email address is invalid"},
		{8, legacy.ErrEmailNotInList, "email address does not exist in the subscriber list"},
		{9, legacy.ErrMediaTooLarge, "media exceeds maximum allowed size"},
	}
	for _, tt := range sentinels {
		t.Run(tt.code.String(), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.meaning, tt.code.Message())
			assert.Equal(t, fmt.Sprintf("%d (%s)", tt.code, tt.meaning), tt.sentinel.Error())

			apiErr := fmt.Errorf("wrapped: %w", &legacy.Error{Code: tt.code, Command: "Subscriber.Add"})
			assert.ErrorIs(t, apiErr, tt.sentinel)
			assert.ErrorIs(t, apiErr, tt.code)
			var e *legacy.Error
			assert.True(t, errors.As(apiErr, &e))
			assert.Equal(t, tt.code, e.Code)
			assert.Contains(t, apiErr.Error(), tt.meaning, "the meaning stands in for an empty message")

			ve := &legacy.ValidationError{Code: tt.code, Command: "Media.Upload", Reason: "r"}
			assert.ErrorIs(t, ve, tt.sentinel)

			for _, other := range sentinels {
				if other.code != tt.code {
					assert.NotErrorIs(t, apiErr, other.sentinel)
				}
			}
		})
	}
	assert.Equal(t, "42", legacy.ErrorCode(42).String())
	assert.Equal(t, "", legacy.ErrorCode(42).Message())
}

func TestErrorTexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"API error", &legacy.Error{Code: 6, Message: "Email address already exists in the subscriber list", Command: "Subscriber.Add"},
			"sendloop/legacy: Subscriber.Add: error 6: Email address already exists in the subscriber list"},
		{"API error after retries", &legacy.Error{Code: 6, Command: "Subscriber.Add", Attempts: 2},
			"sendloop/legacy: Subscriber.Add: error 6: email address already exists in the subscriber list (after 2 attempts)"},
		{"API error with an unknown code", &legacy.Error{Code: 77},
			"sendloop/legacy: error 77"},
		{"fault", &legacy.Fault{Code: -32601, Message: "unknown command", Command: "X.Y"},
			"sendloop/legacy: X.Y: XML-RPC fault -32601: unknown command"},
		{"fault without message", &legacy.Fault{Code: 3},
			"sendloop/legacy: XML-RPC fault 3"},
		{"validation with a code", &legacy.ValidationError{Code: 9, Command: "Media.Upload", Field: "MediaData", Reason: "too big"},
			"sendloop/legacy: Media.Upload: invalid parameters: too big (field MediaData) [error 9]"},
		{"validation without a code", &legacy.ValidationError{Reason: "nil parameters"},
			"sendloop/legacy: invalid parameters: nil parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
	assert.NotErrorIs(t, &legacy.ValidationError{}, legacy.ErrorCode(0), "code 0 matches nothing")
	assert.NotErrorIs(t, &legacy.Fault{Code: 2}, legacy.ErrInvalidAPIKey, "fault codes are no legacy codes")
}

// TestTransportErrorsNameThePackage: the errors the shared transport makes for a legacy
// command start as the package's own do.
func TestTransportErrorsNameThePackage(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c := newClient(t, srv, legacy.PostForm)
	srv.InjectFault(legacy.CommandMediaBrowse, sendlooptest.Fault{Status: 503, RetryAfter: "60", Body: "<html>"})
	_, err := c.MediaBrowse(context.Background())
	var he *legacy.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, `sendloop/legacy: Media.Browse: HTTP 503: unexpected status; the body is not an XML-RPC answer (server asks to retry after 1m0s): "<html>"`, err.Error())

	srv.InjectFault(legacy.CommandMediaUpload, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	_, err = c.MediaUpload(context.Background(), legacy.MediaUploadParams{Data: gif})
	require.ErrorIs(t, err, legacy.ErrOutcomeUnknown)
	assert.True(t, strings.HasPrefix(err.Error(), "sendloop/legacy: Media.Upload: "), err.Error())
	var te *legacy.TransportError
	require.ErrorAs(t, err, &te)
	assert.True(t, strings.HasPrefix(te.Error(), "sendloop/legacy: Media.Upload: "), te.Error())
}
