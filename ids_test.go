package sendloop_test

import (
	"context"
	"fmt"
	"iter"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
)

// TestIDsOutsideTheInt32RangeNeverReachTheWire puts every ID parameter of the root and
// legacy packages through the one ID rule: 1..2147483647, 0 missing (105) where the ID is
// required, and nothing sent for any refused value.
func TestIDsOutsideTheInt32RangeNeverReachTheWire(t *testing.T) {
	t.Parallel()
	type call func(ctx context.Context, c *sendloop.Client, lc *legacy.Client, id int) error
	drain := func(seq iter.Seq2[sendloop.Subscriber, error]) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	const email = "ann@example.com"
	tests := []struct {
		name     string
		call     call
		optional bool               // 0 is a documented value or means "not sent"
		code     sendloop.ErrorCode // for an out-of-range ID; 0: ErrInvalidParameterValue
		legacy   bool
	}{
		{name: "Lists.Get ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: false})
			return err
		}},
		{name: "Lists.Update ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Lists.Update(ctx, id, sendloop.ListUpdateParams{Name: "N"})
		}},
		{name: "Lists.Settings ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Lists.Settings(ctx, id)
			return err
		}},
		{name: "Lists.UpdateSettings ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: sendloop.String("s")})
		}},
		{name: "Subscribers.Subscribe ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
			return err
		}},
		{name: "Subscribers.Subscribe custom field ID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.1", Fields: sendloop.CustomFields{id: "x"}})
			return err
		}, code: sendloop.ErrCustomFieldNotFound},
		{name: "Subscribers.Get ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{EmailAddress: email})
			return err
		}},
		{name: "Subscribers.Get SubscriberID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			if id == 0 {
				return nil // 0 means "by address": not this test's case
			}
			_, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{SubscriberID: id})
			return err
		}, optional: true},
		{name: "Subscribers.Update SubscriberID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			if id == 0 {
				return nil
			}
			return c.Subscribers.Update(ctx, 1, sendloop.SubscriberUpdateParams{SubscriberID: id, EmailAddress: email})
		}, optional: true},
		{name: "Subscribers.Update ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Subscribers.Update(ctx, id, sendloop.SubscriberUpdateParams{EmailAddress: email, Fields: sendloop.CustomFields{1: "x"}})
		}},
		{name: "Subscribers.Browse ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{})
			return err
		}},
		{name: "Subscribers.Browse SegmentID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Browse(ctx, 1, sendloop.SubscriberBrowseParams{SegmentID: id})
			return err
		}, optional: true, code: sendloop.ErrInvalidSegmentID},
		{name: "Subscribers.BrowseIter ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return drain(c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}))
		}},
		{name: "Subscribers.Import ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Import(ctx, id, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: email}}})
			return err
		}},
		{name: "Subscribers.ImportAll ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.ImportAll(ctx, id, func(yield func(sendloop.ImportSubscriber) bool) {
				yield(sendloop.ImportSubscriber{EmailAddress: email})
			}, sendloop.ImportOptions{})
			return err
		}},
		{name: "Suppression.List ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Suppression.List(ctx, id)
			return err
		}, optional: true, code: sendloop.ErrListNotFound},
		{name: "Suppression.Add ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Suppression.Add(ctx, id, sendloop.SuppressionAddParams{EmailAddress: email})
			return err
		}, optional: true, code: sendloop.ErrListNotFound},
		{name: "Campaigns.Get CampaignID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Campaigns.Get(ctx, id)
			return err
		}},
		{name: "Campaigns.Update CampaignID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{Subject: "S"})
		}},
		{name: "Campaigns.Delete CampaignID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Campaigns.Delete(ctx, id)
		}},
		{name: "Reports.ListOverall ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Reports.ListOverall(ctx, id)
			return err
		}},
		{name: "Reports.CampaignOpens CampaignID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Reports.CampaignOpens(ctx, id)
			return err
		}},
		{name: "CampaignData.Bounces CampaignID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.CampaignData.Bounces(ctx, id, sendloop.CampaignDataParams{})
			return err
		}},
		{name: "Exports.Unsubscriptions ListID", call: func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Exports.Unsubscriptions(ctx, id)
			return err
		}, optional: true},
		{name: "legacy SubscriberAdd ListID", call: func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberAdd(ctx, id, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
			return err
		}, legacy: true},
		{name: "legacy SubscriberAdd custom field ID", call: func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "192.0.2.1", CustomFields: map[int]string{id: "x"}})
			return err
		}, legacy: true},
		{name: "legacy SubscriberUnsubscribe ListID", call: func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberUnsubscribe(ctx, id, legacy.SubscriberUnsubscribeParams{EmailAddress: email, UnsubscriptionIP: "192.0.2.1"})
			return err
		}, legacy: true},
		{name: "legacy ChartListActivity ListID", call: func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.ChartListActivity(ctx, id, legacy.ChartListActivityParams{Start: time.Now(), Days: 3})
			return err
		}, legacy: true},
	}
	for _, tt := range tests {
		for _, id := range []int{0, -1, math.MaxInt32 + 1, 1 << 40} {
			if id == 0 && tt.optional {
				continue
			}
			t.Run(fmt.Sprintf("%s=%d", tt.name, id), func(t *testing.T) {
				t.Parallel()
				c, srv := newTestClient(t)
				lc, err := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
				require.NoError(t, err)

				err = tt.call(context.Background(), c, lc, id)

				assert.Empty(t, srv.Requests(), "nothing may be sent")
				if tt.legacy {
					var ve *legacy.ValidationError
					require.ErrorAs(t, err, &ve)
					return
				}
				var ve *sendloop.ValidationError
				require.ErrorAs(t, err, &ve)
				want := tt.code
				switch {
				case want == sendloop.ErrCustomFieldNotFound:
					// a custom field ID of 0 names no field: 135 like any other impossible one
				case id == 0:
					want = sendloop.ErrMissingParameters
				case want == 0:
					want = sendloop.ErrInvalidParameterValue
				}
				assert.Equal(t, want, ve.Code, "%v", err)
			})
		}
	}
}
