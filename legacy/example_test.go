package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// exampleList makes a list through the v3 API: the legacy API has no command for it.
func exampleList(srv *sendlooptest.Server, optIn string) int {
	root, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	var out struct{ ListID int }
	if err := root.Call(context.Background(), "list.create", map[string]string{"Name": "Newsletter", "OptInMode": optIn}, &out); err != nil {
		panic(err)
	}
	return out.ListID
}

func ExampleClient_SubscriberAdd() {
	// Against the real service: legacy.NewClient(os.Getenv("SENDLOOP_API_KEY")). Here
	// against the embedded fake.
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	listID := exampleList(srv, "Double")

	client, err := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	params := legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.7"}
	res, err := client.SubscriberAdd(ctx, listID, params)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.SubscriberID)

	_, err = client.SubscriberAdd(ctx, listID, params)
	fmt.Println(errors.Is(err, legacy.ErrEmailExists))
	fmt.Println(err)
	// Output:
	// Waiting For Opt-In Confirmation 1
	// true
	// sendloop/legacy: Subscriber.Add: error 6: Email address already exists in the subscriber list
}

func ExampleClient_ChartListActivity() {
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	srv := sendlooptest.NewServer(nil, sendlooptest.WithClock(func() time.Time { return day }))
	defer srv.Close()
	listID := exampleList(srv, "Single")
	client, _ := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
	ctx := context.Background()

	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		_, _ = client.SubscriberAdd(ctx, listID, legacy.SubscriberAddParams{EmailAddress: email, SubscriptionIP: "203.0.113.7"})
	}
	_, _ = client.SubscriberUnsubscribe(ctx, listID, legacy.SubscriberUnsubscribeParams{EmailAddress: "bob@example.com", UnsubscriptionIP: "203.0.113.8"})

	chart, err := client.ChartListActivity(ctx, listID, legacy.ChartListActivityParams{Start: day.AddDate(0, 0, -1), Days: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	subs, unsubs := chart.Subscriptions(), chart.Unsubscriptions()
	for i, label := range chart.XAxis.Labels {
		fmt.Println(label, subs.Points[i].Value, unsubs.Points[i].Value)
	}
	fmt.Println(unsubs.Points[1].Tooltip)
	// Output:
	// 2025-03-09 0 0
	// 2025-03-10 2 1
	// 2025-03-11 0 0
	// 1 unsubscription on 2025-03-10
}

func ExampleClient_MediaUpload() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
	ctx := context.Background()

	// A 1×1 GIF; the media type is detected when MediaType is empty.
	img := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00," +
		"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
	res, err := client.MediaUpload(ctx, legacy.MediaUploadParams{Data: img, Tags: []string{"logo"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.MediaID)

	library, _ := client.MediaBrowse(ctx)
	for _, u := range library.URLs {
		fmt.Println(strings.TrimPrefix(u, srv.URL))
	}

	// Media over the client's maximum is refused before it is sent.
	_, err = client.MediaUpload(ctx, legacy.MediaUploadParams{Data: make([]byte, 2<<20), MediaType: "image/png"})
	fmt.Println(errors.Is(err, legacy.ErrMediaTooLarge))
	// Output:
	// Completed 1
	// /media/1.gif
	// true
}

func ExampleClient_Call() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	listID := exampleList(srv, "Single")
	client, _ := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
	ctx := context.Background()
	_, _ = client.SubscriberAdd(ctx, listID, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.7"})

	// Subscriber.Get has no typed method: Call returns the answer's struct.
	st, err := client.Call(ctx, "Subscriber.Get", map[string]string{"ListID": fmt.Sprint(listID), "EmailAddress": "ann@example.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	id, _ := st.Get("SubscriberID")
	n, _ := id.Int()
	fmt.Println(n, st.Text("SubscriptionStatus"), st.Text("SubscriptionIP"))
	// Output: 1 Subscribed 203.0.113.7
}

func ExampleWithInputForm() {
	srv := sendlooptest.NewServer(nil, sendlooptest.WithAPIKey("example-key"))
	defer srv.Close()
	client, _ := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL), legacy.WithInputForm(legacy.MessageForm))

	if _, err := client.MediaBrowse(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	req := srv.LastRequest()
	fmt.Println(req.Method, req.Path)
	fmt.Println(req.Form.Get("FormValue_Message"))
	// Output:
	// POST /api/index.php
	// <?xml version="1.0" encoding="UTF-8"?><Entry><Message><APIKey>example-key</APIKey><Command>Media.Browse</Command></Message></Entry>
}

func ExampleDecode() {
	body := []byte(`<?xml version="1.0"?>
<methodResponse><params><param><value><struct>
  <member><name>Status</name><value>Subscribed</value></member>
  <member><name>SubscriberID</name><value><int>42</int></value></member>
  <member><name>Joined</name><value><dateTime.iso8601>20250310T14:08:55</dateTime.iso8601></value></member>
</struct></value></param></params></methodResponse>`)
	v, err := legacy.Decode(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	st := v.Struct()
	id, _ := st.Get("SubscriberID")
	joined, _ := st.Get("Joined")
	at, _ := joined.Time()
	fmt.Println(st.Text("Status"), id.Kind(), id.Interface(), at.Format(time.RFC3339))
	// Output: Subscribed int 42 2025-03-10T14:08:55Z
}

func ExampleParseChart() {
	chart, err := legacy.ParseChart([]byte(`<data>
  <tooltip>List activity</tooltip>
  <xaxis><xaxislabel>Mon</xaxislabel><xaxislabel>Tue</xaxislabel></xaxis>
  <yaxis>Subscribers</yaxis>
  <series>
    <set label="Subscription"><serie><value>4</value><tooltip>4 on Mon</tooltip></serie><serie><value>1</value><tooltip>1 on Tue</tooltip></serie></set>
    <set label="Unsubscription"><serie><value>0</value><tooltip>0 on Mon</tooltip></serie><serie><value>2</value><tooltip>2 on Tue</tooltip></serie></set>
  </series>
</data>`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(chart.Tooltip, chart.XAxis.Labels, chart.YAxis.Title)
	fmt.Println(chart.Subscriptions().Values(), chart.Unsubscriptions().Values())
	// Output:
	// List activity [Mon Tue] Subscribers
	// [4 1] [0 2]
}
