package sendloop

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// BenchmarkDecodeBrowsePage decodes a 100-subscriber page with 5 custom fields into the
// typed structs and into a sync's members (two of the fields), through the same envelope
// path the client uses, against encoding/json
// into a plain struct of strings and into []map[string]any (the baselines of the same run).
func BenchmarkDecodeBrowsePage(b *testing.B) {
	page := testBrowsePage(100, 5)
	c, err := NewClient("bench-key")
	if err != nil {
		b.Fatal(err)
	}
	resp := &transport.Response{StatusCode: 200, Body: page}
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for i := 0; i < b.N; i++ {
			var subs []Subscriber
			// The path Browse takes: one pass over the answer, the records read in place.
			err := c.readAnswer(resp, answer{command: "subscriber.browse", red: c.transport.Redactor(),
				read: readBrowsePage(&subs)})
			if err != nil || len(subs) != 100 || subs[99].CustomFields[5] != "value 5/99" {
				b.Fatal(err, len(subs))
			}
		}
	})
	// The path Subscribers.Members takes: the members' values into a page read before.
	b.Run("members", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		slots := fieldSlots{ids: []int{1, 5}}
		var members []Member
		for i := 0; i < b.N; i++ {
			err := c.readAnswer(resp, answer{command: "subscriber.browse", red: c.transport.Redactor(),
				read: member("Subscribers", func(d *wire.Decoder) (err error) {
					members, err = decodeMembers(d, members[:0], slots)
					return err
				})})
			if err != nil || len(members) != 100 || members[99].Values[1] != "value 5/99" {
				b.Fatal(err, len(members))
			}
		}
	})
	// plainSubscriber is what encoding/json needs for the same page: every field a string,
	// the custom fields named one by one.
	type plainSubscriber struct {
		SubscriberID, EmailAddress, BounceType, SubscriptionStatus, SubscriptionDate string
		SubscriptionIP, UnsubscriptionDate, UnsubscriptionIP, OptInDate              string
		CustomField1, CustomField2, CustomField3, CustomField4, CustomField5         string
	}
	b.Run("struct", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for i := 0; i < b.N; i++ {
			var out struct {
				Success     bool
				Subscribers []plainSubscriber
			}
			if err := json.Unmarshal(page, &out); err != nil || len(out.Subscribers) != 100 {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for i := 0; i < b.N; i++ {
			var out struct {
				Success     bool
				Subscribers []map[string]any
			}
			if err := json.Unmarshal(page, &out); err != nil || len(out.Subscribers) != 100 {
				b.Fatal(err)
			}
		}
	})
}

func TestDecodeBrowsePage(t *testing.T) {
	t.Parallel()
	subs, err := decodeSubscribers([]byte(strings.TrimSuffix(strings.TrimPrefix(string(testBrowsePage(3, 2)), `{"Success":true,"Subscribers":`), "}")))
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 3 || subs[2].SubscriberID != 1002 || subs[2].CustomFields[2] != "value 2/2" ||
		subs[0].SubscriptionStatus != StatusSubscribed || !subs[0].UnsubscriptionDate.IsZero() ||
		subs[1].SubscriptionDate.String() != "2026-10-02" {
		t.Fatalf("decoded %+v", subs)
	}
}

func testBrowsePage(n, fields int) []byte {
	var b strings.Builder
	b.WriteString(`{"Success":true,"Subscribers":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"SubscriberID":"%d","EmailAddress":"subscriber%d@example.com","BounceType":"Not Bounced",`+
			`"SubscriptionStatus":"Subscribed","SubscriptionDate":"2026-10-%02d","SubscriptionIP":"192.0.2.%d",`+
			`"UnsubscriptionDate":"0000-00-00","UnsubscriptionIP":"0.0.0.0","OptInDate":"2026-10-%02d"`,
			1000+i, i, 1+i%28, i%250, 1+i%28)
		for f := 1; f <= fields; f++ {
			fmt.Fprintf(&b, `,"CustomField%d":"value %d\/%d"`, f, f, i)
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}
