package sendloop

import (
	"fmt"
	"testing"

	"github.com/go-sendloop/sendloop/internal/wire"
)

// membersFieldIDs are the fields the member decoder is asked for in its tests: one twice,
// one no record carries.
var membersFieldIDs = []int{2, 1, 2, 9}

// decodeBoth decodes a page (a JSON array) as Subscriber records and as members, the
// members twice over the same storage (a page read before), and fails the test when the
// two decoders disagree: on the error, or on what the members keep.
func decodeBoth(t *testing.T, page []byte) {
	var subs []Subscriber
	subsErr := wire.Decode(page, func(d *wire.Decoder) (err error) {
		subs, err = appendRecords(d, subs)
		return err
	})
	var members []Member
	for round := range 2 {
		membersErr := wire.Decode(page, func(d *wire.Decoder) (err error) {
			members, err = decodeMembers(d, members[:0], fieldSlots{ids: membersFieldIDs})
			return err
		})
		if fmt.Sprint(subsErr) != fmt.Sprint(membersErr) {
			t.Fatalf("round %d: Subscriber's decoder says %v, the members' %v", round, subsErr, membersErr)
		}
		if subsErr != nil {
			return
		}
		if len(members) != len(subs) {
			t.Fatalf("round %d: %d members, %d subscribers", round, len(members), len(subs))
		}
		for i, s := range subs {
			m := members[i]
			if m.SubscriberID != s.SubscriberID || m.EmailAddress != s.EmailAddress || m.SubscriptionStatus != s.SubscriptionStatus {
				t.Fatalf("round %d: member %d is %d %q %q, the subscriber %d %q %q", round, i,
					m.SubscriberID, m.EmailAddress, m.SubscriptionStatus, s.SubscriberID, s.EmailAddress, s.SubscriptionStatus)
			}
			for j, id := range membersFieldIDs {
				if m.Values[j] != s.CustomFields[id] {
					t.Fatalf("round %d: member %d field %d is %q, the subscriber's %q", round, i, id, m.Values[j], s.CustomFields[id])
				}
			}
		}
		// The second round reads another page into the first one's storage.
		if round == 0 && len(members) > 0 {
			members[0].Values[0] = "left over"
			members[0].EmailAddress = "left@over"
		}
	}
}

// membersSeeds are pages that take each branch of the member decoder, good and bad.
var membersSeeds = []string{
	string(testBrowsePage(120, 3)[len(`{"Success":true,"Subscribers":`) : len(testBrowsePage(120, 3))-1]),
	`[]`, `null`, `""`, `{}`,
	`{"0":{"SubscriberID":"7","EmailAddress":"a@example.com"}}`,
	`[{"SubscriberID":1,"EmailAddress":"A\u00e9@example.com","SubscriptionStatus":"Unsubscribed","CustomField2":"x","CustomField2":"y"}]`,
	`[{"SubscriberID":"1","CustomFields":{"CustomField1":"one","2":"two","x":"skip"},"CustomField1":"later"}]`,
	`[{"SubscriberID":"1","CustomFields":{"1":{"a":1}}}]`,
	`[{"SubscriberID":"1","CustomFields":[]}]`,
	`[{"SubscriberID":"1","CustomField7":{"a":1}}]`,
	`[{"SubscriberID":"1","CustomField1":["a"]}]`,
	`[{"SubscriberID":"1","CustomField9":7,"CustomField2":null,"CustomField1":true}]`,
	`[{"SubscriberID":"x"}]`,
	`[{"SubscriberID":"1","SubscriptionDate":"2026-13-45"}]`,
	`[{"SubscriberID":"1","OptInDate":"0000-00-00","UnsubscriptionDate":""}]`,
	`[{"SubscriberID":"1","SubscriptionIP":{"a":1}}]`,
	`[{"SubscriberID":"1","BounceType":"Hard","UnsubscriptionIP":"0.0.0.0"}]`,
	`[{"SubscriberID":"1","Score":"12.5%","ScoreLastUpdate":"2026-10-01 10:00:00"}]`,
	`[{"SubscriberID":"1","Score":"abc"}]`,
	`[{"SubscriberID":"1","ScoreLastUpdate":"yesterday"}]`,
	`[{"SubscriberID":"1","Unknown":{"deep":[1,2]},"Other":"text","Bad":"\ud800"}]`,
	`[{"SubscriberID":"1","EmailAddress":"\xff@example.com"}]`,
	`[{"SubscriberID":"1","EmailAddress":"x"`,
	`[{"SubscriberID":"1"},{"SubscriberID":"2","EmailAddress":5}]`,
	`[1]`,
}

func TestDecodeMembersAgreesWithSubscriber(t *testing.T) {
	t.Parallel()
	for i, page := range membersSeeds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			decodeBoth(t, []byte(page))
		})
	}
}

// FuzzDecodeMembers checks that the members' decoder keeps what Subscriber's does and fails
// where it fails.
func FuzzDecodeMembers(f *testing.F) {
	for _, page := range membersSeeds {
		f.Add([]byte(page))
	}
	f.Fuzz(func(t *testing.T, page []byte) { decodeBoth(t, page) })
}
