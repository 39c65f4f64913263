package sendloop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

func TestCheckAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		code   sendloop.ErrorCode // 0: valid
		reason string
	}{
		{"ann@example.com", 0, ""},
		{"Ann.Lee+news@Example.COM", 0, ""},
		{"zoë@bücher.example", 0, ""},
		{"", sendloop.ErrMissingParameters, "the address is empty"},
		{" \t", sendloop.ErrMissingParameters, "the address is empty"},
		{" ann@example.com", sendloop.ErrInvalidEmailFormat, `" ann@example.com" is not an email address: it has white space around it (NormalizeAddress removes it)`},
		{"ann@example.com\r\n", sendloop.ErrInvalidEmailFormat, "white space around it"},
		{"\ufeffann@example.com", sendloop.ErrInvalidEmailFormat, "a byte-order mark, a zero-width space) around it"},
		{"\u200b", sendloop.ErrInvalidEmailFormat, "only white space"},
		{" not an address ", sendloop.ErrInvalidEmailFormat, "white space around it"},
		{"Ann <ann@example.com>", sendloop.ErrInvalidEmailFormat, "without a display name"},
		{"ann.example.com", sendloop.ErrInvalidEmailFormat, "it has no @"},
		{"ann@localhost", sendloop.ErrInvalidEmailFormat, "the domain has no dot"},
	}
	for _, tt := range tests {
		err := sendloop.CheckAddress(tt.in)
		if tt.code == 0 {
			assert.NoError(t, err, "%q", tt.in)
			continue
		}
		var ve *sendloop.ValidationError
		if assert.ErrorAs(t, err, &ve, "%q", tt.in) {
			assert.ErrorIs(t, err, tt.code, "%q", tt.in)
			assert.Contains(t, err.Error(), tt.reason, "%q", tt.in)
		}
	}
	assert.NoError(t, sendloop.CheckAddress(sendloop.NormalizeAddress(" \ufeffx@example.com ")), "NormalizeAddress cleans what CheckAddress refuses for white space")
}

func TestNormalizeAddress(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ann@example.com", "ann@example.com"},
		{" \u00a0Ann@Example.com\t\r\n", "Ann@Example.com"}, // no case change
		{"\ufeff\u200bann@example.com\u200c\u200d\u2060", "ann@example.com"},
		{` "Ann" <ann@example.com> `, `"Ann" <ann@example.com>`}, // no display-name stripping
		{"a\u200bnn@example.com", "a\u200bnn@example.com"},       // nothing inside
		{"   ", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sendloop.NormalizeAddress(tt.in), "%q", tt.in)
	}
}

// TestAddressesAreNeverCleanedSilently: the SDK sends what it is given or refuses it, and
// says why.
func TestAddressesAreNeverCleanedSilently(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	for _, addr := range []string{" ann@example.com", "ann@example.com\n", "\ufeffann@example.com", "\u00a0ann@example.com"} {
		_, err := c.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: addr, SubscriptionIP: "192.0.2.1"})
		require.ErrorIs(t, err, sendloop.ErrInvalidEmailFormat, "%q", addr)
		assert.Contains(t, err.Error(), "around it", "%q", addr)
		assert.Contains(t, err.Error(), "NormalizeAddress", "%q", addr)
	}
	assert.Empty(t, requestsFor(srv, "subscriber.subscribe"), "nothing is sent")

	_, err = c.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: sendloop.NormalizeAddress(" ann@example.com"), SubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)
}

func ExampleNormalizeAddress() {
	for _, cell := range []string{" ann@example.com\t", "\ufeffBob@Example.com", "Carol <carol@example.com>"} {
		addr := sendloop.NormalizeAddress(cell)
		if err := sendloop.CheckAddress(addr); err != nil {
			var ve *sendloop.ValidationError
			if errors.As(err, &ve) {
				fmt.Println("refused:", ve.Reason)
			}
			continue
		}
		fmt.Printf("%q\n", addr)
	}
	// Output:
	// "ann@example.com"
	// "Bob@Example.com"
	// refused: "Carol <carol@example.com>" is not an email address: it is not a bare address: give name@example.com without a display name or angle brackets
}
