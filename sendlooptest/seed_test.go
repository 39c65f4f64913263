package sendlooptest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSeedFaultsNameTheirPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want []string // each a whole fault's text
	}{
		{"empty", ``, []string{"seed: not a JSON document: empty"}},
		{"syntax", "{\n\"lists\": [\n}", []string{"seed: not a JSON document: line 3: invalid character '}' looking for beginning of value"}},
		{"two documents", `{} {}`, []string{"seed: more than one JSON value"}},
		{"not an object", `[]`, []string{"seed: want an object, not an array"}},
		{"unknown top member", `{"listz": []}`, []string{"seed: listz: unknown member; known here: lists, suppressions"}},
		{"member in another case", `{"Lists": []}`, []string{"seed: Lists: unknown member; known here: lists, suppressions"}},
		{"unknown subscriber member", `{"lists": [{"name": "A"}, {"name": "B", "subscribers": [{"email": "a@example.com"}, {"email": "b@example.com", "state": "x"}]}]}`,
			[]string{"seed: lists[1].subscribers[1].state: unknown member; known here: email, status, bounce_type, fields"}},
		{"wrong types", `{"lists": [{"id": "7", "name": 3, "custom_fields": {}, "subscribers": [{"fields": {"Plan": 1}}]}]}`, []string{
			"seed: lists[0].custom_fields: want an array, not an object",
			"seed: lists[0].id: want a number, not a string",
			"seed: lists[0].name: want a string, not a number (3)",
			`seed: lists[0].subscribers[0].fields["Plan"]: want a string, not a number (1)`}},
		{"fractional ID", `{"lists": [{"id": 1.5, "name": "A"}]}`, []string{"seed: lists[0].id: want a whole number from -2147483648 to 2147483647, not 1.5"}},
		{"unknown status", `{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com"}, {"email": "b@example.com"}, {"email": "c@example.com"}, {"email": "d@example.com", "status": "Foo"}]}]}`,
			[]string{`seed: lists[0].subscribers[3].status: unknown status "Foo": Subscribed, Confirmation Pending or Unsubscribed`}},
		{"unknown bounce type", `{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com", "bounce_type": "Medium"}]}]}`,
			[]string{`seed: lists[0].subscribers[0].bounce_type: unknown bounce type "Medium": Not Bounced, Hard or Soft`}},
		{"list without a name", `{"lists": [{"name": " "}]}`, []string{"seed: lists[0].name: a list needs a name"}},
		{"unknown opt-in mode", `{"lists": [{"name": "A", "opt_in_mode": "Triple"}]}`, []string{`seed: lists[0].opt_in_mode: unknown opt-in mode "Triple": Single or Double`}},
		{"list ID twice", `{"lists": [{"id": 2, "name": "A"}, {"id": 2, "name": "B"}]}`, []string{"seed: lists[1].id: ID 2 is taken by lists[0].id"}},
		{"negative ID", `{"lists": [{"id": -1, "name": "A"}]}`, []string{"seed: lists[0].id: ID -1 is not an ID: leave it out (or 0) to let the fake choose, or give 1 to 2147483647"}},
		{"field ID across lists", `{"lists": [{"name": "A", "custom_fields": [{"id": 4, "name": "X"}]}, {"name": "B", "custom_fields": [{"id": 4, "name": "Y"}]}]}`,
			[]string{"seed: lists[1].custom_fields[0].id: ID 4 is taken by lists[0].custom_fields[0].id"}},
		{"field name twice", `{"lists": [{"name": "A", "custom_fields": [{"name": "Plan"}, {"name": "plan"}]}]}`,
			[]string{`seed: lists[0].custom_fields[1].name: the list has another custom field named "plan"`}},
		{"field without a name", `{"lists": [{"name": "A", "custom_fields": [{"id": 1}]}]}`, []string{"seed: lists[0].custom_fields[0].name: a custom field needs a name"}},
		{"segment of an unknown field", `{"lists": [{"name": "A", "segments": [{"name": "S", "field": "Plan"}]}]}`,
			[]string{`seed: lists[0].segments[0].field: no custom field "Plan" in this list`}},
		{"value of an unknown field", `{"lists": [{"name": "A", "custom_fields": [{"id": 2, "name": "Plan"}], "subscribers": [{"email": "a@example.com", "fields": {"Company": "x", "CustomField9": "y"}}]}]}`, []string{
			`seed: lists[0].subscribers[0].fields["Company"]: no custom field "Company" in this list`,
			`seed: lists[0].subscribers[0].fields["CustomField9"]: no custom field "CustomField9" in this list`}},
		{"field given twice", `{"lists": [{"name": "A", "custom_fields": [{"id": 2, "name": "Plan"}], "subscribers": [{"email": "a@example.com", "fields": {"Plan": "x", "CustomField2": "y"}}]}]}`,
			[]string{`seed: lists[0].subscribers[0].fields["Plan"]: custom field 2 is given twice`}},
		{"bad address", `{"lists": [{"name": "A", "subscribers": [{"email": "ann@localhost"}, {}]}]}`, []string{
			`seed: lists[0].subscribers[0].email: "ann@localhost" is not an address the service accepts`,
			"seed: lists[0].subscribers[1].email: a subscriber needs an address"}},
		{"address twice", `{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com"}, {"email": "A@Example.com"}]}]}`,
			[]string{"seed: lists[0].subscribers[1].email: A@Example.com is already subscribers[0] of this list"}},
		{"suppressions", `{"lists": [{"name": "A", "suppressions": [{"email": "x"}]}], "suppressions": [{"type": "Manual"}]}`, []string{
			`seed: lists[0].suppressions[0].email: "x" is not an address the service accepts`,
			"seed: suppressions[0].email: a suppression needs an address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			seed, err := sendlooptest.ReadSeed(strings.NewReader(tt.json))
			if err == nil {
				err = srv.LoadSeed(seed)
			}
			require.Error(t, err)
			assert.Equal(t, strings.Join(tt.want, "\n"), err.Error())
			var seedErr *sendlooptest.SeedError
			assert.True(t, errors.As(err, &seedErr), "a *SeedError")
			assert.Zero(t, srv.ListCount(), "nothing loaded")
		})
	}
}

func TestSeedIDsAvoidTheServersData(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()
	first, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Existing", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)

	err = srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{ID: first, Name: "Clash"}}})
	require.EqualError(t, err, "seed: lists[0].id: ID 1 is taken by list 1 of the server")

	huge := int64(1) << 31 // beyond the service's IDs (int32)
	err = srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{Name: "Huge", CustomFields: []sendlooptest.SeedCustomField{{ID: int(huge), Name: "F"}}}}})
	require.ErrorContains(t, err, "seed: lists[0].custom_fields[0].id: ID ")
	require.ErrorContains(t, err, " is not an ID")

	require.NoError(t, srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{Name: "Chosen"}, {ID: 2, Name: "Given"}}}))
	next, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "After", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	lists, err := client.Lists.List(ctx)
	require.NoError(t, err)
	names := map[int]string{}
	for _, l := range lists {
		names[l.ListID] = l.Name
	}
	assert.Equal(t, map[int]string{1: "Existing", 2: "Given", 3: "Chosen", 4: "After"}, names)
	assert.Equal(t, 4, next)
}

// TestSeedExampleReadsBackThroughTheSDK loads the documented example and reads every part
// of it with the SDK.
func TestSeedExampleReadsBackThroughTheSDK(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/seed-example.json")
	require.NoError(t, err)
	defer f.Close()
	seed, err := sendlooptest.ReadSeed(f)
	require.NoError(t, err)
	srv := sendlooptest.NewServer(t)
	require.NoError(t, srv.LoadSeed(seed))
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()

	list, err := client.Lists.Get(ctx, 7, sendloop.ListGetParams{CustomFields: true})
	require.NoError(t, err)
	assert.Equal(t, "Customers", list.Name)
	assert.Equal(t, sendloop.OptInDouble, list.OptInMode)
	fields := map[string]int{}
	for _, f := range list.CustomFields {
		fields[f.FieldName] = f.CustomFieldID
	}
	assert.Equal(t, map[string]int{"Company": 3, "Plan": 1, "Joined": 12}, fields, "given IDs kept, the free one chosen")

	want := []struct {
		email  string
		status sendloop.SubscriptionStatus
		bounce sendloop.BounceType
		fields sendloop.CustomFields
	}{
		{"ann@example.com", sendloop.StatusSubscribed, sendloop.BounceNone, sendloop.CustomFields{3: "Acme", 1: "pro", 12: "2024-03-01"}},
		{"bob@example.com", sendloop.StatusConfirmationPending, sendloop.BounceNone, sendloop.CustomFields{3: "Globex"}},
		{"cy@example.com", sendloop.StatusUnsubscribed, sendloop.BounceNone, sendloop.CustomFields{1: "free"}},
		{"dee@example.com", sendloop.StatusSubscribed, sendloop.BounceHard, sendloop.CustomFields{1: "pro"}},
	}
	page, err := client.Subscribers.Browse(ctx, 7, sendloop.SubscriberBrowseParams{})
	require.NoError(t, err)
	require.Len(t, page, len(want))
	for i, w := range want {
		got := page[i]
		assert.Equal(t, w.email, got.EmailAddress)
		assert.Equal(t, w.status, got.SubscriptionStatus, w.email)
		assert.Equal(t, w.bounce, got.BounceType, w.email)
		for id, v := range w.fields {
			assert.Equal(t, v, got.CustomFields[id], "%s field %d", w.email, id)
		}
		assert.Equal(t, "0.0.0.0", got.SubscriptionIP)
		assert.Equal(t, w.status == sendloop.StatusUnsubscribed, !got.UnsubscriptionDate.IsZero(), w.email)
	}

	pro, err := client.Subscribers.Browse(ctx, 7, sendloop.SubscriberBrowseParams{SegmentID: 5})
	require.NoError(t, err)
	var proEmails []string
	for _, s := range pro {
		proEmails = append(proEmails, s.EmailAddress)
	}
	assert.Equal(t, []string{"ann@example.com", "dee@example.com"}, proEmails)

	lists, err := client.Lists.List(ctx)
	require.NoError(t, err)
	require.Len(t, lists, 2)
	assert.Equal(t, "Newsletter", lists[0].Name)
	assert.Equal(t, 1, lists[0].ListID, "the smallest ID no entry claims")

	global, err := client.Suppression.Get(ctx, "complained@example.com")
	require.NoError(t, err)
	require.Len(t, global, 1)
	assert.Equal(t, 0, global[0].ListID)
	assert.Equal(t, "FBL Report", global[0].Type)
	local, err := client.Suppression.List(ctx, 7)
	require.NoError(t, err)
	require.Len(t, local, 1)
	assert.Equal(t, "left-customers@example.com", local[0].EmailAddress)
	assert.Equal(t, "Manual", local[0].Type)

	// The seeded state behaves as the service's: a suppressed address may not join, and
	// the pending member is confirmed as any other.
	_, err = client.Subscribers.Subscribe(ctx, 7, sendloop.SubscriberSubscribeParams{EmailAddress: "left-customers@example.com", SubscriptionIP: "192.0.2.1"})
	require.ErrorIs(t, err, sendloop.ErrInvalidEmail)
	require.NoError(t, srv.Confirm(7, "bob@example.com"))
	assert.Empty(t, srv.Webhooks())
}

func FuzzReadSeed(f *testing.F) {
	example, err := os.ReadFile("testdata/seed-example.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	f.Add(`{"lists": [{"id": 2147483647, "name": "A", "custom_fields": [{"name": "F"}], "segments": [{"name": "S", "field": "f"}]}]}`)
	f.Add(`{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com", "fields": {"CustomField1": ""}}]}], "suppressions": null}`)
	f.Add(`{"lists": null}`)
	f.Add(`[1, {"x": true}]`)
	f.Fuzz(func(t *testing.T, doc string) {
		seed, err := sendlooptest.ReadSeed(strings.NewReader(doc))
		if err != nil {
			return
		}
		srv := sendlooptest.NewServer(nil)
		defer srv.Close()
		if err := srv.LoadSeed(seed); err != nil && srv.ListCount() != 0 {
			t.Fatalf("a refused seed loaded lists: %v", err)
		}
	})
}
