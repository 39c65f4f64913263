package legacy_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestEveryCodeFromTheFake reaches every legacy error code 1–9 through the fake, in every
// input form, and checks that each comes back typed.
func TestEveryCodeFromTheFake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	add := func(list int, email string) func(*legacy.Client, *sendlooptest.Server) error {
		return func(c *legacy.Client, _ *sendlooptest.Server) error {
			_, err := c.SubscriberAdd(ctx, list, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
			return err
		}
	}
	tests := []struct {
		name string
		code legacy.ErrorCode
		// opts configure the client; setup prepares the fake (list 1 is single opt-in and
		// holds taken@example.com).
		opts  func(srv *sendlooptest.Server) []legacy.Option
		setup func(t *testing.T, srv *sendlooptest.Server)
		call  func(c *legacy.Client, srv *sendlooptest.Server) error
	}{
		{name: "1 an input form the endpoint cannot read", code: legacy.ErrIncompatibleConnection,
			opts: func(*sendlooptest.Server) []legacy.Option {
				// A proxy that turns every request into a PUT.
				return []legacy.Option{legacy.WithHTTPClient(&http.Client{Transport: &recorder{edit: func(r *http.Request) { r.Method = http.MethodPut }}})}
			},
			call: func(c *legacy.Client, _ *sendlooptest.Server) error { _, err := c.MediaBrowse(ctx); return err }},
		{name: "2 a wrong key", code: legacy.ErrInvalidAPIKey,
			opts: func(srv *sendlooptest.Server) []legacy.Option { return nil },
			call: func(_ *legacy.Client, srv *sendlooptest.Server) error {
				c, err := legacy.NewClient("wrong-key", legacy.WithBaseURL(srv.URL))
				if err != nil {
					return err
				}
				_, err = c.MediaBrowse(ctx)
				return err
			}},
		{name: "2 a client address the key is not bound to", code: legacy.ErrInvalidAPIKey,
			setup: func(t *testing.T, srv *sendlooptest.Server) { srv.AllowIPs("198.51.100.1") },
			call:  func(c *legacy.Client, _ *sendlooptest.Server) error { _, err := c.MediaBrowse(ctx); return err }},
		{name: "3 no such list", code: legacy.ErrListNotFound, call: add(99, "a@example.com")},
		{name: "3 no such list to chart", code: legacy.ErrListNotFound,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.ChartListActivity(ctx, 99, legacy.ChartListActivityParams{Start: today, Days: 1})
				return err
			}},
		{name: "4 the address missing", code: legacy.ErrEmailMissing,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.Call(ctx, "Subscriber.Add", map[string]string{"ListID": "1", "SubscriptionIP": "192.0.2.1"})
				return err
			}},
		{name: "4 the address missing to unsubscribe", code: legacy.ErrEmailMissing,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.Call(ctx, "Subscriber.Unsubscribe", map[string]string{"ListID": "1", "UnsubscriptionIP": "192.0.2.1"})
				return err
			}},
		// The typed methods refuse these before sending: Call takes them to the service.
		{name: "5 an illegal address", code: legacy.ErrEmailFormat,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.Call(ctx, "Subscriber.Add", map[string]string{"ListID": "1", "Fields[EmailAddress]": "ann@localhost", "SubscriptionIP": "192.0.2.1"})
				return err
			}},
		{name: "5 an illegal address to unsubscribe", code: legacy.ErrEmailFormat,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.Call(ctx, "Subscriber.Unsubscribe", map[string]string{"ListID": "1", "EmailAddress": "ann@localhost", "UnsubscriptionIP": "192.0.2.1"})
				return err
			}},
		{name: "6 the address already in the list", code: legacy.ErrEmailExists, call: add(1, "taken@example.com")},
		{name: "7 a suppressed address", code: legacy.ErrEmailInvalid,
			setup: func(t *testing.T, srv *sendlooptest.Server) {
				_, err := srv.Suppress(0, "blocked@example.com", "FBL Report")
				require.NoError(t, err)
			},
			call: add(1, "blocked@example.com")},
		{name: "8 the address not in the list", code: legacy.ErrEmailNotInList,
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.SubscriberUnsubscribe(ctx, 1, legacy.SubscriberUnsubscribeParams{EmailAddress: "stranger@example.com", UnsubscriptionIP: "192.0.2.1"})
				return err
			}},
		{name: "9 media over the server's maximum", code: legacy.ErrMediaTooLarge,
			opts:  func(*sendlooptest.Server) []legacy.Option { return []legacy.Option{legacy.WithMaxMediaSize(-1)} },
			setup: func(t *testing.T, srv *sendlooptest.Server) { srv.SetMaxMediaSize(int64(len(gif) - 1)) },
			call: func(c *legacy.Client, _ *sendlooptest.Server) error {
				_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif, MediaType: "image/gif"})
				return err
			}},
	}
	for _, form := range allForms {
		for _, tt := range tests {
			t.Run(form.String()+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := sendlooptest.NewServer(t)
				list := createList(t, srv, "Single")
				require.Equal(t, 1, list)
				seed := newClient(t, srv, legacy.PostForm)
				_, err := seed.SubscriberAdd(ctx, list, legacy.SubscriberAddParams{EmailAddress: "taken@example.com", SubscriptionIP: "192.0.2.1"})
				require.NoError(t, err)
				if tt.setup != nil {
					tt.setup(t, srv)
				}
				var opts []legacy.Option
				if tt.opts != nil {
					opts = tt.opts(srv)
				}
				err = tt.call(newClient(t, srv, form, opts...), srv)

				require.Error(t, err)
				assert.ErrorIs(t, err, tt.code)
				var e *legacy.Error
				require.True(t, errors.As(err, &e), "a server answer, got %T: %v", err, err)
				assert.Equal(t, tt.code, e.Code)
				assert.Equal(t, http.StatusOK, e.HTTPStatus)
				assert.NotEmpty(t, e.Message)
				assert.Contains(t, err.Error(), "error "+strconv.Itoa(int(tt.code)))
			})
		}
	}
}

// TestInjectedErrorCodes checks that a fault with an ErrorCode answers that legacy code
// without executing the command.
func TestInjectedErrorCodes(t *testing.T) {
	t.Parallel()
	for code := legacy.ErrorCode(1); code <= 9; code++ {
		t.Run(code.String(), func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			srv.InjectFault("Media.Browse", sendlooptest.Fault{ErrorCode: int(code), Status: http.StatusInternalServerError})
			_, err := newClient(t, srv, legacy.MessageForm).MediaBrowse(context.Background())
			assert.ErrorIs(t, err, code)
			var e *legacy.Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, http.StatusInternalServerError, e.HTTPStatus)
			assert.Equal(t, 1, e.Attempts, "a plain 500 is not retried")
			assert.Zero(t, srv.Executions("Media.Browse"))
		})
	}
}
