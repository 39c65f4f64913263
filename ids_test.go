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
		{"Lists.Get ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: false})
			return err
		}, false, 0, false},
		{"Lists.Update ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Lists.Update(ctx, id, sendloop.ListUpdateParams{Name: "N"})
		}, false, 0, false},
		{"Lists.Settings ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Lists.Settings(ctx, id)
			return err
		}, false, 0, false},
		{"Lists.UpdateSettings ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: sendloop.String("s")})
		}, false, 0, false},
		{"Subscribers.Subscribe ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
			return err
		}, false, 0, false},
		{"Subscribers.Subscribe custom field ID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.1", Fields: sendloop.CustomFields{id: "x"}})
			return err
		}, false, sendloop.ErrCustomFieldNotFound, false},
		{"Subscribers.Get ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{EmailAddress: email})
			return err
		}, false, 0, false},
		{"Subscribers.Get SubscriberID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			if id == 0 {
				return nil // 0 means "by address": not this test's case
			}
			_, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{SubscriberID: id})
			return err
		}, true, 0, false},
		{"Subscribers.Update SubscriberID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			if id == 0 {
				return nil
			}
			return c.Subscribers.Update(ctx, 1, sendloop.SubscriberUpdateParams{SubscriberID: id, EmailAddress: email})
		}, true, 0, false},
		{"Subscribers.Update ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Subscribers.Update(ctx, id, sendloop.SubscriberUpdateParams{EmailAddress: email, Fields: sendloop.CustomFields{1: "x"}})
		}, false, 0, false},
		{"Subscribers.Browse ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{})
			return err
		}, false, 0, false},
		{"Subscribers.Browse SegmentID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Browse(ctx, 1, sendloop.SubscriberBrowseParams{SegmentID: id})
			return err
		}, true, sendloop.ErrInvalidSegmentID, false},
		{"Subscribers.BrowseIter ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return drain(c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}))
		}, false, 0, false},
		{"Subscribers.Import ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.Import(ctx, id, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: email}}})
			return err
		}, false, 0, false},
		{"Subscribers.ImportAll ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Subscribers.ImportAll(ctx, id, func(yield func(sendloop.ImportSubscriber) bool) {
				yield(sendloop.ImportSubscriber{EmailAddress: email})
			}, sendloop.ImportOptions{})
			return err
		}, false, 0, false},
		{"Suppression.List ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Suppression.List(ctx, id)
			return err
		}, true, sendloop.ErrListNotFound, false},
		{"Suppression.Add ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Suppression.Add(ctx, id, sendloop.SuppressionAddParams{EmailAddress: email})
			return err
		}, true, sendloop.ErrListNotFound, false},
		{"Campaigns.Get CampaignID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Campaigns.Get(ctx, id)
			return err
		}, false, 0, false},
		{"Campaigns.Update CampaignID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{Subject: "S"})
		}, false, 0, false},
		{"Campaigns.Delete CampaignID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			return c.Campaigns.Delete(ctx, id)
		}, false, 0, false},
		{"Reports.ListOverall ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Reports.ListOverall(ctx, id)
			return err
		}, false, 0, false},
		{"Reports.CampaignOpens CampaignID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Reports.CampaignOpens(ctx, id)
			return err
		}, false, 0, false},
		{"CampaignData.Bounces CampaignID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.CampaignData.Bounces(ctx, id, sendloop.CampaignDataParams{})
			return err
		}, false, 0, false},
		{"Exports.Unsubscriptions ListID", func(ctx context.Context, c *sendloop.Client, _ *legacy.Client, id int) error {
			_, err := c.Exports.Unsubscriptions(ctx, id)
			return err
		}, true, 0, false},
		{"legacy SubscriberAdd ListID", func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberAdd(ctx, id, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
			return err
		}, false, 0, true},
		{"legacy SubscriberAdd custom field ID", func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "192.0.2.1", CustomFields: map[int]string{id: "x"}})
			return err
		}, false, 0, true},
		{"legacy SubscriberUnsubscribe ListID", func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.SubscriberUnsubscribe(ctx, id, legacy.SubscriberUnsubscribeParams{EmailAddress: email, UnsubscriptionIP: "192.0.2.1"})
			return err
		}, false, 0, true},
		{"legacy ChartListActivity ListID", func(ctx context.Context, _ *sendloop.Client, lc *legacy.Client, id int) error {
			_, err := lc.ChartListActivity(ctx, id, legacy.ChartListActivityParams{Start: time.Now(), Days: 3})
			return err
		}, false, 0, true},
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
